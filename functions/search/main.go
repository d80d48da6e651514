// Command search is the Lambda function of the search routes, the only
// function that carries the search engines (SEARCH_ENGINE chooses one).
package main

import (
	"github.com/sourcebase/sourcebase/internal/app"
	"github.com/sourcebase/sourcebase/internal/routes"
	"github.com/sourcebase/sourcebase/internal/search/embedded"
	"github.com/sourcebase/sourcebase/internal/search/opensearch"
)

func main() { app.ServeSearch(routes.Search, embedded.NewEngine, opensearch.NewEngine) }
