// Command companies is the Lambda function of the companies resource group.
package main

import (
	"github.com/sourcebase/sourcebase/internal/app"
	"github.com/sourcebase/sourcebase/internal/fn"
)

func main() { app.ServeLambda(fn.Companies) }
