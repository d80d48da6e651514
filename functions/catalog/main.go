// Command catalog is the Lambda function of the catalog resource group.
package main

import (
	"github.com/sourcebase/sourcebase/internal/app"
	"github.com/sourcebase/sourcebase/internal/fn"
)

func main() { app.ServeLambda(fn.Catalog) }
