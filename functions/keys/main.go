// Command keys is the Lambda function of the API key management group (and
// the health check).
package main

import (
	"github.com/sourcebase/sourcebase/internal/app"
	"github.com/sourcebase/sourcebase/internal/lambdas"
)

func main() { app.ServeLambda(lambdas.Keys) }
