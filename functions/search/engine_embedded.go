//go:build !sourcebase_opensearch

package main

import (
	"github.com/sourcebase/sourcebase/internal/search/embedded"
	"github.com/sourcebase/sourcebase/internal/service"
)

// The default build: the embedded engine only.
var (
	embeddedEngine   = embedded.NewEngine
	openSearchEngine service.OpenSearchEngine // not in this build
)
