// Command search is the Lambda function of the search routes, the only
// function that carries the search engine.
package main

import (
	"github.com/sourcebase/sourcebase/internal/app"
	"github.com/sourcebase/sourcebase/internal/search/embedded"
)

func main() { app.ServeSearch(embedded.NewEngine) }
