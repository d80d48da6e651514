// Command workflows is the Lambda function of workflows and workflow runs.
package main

import (
	"github.com/sourcebase/sourcebase/internal/app"
	"github.com/sourcebase/sourcebase/internal/routes"
)

func main() { app.ServeLambda(routes.Workflows) }
