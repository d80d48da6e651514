// Command scoring is the Lambda function of the scoring resource group.
package main

import (
	"github.com/sourcebase/sourcebase/internal/api"
	"github.com/sourcebase/sourcebase/internal/lambdas"
)

func main() { api.ServeLambda(lambdas.Scoring) }
