// Command data is the Lambda function of the data resource group:
// enrichment values and metric series.
package main

import (
	"github.com/sourcebase/sourcebase/internal/app"
	"github.com/sourcebase/sourcebase/internal/fn"
)

func main() { app.ServeLambda(fn.Data) }
