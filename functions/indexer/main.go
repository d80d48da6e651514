// Command indexer is the Lambda function that keeps the OpenSearch
// indexes up to date from the table's DynamoDB stream.
package main

import (
	"github.com/sourcebase/sourcebase/internal/embed/bedrock"
	"github.com/sourcebase/sourcebase/internal/search/opensearch"
	"github.com/sourcebase/sourcebase/internal/service"
)

func main() { service.ServeIndexer(opensearch.NewStreamHandler, bedrock.New) }
