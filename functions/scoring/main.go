// Command scoring is the Lambda function of the scoring resource group.
package main

import (
	"github.com/sourcebase/sourcebase/internal/lambdas"
	"github.com/sourcebase/sourcebase/internal/service"
)

func main() { service.ServeLambda(lambdas.Scoring) }
