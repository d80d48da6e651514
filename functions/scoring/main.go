// Command scoring is the Lambda function of the scoring resource group.
package main

import (
	"github.com/sourcebase/sourcebase/internal/app"
	"github.com/sourcebase/sourcebase/internal/lambdas"
)

func main() { app.ServeLambda(lambdas.Scoring) }
