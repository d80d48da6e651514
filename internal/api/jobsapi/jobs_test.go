package jobsapi_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sourcebase/sourcebase/internal/dev/apitest"
	"github.com/sourcebase/sourcebase/internal/dev/testenv"
	"github.com/sourcebase/sourcebase/internal/jobs"
)

// download GETs a file URL.
func download(t *testing.T, url string) []byte {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 {
		t.Fatalf("download answered %d %s", res.StatusCode, b)
	}
	return b
}

// runExport creates an export with body, waits for it and downloads it.
func runExport(t *testing.T, c *apitest.Client, body map[string]any) (map[string]any, []byte) {
	t.Helper()
	created := c.Do("POST", "/v1/exports", body).Want(t, 201).Object(t)
	j := apitest.WaitJob(t, c, "/v1/exports/"+apitest.IDOf(t, created))
	if j["status"] != jobs.StatusCompleted {
		t.Fatalf("export %s", apitest.JSONOf(j))
	}
	return j, download(t, j["downloadUrl"].(string))
}

func TestACSVImportWritesEveryGoodRowAndReportsTheBadOnesInTheErrorsFile(t *testing.T) {
	testenv.Long(t, "an import of a thousand rows")
	t.Parallel()
	apitest.InProcessOnly(t, "it sets the import's chunk: the lambdas suite runs the smaller imports")
	e := apitest.New(t)
	c := e.Org(t)
	// Twelve chunks of 100 rows (each checkpointed, the bad row in the
	// eleventh): the chunk logic of a file many times DefaultChunk, with a
	// tenth of its writes.
	e.Deps.Jobs.Chunk = 100
	file := apitest.CompanyCSV(1200, 1001)
	j := apitest.RunImport(t, c, map[string]any{"resource": "companies", "format": "csv", "mapping": apitest.ImportMapping()}, file)
	if j["status"] != "completed" || apitest.Num(j["total"]) != 1200 || apitest.Num(j["processed"]) != 1200 || apitest.Num(j["created"]) != 1199 || apitest.Num(j["failed"]) != 1 {
		t.Fatalf("import ended %s", apitest.JSONOf(j))
	}
	rows := readCSV(t, download(t, j["errorsUrl"].(string)))
	if len(rows) != 2 || rows[0][0] != "row" || rows[0][1] != "error" || rows[1][0] != "1001" || !strings.Contains(rows[1][1], "website") ||
		rows[1][2] != "Company 1001, Inc." {
		t.Errorf("errors file %q", rows)
	}
	page := c.Do("GET", "/v1/companies?externalId=ext-17", nil).Want(t, 200).List(t)
	if len(page) != 1 || page[0]["canonicalName"] != "Company 17, Inc." || apitest.JSONOf(page[0]["tags"]) != `["ai","robotics"]` ||
		apitest.JSONOf(page[0]["location"]) != `{"city":"Paris"}` {
		t.Errorf("imported company %s", apitest.JSONOf(page))
	}
}

func readCSV(t *testing.T, b []byte) [][]string {
	t.Helper()
	r := csv.NewReader(bytes.NewReader(b))
	r.FieldsPerRecord = -1
	rows, err := r.ReadAll()
	if err != nil {
		t.Fatalf("not CSV: %v\n%s", err, b)
	}
	return rows
}

