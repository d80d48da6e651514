// Command data is the Lambda function of the data resource group:
// enrichment values, metric series, and bulk imports and exports (their
// files in S3: package jobfns).
package main

import (
	"github.com/sourcebase/sourcebase/internal/app"
	"github.com/sourcebase/sourcebase/internal/app/jobfns"
	"github.com/sourcebase/sourcebase/internal/lambdas"
)

func main() { app.ServeLambda(lambdas.Data, jobfns.Option) }
