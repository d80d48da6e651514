// Command workflows is the Lambda function of workflows and workflow runs.
package main

import (
	"github.com/sourcebase/sourcebase/internal/lambdas"
	"github.com/sourcebase/sourcebase/internal/serve"
)

func main() { serve.Lambda(lambdas.Workflows) }
