package workflowsapi_test

import (
	"testing"

	"github.com/sourcebase/sourcebase/internal/api/companiesapi"
	"github.com/sourcebase/sourcebase/internal/api/resourcesapi"
	"github.com/sourcebase/sourcebase/internal/api/workflowsapi"
	"github.com/sourcebase/sourcebase/internal/dev/apitest"
)

// TestMain serves this feature's operations alone (apitest.Features), with
// those whose records its tests make, so that this test binary links no
// other feature's handlers.
func TestMain(m *testing.M) {
	apitest.Main(m, apitest.Features(companiesapi.Feature, resourcesapi.Feature, workflowsapi.Feature))
}
