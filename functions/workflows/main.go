// Command workflows is the Lambda function of workflows and workflow runs.
package main

import (
	"github.com/sourcebase/sourcebase/internal/app"
	"github.com/sourcebase/sourcebase/internal/fn"
)

func main() { app.ServeLambda(fn.Workflows) }
