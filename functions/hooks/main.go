// Command hooks is the Lambda function of the change history
// (/v1/events) and the outbound webhook endpoints.
package main

import (
	"github.com/sourcebase/sourcebase/internal/lambdas"
	"github.com/sourcebase/sourcebase/internal/serve"
	"github.com/sourcebase/sourcebase/internal/serve/eventfns"
)

func main() { serve.Deps(lambdas.Hooks, eventfns.HooksDeps()) }
