// Command data is the Lambda function of the data resource group:
// enrichment values, metric series, and bulk imports and exports (their
// files in S3: package jobfns).
package main

import (
	"github.com/sourcebase/sourcebase/internal/lambdas"
	"github.com/sourcebase/sourcebase/internal/serve"
	"github.com/sourcebase/sourcebase/internal/serve/jobfns"
)

func main() { serve.Lambda(lambdas.Data, jobfns.Option) }
