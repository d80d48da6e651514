// Command search is the Lambda function of the search routes, over the
// engine SEARCH_ENGINE names. It is built once per engine
// (routes.Function.EngineBuilds): by default with the embedded engine
// (bleve) only, and with the sourcebase_opensearch tag with the OpenSearch
// engine only, so that neither carries the other's libraries.
package main

import (
	"github.com/sourcebase/sourcebase/internal/embed/bedrock"
	"github.com/sourcebase/sourcebase/internal/serve"
)

func main() { serve.Search(embeddedEngine, openSearchEngine, bedrock.New) }
