//go:build sourcebase_opensearch

package main

import (
	"github.com/sourcebase/sourcebase/internal/search"
	"github.com/sourcebase/sourcebase/internal/search/opensearch"
	"github.com/sourcebase/sourcebase/internal/service"
	"github.com/sourcebase/sourcebase/internal/store"
)

// The OpenSearch build (-tags sourcebase_opensearch): the OpenSearch
// engine only.
var (
	embeddedEngine   func(*store.Store) search.Engine // not in this build
	openSearchEngine service.OpenSearchEngine         = opensearch.NewEngine
)
