// Command companies is the Lambda function of the companies resource group.
package main

import (
	"github.com/sourcebase/sourcebase/internal/api"
	"github.com/sourcebase/sourcebase/internal/lambdas"
)

func main() { api.ServeLambda(lambdas.Companies) }
