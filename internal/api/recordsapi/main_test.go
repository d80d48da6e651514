package recordsapi_test

import (
	"testing"

	"github.com/sourcebase/sourcebase/internal/api/companiesapi"
	"github.com/sourcebase/sourcebase/internal/api/eventsapi"
	"github.com/sourcebase/sourcebase/internal/api/jobsapi"
	"github.com/sourcebase/sourcebase/internal/api/keysapi"
	"github.com/sourcebase/sourcebase/internal/api/listsapi"
	"github.com/sourcebase/sourcebase/internal/api/resourcesapi"
	"github.com/sourcebase/sourcebase/internal/api/workflowsapi"
	"github.com/sourcebase/sourcebase/internal/dev/apitest"
)

// TestMain serves this feature's operations alone (apitest.Features), with
// those its tests call beside the records: the workflows whose runs and
// workflows they list and stamp, the lists that hold records, the keys they
// read, and the events, imports and exports whose requests the request-shape
// tests send; the bulk jobs move the records' kinds (jobsapi.Targets).
// This test binary links neither the MCP server nor the whole service.
func TestMain(m *testing.M) {
	s := apitest.Features(companiesapi.Feature, resourcesapi.Feature, workflowsapi.Feature, listsapi.Feature, keysapi.Feature, eventsapi.Feature, jobsapi.Feature)
	s.JobTargets = jobsapi.Targets
	apitest.Main(m, s)
}
