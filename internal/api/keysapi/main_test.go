package keysapi_test

import (
	"testing"

	"github.com/sourcebase/sourcebase/internal/api/companiesapi"
	"github.com/sourcebase/sourcebase/internal/api/keysapi"
	"github.com/sourcebase/sourcebase/internal/api/resourcesapi"
	"github.com/sourcebase/sourcebase/internal/api/workflowsapi"
	"github.com/sourcebase/sourcebase/internal/dev/apitest"
)

// TestMain serves this feature's operations alone (apitest.Features), with
// those whose records its tests make (the records, and the workflows whose
// runs and triggers the Idempotency-Key and rate limit tests call), so
// that this test binary links no other feature's handlers.
func TestMain(m *testing.M) {
	apitest.Main(m, apitest.Features(companiesapi.Feature, keysapi.Feature, resourcesapi.Feature, workflowsapi.Feature))
}
