// Command crm is the Lambda function of the crm resource group.
package main

import (
	"github.com/sourcebase/sourcebase/internal/api"
	"github.com/sourcebase/sourcebase/internal/lambdas"
)

func main() { api.ServeLambda(lambdas.CRM) }
