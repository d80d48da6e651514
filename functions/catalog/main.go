// Command catalog is the Lambda function of the catalog resource group.
package main

import (
	"github.com/sourcebase/sourcebase/internal/lambdas"
	"github.com/sourcebase/sourcebase/internal/service"
)

func main() { service.ServeLambda(lambdas.Catalog) }