func TestAnImportKilledMidWayResumesWithoutDuplicatingOrLosingARow(t *testing.T) {
	testenv.Long(t, "an import interrupted and resumed")
	t.Parallel()
	apitest.InProcessOnly(t, "it stops the process's job runner")
	e := apitest.New(t)
	c := e.Org(t)
	e.Deps.Jobs.Chunk = 50
	e.Deps.Jobs.RowsPerSecond = 400
	created := c.Do("POST", "/v1/imports", map[string]any{"resource": "companies", "format": "csv", "mapping": apitest.ImportMapping()}).Want(t, 201).Object(t)
	apitest.Upload(t, created["uploadUrl"].(string), bytes.NewReader(apitest.CompanyCSV(1000)))
	path := "/v1/imports/" + apitest.IDOf(t, created)
	// Stop the runner in the middle of the job, as a crash would.
	deadline := time.Now().Add(testenv.Scaled(time.Minute))
	for {
		j := c.Do("GET", path, nil).Want(t, 200).Object(t)
		if p := apitest.Num(j["processed"]); p >= 200 && p < 1000 {
			break
		}
		if apitest.Num(j["processed"]) >= 1000 || time.Now().After(deadline) {
			t.Fatalf("the import was not caught mid-way: %s", apitest.JSONOf(j))
		}
		time.Sleep(10 * time.Millisecond)
	}
	e.Runner.Close()
	stopped := c.Do("GET", path, nil).Want(t, 200).Object(t)
	if stopped["status"] != "running" {
		t.Fatalf("stopped import %s", apitest.JSONOf(stopped))
	}
	// A new process resumes what the old one left.
	e.Deps.Jobs.RowsPerSecond = 100_000
	runner := jobs.NewRunner(e.Deps.Jobs)
	t.Cleanup(runner.Close)
	if err := runner.Resume(context.Background()); err != nil {
		t.Fatal(err)
	}
	j := apitest.WaitJob(t, c, path)
	if j["status"] != "completed" || apitest.Num(j["processed"]) != 1000 || apitest.Num(j["created"]) != 1000 || apitest.Num(j["failed"]) != 0 {
		t.Fatalf("resumed import ended %s", apitest.JSONOf(j))
	}
	seen := map[string]bool{}
	q := "/v1/companies?limit=100"
	for q != "" {
		r := c.Do("GET", q, nil).Want(t, 200)
		for _, rec := range r.List(t) {
			if seen[rec["externalId"].(string)] {
				t.Fatalf("company %s twice", rec["externalId"])
			}
			seen[rec["externalId"].(string)] = true
		}
		q = ""
		if next := r.Header.Get("X-Next-Cursor"); next != "" {
			q = "/v1/companies?limit=100&cursor=" + next
		}
	}
	if len(seen) != 1000 {
		t.Errorf("%d companies, want 1000", len(seen))
	}
}

func TestImportsOfTwoOrganizationsAtOnceStayInTheirOwn(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	a, b := e.Org(t), e.Org(t)
	done := make(chan map[string]any, 2)
	for _, c := range []*apitest.Client{a, b} {
		go func() {
			done <- apitest.RunImport(t, c, map[string]any{"resource": "companies", "format": "csv", "mode": "upsert", "match": "externalId", "mapping": apitest.ImportMapping()}, apitest.CompanyCSV(300))
		}()
	}
	for range 2 {
		if j := <-done; apitest.Num(j["created"]) != 300 {
			t.Errorf("import %s", apitest.JSONOf(j))
		}
	}
	for _, c := range []*apitest.Client{a, b} {
		if n := len(c.Do("GET", "/v1/companies?limit=500", nil).Want(t, 200).List(t)); n != 300 {
			t.Errorf("an organization has %d companies, want its own 300", n)
		}
	}
	// Another organization's import is not found.
	imports := a.Do("GET", "/v1/imports", nil).Want(t, 200).List(t)
	b.Do("GET", "/v1/imports/"+apitest.IDOf(t, imports[0]), nil).Want(t, 404)
}

