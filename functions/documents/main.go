// Command documents is the Lambda function of the documents resource group.
package main

import (
	"github.com/sourcebase/sourcebase/internal/app"
	"github.com/sourcebase/sourcebase/internal/lambdas"
)

func main() { app.ServeLambda(lambdas.Documents) }
