// Command documents is the Lambda function of the documents resource group.
package main

import (
	"github.com/sourcebase/sourcebase/internal/api"
	"github.com/sourcebase/sourcebase/internal/lambdas"
)

func main() { api.ServeLambda(lambdas.Documents) }
