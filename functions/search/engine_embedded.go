//go:build !sourcebase_opensearch

package main

import (
	"github.com/sourcebase/sourcebase/internal/app"
	"github.com/sourcebase/sourcebase/internal/search/embedded"
)

// The default build: the embedded engine only.
var (
	embeddedEngine   = embedded.NewEngine
	openSearchEngine app.OpenSearchEngine // not in this build
)
