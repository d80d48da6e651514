// Command workflows is the Lambda function of workflows and workflow runs.
package main

import (
	"github.com/sourcebase/sourcebase/internal/api"
	"github.com/sourcebase/sourcebase/internal/lambdas"
)

func main() { api.ServeLambda(lambdas.Workflows) }
