// Command documents is the Lambda function of the documents resource group.
package main

import (
	"github.com/sourcebase/sourcebase/internal/app"
	"github.com/sourcebase/sourcebase/internal/fn"
)

func main() { app.ServeLambda(fn.Documents) }
