// Package logcheck reads the logs the service wrote during a test run (one
// JSON line a record: the request lines and the rest): every line is JSON,
// no line holds anything shaped like a secret the service makes, and every
// request line names its request and route. The HTTP suites keep their
// logs (apitest), and make test checks them all together (package
// logcheck/cmd) once the suites are over.
package logcheck

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
)

// EnvDir names the directory the HTTP suites keep their logs in, one file
// a test binary (make test sets it); unset, each keeps its log in a
// temporary file, checked and removed when its tests are over.
const EnvDir = "SOURCEBASE_TEST_LOGS"

// secretLike are what the service's secrets look like: API keys' (sk_…)
// and webhook signing secrets (whsec_…).
var secretLike = regexp.MustCompile(`sk_[A-Za-z0-9_-]{20,}|whsec_[A-Za-z0-9+/=_-]{16,}`)

// Result is what a log held.
type Result struct {
	Lines, Requests int
}

// Add is r and o together.
func (r Result) Add(o Result) Result { return Result{r.Lines + o.Lines, r.Requests + o.Requests} }

// Scan reads a log: an error names the first line that is not JSON, holds
// a secret, or is a request line without its request id or route.
func Scan(log io.Reader) (Result, error) {
	var res Result
	sc := bufio.NewScanner(log)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		res.Lines++
		line := sc.Bytes()
		if loc := secretLike.FindIndex(line); loc != nil {
			return res, fmt.Errorf("line %d holds a secret (%s…): %.200s", res.Lines, line[loc[0]:loc[0]+6], line)
		}
		var rec struct {
			Msg       string `json:"msg"`
			RequestID string `json:"requestId"`
			Route     string `json:"Route"`
		}
		if err := json.Unmarshal(line, &rec); err != nil {
			return res, fmt.Errorf("line %d is not JSON: %.200s", res.Lines, line)
		}
		if rec.Msg == "request" {
			res.Requests++
			if rec.RequestID == "" || rec.Route == "" {
				return res, fmt.Errorf("line %d, a request's, lacks its id or route: %.300s", res.Lines, line)
			}
		}
	}
	return res, sc.Err()
}