func TestUpsertAndUpdateImportsAndADryRun(t *testing.T) {
	t.Parallel()
	c := apitest.New(t).Org(t)
	file := apitest.CompanyCSV(20)
	dry := apitest.RunImport(t, c, map[string]any{"resource": "companies", "format": "csv", "mode": "upsert", "match": "externalId", "mapping": apitest.ImportMapping(), "dryRun": true}, file)
	if dry["status"] != "completed" || apitest.Num(dry["created"]) != 20 || len(apitest.Companies(t, c)) != 0 {
		t.Fatalf("dry run %s wrote %d companies", apitest.JSONOf(dry), len(apitest.Companies(t, c)))
	}
	first := apitest.RunImport(t, c, map[string]any{"resource": "companies", "format": "csv", "mode": "upsert", "match": "externalId", "mapping": apitest.ImportMapping()}, file)
	again := apitest.RunImport(t, c, map[string]any{"resource": "companies", "format": "csv", "mode": "upsert", "match": "externalId", "mapping": apitest.ImportMapping()}, file)
	if apitest.Num(first["created"]) != 20 || apitest.Num(again["created"]) != 0 || apitest.Num(again["updated"]) != 20 {
		t.Errorf("upserts: %s then %s", apitest.JSONOf(first), apitest.JSONOf(again))
	}
	nd := "{\"externalId\":\"ext-3\",\"sector\":\"Robotics\"}\n{\"externalId\":\"nope\",\"sector\":\"x\"}\n\n{\"id\":1}\nnot json\n"
	upd := apitest.RunImport(t, c, map[string]any{"resource": "companies", "format": "ndjson", "mode": "update", "match": "externalId"}, []byte(nd))
	if apitest.Num(upd["total"]) != 4 || apitest.Num(upd["updated"]) != 1 || apitest.Num(upd["failed"]) != 3 {
		t.Errorf("update import %s", apitest.JSONOf(upd))
	}
	rows := readCSV(t, download(t, upd["errorsUrl"].(string)))
	if len(rows) != 4 || rows[0][2] != "line" || rows[1][0] != "2" || !strings.Contains(rows[1][1], "matches no company") || rows[3][0] != "4" {
		t.Errorf("errors %q", rows)
	}
	if got := c.Do("GET", "/v1/companies?externalId=ext-3", nil).Want(t, 200).List(t); got[0]["sector"] != "Robotics" {
		t.Errorf("updated company %s", apitest.JSONOf(got))
	}
}

func TestBadImportAndExportBodiesAreRefusedNamingTheField(t *testing.T) {
	t.Parallel()
	c := apitest.New(t).Org(t)
	for _, tc := range []struct {
		body        map[string]any
		param, text string
	}{
		{map[string]any{"format": "csv"}, "resource", "required"},
		{map[string]any{"resource": "planets", "format": "csv"}, "resource", "companies"},
		{map[string]any{"resource": "companies"}, "format", "required"},
		{map[string]any{"resource": "companies", "format": "xlsx"}, "format", "csv"},
		{map[string]any{"resource": "companies", "format": "csv", "mode": "merge"}, "mode", "upsert"},
		{map[string]any{"resource": "companies", "format": "csv", "mode": "upsert"}, "match", "externalId"},
		{map[string]any{"resource": "companies", "format": "csv", "mode": "upsert", "match": "website"}, "match", "externalId"},
		{map[string]any{"resource": "companies", "format": "csv", "mode": "create", "match": "externalId"}, "match", "does not apply"},
		{map[string]any{"resource": "companies", "format": "csv", "mapping": map[string]any{"A": 3}}, "mapping.A", "field name"},
		{map[string]any{"resource": "companies", "format": "csv", "mapping": map[string]any{"A": "nmae"}}, "mapping", "nmae"},
		{map[string]any{"resource": "companies", "format": "csv", "confidence": 101}, "confidence", "0 to 100"},
		{map[string]any{"resource": "deals", "format": "csv", "confidence": 80}, "confidence", "deals have none"},
		{map[string]any{"resource": "companies", "format": "csv", "mode": "upsert", "match": "externalId", "keepIds": true}, "keepIds", "mode create only"},
	} {
		apitest.WantError(t, c.Do("POST", "/v1/imports", tc.body), 400, tc.text)
	}
	for _, tc := range []struct {
		body map[string]any
		text string
	}{
		{map[string]any{}, "resource"},
		{map[string]any{"resource": "companies", "fields": []any{"colour"}}, "colour"},
		{map[string]any{"resource": "companies", "filter": map[string]any{"tags": "ai"}}, "filter.tags"},
		{map[string]any{"resource": "companies", "filter": map[string]any{"sector": map[string]any{}}}, "filter.sector"},
		{map[string]any{"resource": "companies", "format": "ndjson", "escapeFormulas": false}, "csv exports only"},
	} {
		apitest.WantError(t, c.Do("POST", "/v1/exports", tc.body), 400, tc.text)
	}
	c.Do("GET", "/v1/imports/imp_nope", nil).Want(t, 404)
	c.Do("GET", "/v1/exports/exp_nope", nil).Want(t, 404)
}

