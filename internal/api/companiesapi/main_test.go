package companiesapi_test

import (
	"testing"

	"github.com/sourcebase/sourcebase/internal/api/companiesapi"
	"github.com/sourcebase/sourcebase/internal/api/resourcesapi"
	"github.com/sourcebase/sourcebase/internal/api/workflowsapi"
	"github.com/sourcebase/sourcebase/internal/dev/apitest"
)

// TestMain serves the companies alone (apitest.Features), with the
// declared resources and the workflows whose records the tests make
// beside them. This test binary links neither the MCP server nor the
// whole service.
func TestMain(m *testing.M) {
	apitest.Main(m, apitest.Features(companiesapi.Feature, resourcesapi.Feature, workflowsapi.Feature))
}
