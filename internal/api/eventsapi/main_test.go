package eventsapi_test

import (
	"testing"

	"github.com/sourcebase/sourcebase/internal/api/companiesapi"
	"github.com/sourcebase/sourcebase/internal/api/eventsapi"
	"github.com/sourcebase/sourcebase/internal/api/jobsapi"
	"github.com/sourcebase/sourcebase/internal/api/keysapi"
	"github.com/sourcebase/sourcebase/internal/api/resourcesapi"
	"github.com/sourcebase/sourcebase/internal/api/workflowsapi"
	"github.com/sourcebase/sourcebase/internal/dev/apitest"
)

// TestMain serves this feature's operations alone (apitest.Features), with
// those whose records its tests make, so that this test binary links no
// other feature's handlers; imports move the records' kinds
// (jobsapi.Targets).
func TestMain(m *testing.M) {
	s := apitest.Features(companiesapi.Feature, eventsapi.Feature, jobsapi.Feature, keysapi.Feature, resourcesapi.Feature, workflowsapi.Feature)
	s.JobTargets = jobsapi.Targets
	apitest.Main(m, s)
}