func TestAnExportImportedIntoAnotherOrganizationExportsTheSame(t *testing.T) {
	testenv.Long(t, "an export and import of thousands of rows")
	t.Parallel()
	apitest.InProcessOnly(t, "docs/bulk.md's round trip runs in the lambdas suite")
	e := apitest.New(t)
	a, b := e.Org(t), e.Org(t)
	apitest.RunImport(t, a, map[string]any{"resource": "companies", "format": "csv", "mapping": apitest.ImportMapping()}, apitest.CompanyCSV(500))
	for _, format := range []string{"csv", "ndjson"} {
		_, first := runExport(t, a, map[string]any{"resource": "companies", "format": format})
		other := e.Org(t)
		if format == "csv" {
			other = b
		}
		j := apitest.RunImport(t, other, map[string]any{"resource": "companies", "format": format}, first)
		if apitest.Num(j["created"]) != 500 || apitest.Num(j["failed"]) != 0 {
			t.Fatalf("%s re-import %s", format, apitest.JSONOf(j))
		}
		_, second := runExport(t, other, map[string]any{"resource": "companies", "format": format})
		if x, y := normalized(t, format, first), normalized(t, format, second); x != y {
			t.Errorf("%s: the second export differs from the first beyond ids and times:\n%.2000s\n---\n%.2000s", format, x, y)
		}
	}
	// Filters and fields.
	j, file := runExport(t, a, map[string]any{"resource": "companies", "format": "csv", "fields": []any{"canonicalName", "externalId"},
		"filter": map[string]any{"externalId": []any{"ext-1", "ext-2"}}})
	if rows := readCSV(t, file); apitest.Num(j["rows"]) != 2 || len(rows) != 3 || strings.Join(rows[0], ",") != "id,canonicalName,externalId" {
		t.Errorf("filtered export %s: %q", apitest.JSONOf(j), rows)
	}
}

// normalized is an export without its ids and times, its lines sorted.
func normalized(t *testing.T, format string, b []byte) string {
	t.Helper()
	var lines []string
	if format == "csv" {
		rows := readCSV(t, b)
		drop := map[int]bool{}
		for i, h := range rows[0] {
			if h == "id" || h == "createdAt" || h == "updatedAt" {
				drop[i] = true
			}
		}
		for _, row := range rows {
			var keep []string
			for i, cell := range row {
				if !drop[i] {
					keep = append(keep, cell)
				}
			}
			lines = append(lines, strings.Join(keep, "\x1f"))
		}
	} else {
		for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			var m map[string]any
			if err := json.Unmarshal([]byte(line), &m); err != nil {
				t.Fatalf("not NDJSON: %v: %s", err, line)
			}
			delete(m, "id")
			delete(m, "createdAt")
			delete(m, "updatedAt")
			lines = append(lines, apitest.JSONOf(m))
		}
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

func TestAFormulaLikeNameIsExportedEscapedAndImportsBackExactly(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	a, b := e.Org(t), e.Org(t)
	name := `=HYPERLINK("http://evil.example","click")`
	c := a.Do("POST", "/v1/companies", map[string]any{"canonicalName": name}).Want(t, 201).Object(t)
	body := map[string]any{"resource": "companies", "format": "csv", "fields": []any{"canonicalName"}}
	j, file := runExport(t, a, body)
	rows := readCSV(t, file)
	if j["escapeFormulas"] != true || len(rows) != 2 || rows[1][0] != apitest.IDOf(t, c) || rows[1][1] != "'"+name {
		t.Fatalf("export %s: %q", apitest.JSONOf(j), rows)
	}
	imp := apitest.RunImport(t, b, map[string]any{"resource": "companies", "format": "csv"}, file)
	if apitest.Num(imp["created"]) != 1 || apitest.Num(imp["failed"]) != 0 {
		t.Fatalf("re-import %s", apitest.JSONOf(imp))
	}
	if page := b.Do("GET", "/v1/companies", nil).Want(t, 200).List(t); len(page) != 1 || page[0]["canonicalName"] != name {
		t.Errorf("re-imported %s", apitest.JSONOf(page))
	}
	body["escapeFormulas"] = false
	j, file = runExport(t, a, body)
	if rows := readCSV(t, file); j["escapeFormulas"] != false || len(rows) != 2 || rows[1][1] != name {
		t.Errorf("raw export %s: %q", apitest.JSONOf(j), rows)
	}
	// The errors file escapes the cells it echoes, and replaces NUL bytes.
	imp = apitest.RunImport(t, b, map[string]any{"resource": "companies", "format": "csv"},
		[]byte("canonicalName,website\n\"=cmd\x00\",not a website\n"))
	if rows := readCSV(t, download(t, imp["errorsUrl"].(string))); apitest.Num(imp["failed"]) != 1 || len(rows) != 2 || rows[1][2] != "'=cmd\uFFFD" {
		t.Errorf("errors file of %s: %q", apitest.JSONOf(imp), rows)
	}
}

// namesCSV is a CSV of n companies named prefix 1 … prefix n (no unique
// field: imports of several such files write apart).
func namesCSV(prefix string, n int) []byte {
	var b bytes.Buffer
	b.WriteString("canonicalName\n")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "%s %d\n", prefix, i)
	}
	return b.Bytes()
}

