// Command keys is the Lambda function of the API key management group (and
// the health check).
package main

import (
	"github.com/sourcebase/sourcebase/internal/lambdas"
	"github.com/sourcebase/sourcebase/internal/serve"
)

func main() { serve.Lambda(lambdas.Keys) }
