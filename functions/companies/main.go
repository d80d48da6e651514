// Command companies is the Lambda function of the companies resource group.
package main

import (
	"github.com/sourcebase/sourcebase/internal/app"
	"github.com/sourcebase/sourcebase/internal/lambdas"
)

func main() { app.ServeLambda(lambdas.Companies) }
