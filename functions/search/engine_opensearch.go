//go:build sourcebase_opensearch

package main

import (
	"github.com/sourcebase/sourcebase/internal/search/opensearch"
	"github.com/sourcebase/sourcebase/internal/service"
)

// The OpenSearch build (-tags sourcebase_opensearch): the OpenSearch
// engine only.
var (
	embeddedEngine   service.EmbeddedEngine   // not in this build
	openSearchEngine service.OpenSearchEngine = opensearch.NewEngine
)
