// Command webhook receives workflow webhooks behind a Lambda function URL
// (payload v2, the same adapter as API Gateway).
package main

import (
	"github.com/sourcebase/sourcebase/internal/lambdas"
	"github.com/sourcebase/sourcebase/internal/serve"
)

func main() { serve.Lambda(lambdas.Webhook) }
