// Command crm is the Lambda function of the crm resource group.
package main

import (
	"github.com/sourcebase/sourcebase/internal/lambdas"
	"github.com/sourcebase/sourcebase/internal/serve"
)

func main() { serve.Lambda(lambdas.CRM) }
