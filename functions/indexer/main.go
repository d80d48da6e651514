// Command indexer is the Lambda function that keeps the OpenSearch
// indexes up to date from the table's DynamoDB stream.
package main

import (
	"github.com/sourcebase/sourcebase/internal/app"
	"github.com/sourcebase/sourcebase/internal/search/opensearch"
)

func main() { app.ServeIndexer(opensearch.NewStreamHandler) }
