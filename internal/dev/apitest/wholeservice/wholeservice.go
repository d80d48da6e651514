// Package wholeservice is what the tests of the whole service serve
// (apitest.Serve): every feature of the registry (api.Handler) and the
// bulk jobs' targets. A test of one feature serves apitest.Features of its
// own instead, so that its binary links no other feature.
package wholeservice

import (
	"net/http"

	"github.com/sourcebase/sourcebase/internal/api"
	"github.com/sourcebase/sourcebase/internal/api/jobsapi"
	"github.com/sourcebase/sourcebase/internal/dev/apitest"
	"github.com/sourcebase/sourcebase/internal/service"
)

// Service is every feature of the service.
var Service = apitest.Service{Handler: func(d service.Deps) http.Handler { return api.Handler(d) }, JobTargets: jobsapi.Targets}