// Issue 45, item 7: an organization runs at most jobs.MaxRunningJobs jobs
// at once; the others wait, queued, and all complete.
func TestAnOrganizationRunsAtMostMaxRunningJobsAtOnceAndTheOthersWaitTheirTurn(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	c := e.Org(t)
	const n = jobs.MaxRunningJobs + 1
	done := make(chan map[string]any, n)
	for i := range n {
		go func() {
			done <- apitest.RunImport(t, c, map[string]any{"resource": "companies", "format": "csv"}, namesCSV(fmt.Sprint("Import ", i), 300))
		}()
	}
	type span struct{ from, to time.Time }
	var spans []span
	for range n {
		j := <-done
		if j["status"] != jobs.StatusCompleted || apitest.Num(j["created"]) != 300 {
			t.Fatalf("import %s", apitest.JSONOf(j))
		}
		from, err1 := time.Parse(time.RFC3339Nano, j["startedAt"].(string))
		to, err2 := time.Parse(time.RFC3339Nano, j["completedAt"].(string))
		if err1 != nil || err2 != nil {
			t.Fatalf("import times %s: %v %v", apitest.JSONOf(j), err1, err2)
		}
		spans = append(spans, span{from, to})
	}
	for _, s := range spans {
		running := 0
		for _, o := range spans {
			if !o.from.After(s.from) && s.from.Before(o.to) {
				running++
			}
		}
		if running > jobs.MaxRunningJobs {
			t.Errorf("%d imports of one organization ran at once (at %s), want at most %d: %v", running, s.from, jobs.MaxRunningJobs, spans)
		}
	}
	if n := len(c.Do("GET", "/v1/companies?limit=1000", nil).Want(t, 200).List(t)); n != 3*300 {
		t.Errorf("the organization has %d companies, want %d", n, 3*300)
	}
}

// Issue 45, item 7: each row of an import counts against the rate limit
// of the key that created it, as a batch's operations do.
func TestAnImportsRowsCountAgainstItsKeysRateLimit(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	c := e.Org(t)
	remaining := func() (int64, int64) {
		res := c.Do("GET", "/v1/imports?limit=1", nil).Want(t, 200)
		rem, err1 := strconv.ParseInt(res.Header.Get("X-RateLimit-Remaining"), 10, 64)
		reset, err2 := strconv.ParseInt(res.Header.Get("X-RateLimit-Reset"), 10, 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("rate limit headers %v", res.Header)
		}
		return rem, reset
	}
	for attempt := 0; ; attempt++ {
		before, reset := remaining()
		start := time.Now()
		j := apitest.RunImport(t, c, map[string]any{"resource": "companies", "format": "csv"}, namesCSV(fmt.Sprint("Try ", attempt), 300))
		after, _ := remaining()
		if time.Since(start) >= time.Duration(reset-1)*time.Second && attempt < 3 {
			continue // a new window began during the import: measure again
		}
		if apitest.Num(j["created"]) != 300 {
			t.Fatalf("import %s", apitest.JSONOf(j))
		}
		if spent := before - after; spent < 300 {
			t.Errorf("an import of 300 rows spent %d of its key's requests, want at least 300 (one a row)", spent)
		}
		return
	}
}
