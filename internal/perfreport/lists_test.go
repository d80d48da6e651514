package perfreport_test

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/sourcebase/sourcebase/internal/dev/apitest"
	"github.com/sourcebase/sourcebase/internal/store"
)

// listFigures are filtered lists of one organization's companies, each
// served by every plan that can serve it (X-Query-Plan).
type listFigures struct {
	Companies int
	Lists     []listFigure
}

type listFigure struct {
	Query    string // what the list asks, in words
	Path     string
	Plan     string // as the X-Query-Plan response header names it
	Chosen   bool   // the plan the planner picks by itself
	Requests int
	Matches  int // records on the first page
	P50, P99 time.Duration
	Usage    apitest.Usage // per request
}

var (
	listSectors = []string{"Robotics", "Fintech", "AI", "Healthcare", "Logistics", "Energy", "Retail", "Media", "Security", "Climate"}
	listTypes   = []string{"operating", "investor", "lender", "investment_bank", "advisor", "sponsor", "service_provider"}
)

// listQueries imports rows companies (sector and type spread evenly) into
// an organization of their own and measures two lists of two filters
// each under every plan: one an index narrows to a record, one an index
// orders. m meters env's table.
func listQueries(t *testing.T, env *apitest.Env, m *apitest.Meter, rows, requests int) listFigures {
	t.Helper()
	c := env.Org(t)
	var file bytes.Buffer
	w := csv.NewWriter(&file)
	w.Write([]string{"canonicalName", "website", "sector", "companyType", "tags", "externalId"})
	for i := 1; i <= rows; i++ {
		w.Write([]string{fmt.Sprintf("Listed %d", i*7919%rows), fmt.Sprintf("https://listed%d.example.com", i),
			listSectors[i%len(listSectors)], listTypes[i%len(listTypes)], "ai; b2b", fmt.Sprint("crm-", i)})
	}
	w.Flush()
	importCSV(t, env, c, file.Bytes(), rows)
	// The steady state: the import's writes out of the change feed's window,
	// whose entries the embedded engine re-reads on every search until they
	// leave it (docs/performance.md's search rows say what that costs). The
	// smoke test does not wait.
	if *update {
		time.Sleep(store.FeedWindow)
	}

	site := fmt.Sprintf("https://listed%d.example.com", rows/2)
	queries := []struct{ what, path string }{
		{"`website` = a site and `sector` = " + listSectors[(rows/2)%len(listSectors)] + " (one match)",
			"/v1/companies?filter[website]=" + url.QueryEscape(site) + "&filter[sector]=" + listSectors[(rows/2)%len(listSectors)]},
		{"`sector` = Robotics and `companyType` = investor, by name, 50 a page",
			"/v1/companies?filter[sector]=Robotics&filter[companyType]=investor&sort=canonicalName&direction=asc&limit=50"},
	}
	out := listFigures{Companies: rows}
	for _, q := range queries {
		chosen := c.Do("GET", q.path, nil).Want(t, 200).Header.Get("X-Query-Plan")
		want := len(c.Do("GET", q.path, nil).Want(t, 200).Data(t).([]any))
		var answers [][]any
		for _, hint := range []string{"index", "search", "key"} {
			first := c.Do("GET", q.path, nil, "X-Query-Plan", hint) // warms the engine's index
			if first.Status != 200 {
				continue // that plan cannot serve it
			}
			answers = append(answers, walkList(t, c, q.path, hint, want))
			f := listFigure{Query: q.what, Path: q.path, Plan: first.Header.Get("X-Query-Plan"), Requests: requests, Matches: len(first.Data(t).([]any))}
			f.Chosen = f.Plan == chosen
			n := requests
			if hint == "key" {
				n = max(requests/10, 3) // a scan of every record: a few suffice
			}
			f.Requests = n
			lat := make([]time.Duration, n)
			m.Reset()
			for i := range lat {
				start := time.Now()
				c.Do("GET", q.path, nil, "X-Query-Plan", hint).Want(t, 200)
				lat[i] = time.Since(start)
			}
			u := m.Reset()
			f.Usage = apitest.Usage{Calls: u.Calls / n, Reads: u.Reads / float64(n), Write: u.Write / float64(n)}
			slices.Sort(lat)
			f.P50, f.P99 = lat[n/2], lat[min(n-1, n*99/100)]
			out.Lists = append(out.Lists, f)
			t.Logf("%s by %s: p50 %s, %+v", q.path, f.Plan, f.P50, f.Usage)
		}
		if len(answers) > 0 && len(answers[0]) == 0 {
			t.Errorf("%s: no record matched", q.path)
		}
		for _, a := range answers[1:] {
			if fmt.Sprint(a) != fmt.Sprint(answers[0]) {
				t.Errorf("%s: the plans answered differently", q.path)
			}
		}
	}
	return out
}

// walkList is the first n records of a list served by the plan hint
// names, following its cursors: a page of a plan that evaluates filters
// on the records read ends after store.MaxPageReads of them, with fewer
// records and a cursor.
func walkList(t *testing.T, c *apitest.Client, path, hint string, n int) []any {
	t.Helper()
	var out []any
	for next := ""; len(out) < n; {
		p := path
		if next != "" {
			p += "&cursor=" + url.QueryEscape(next)
		}
		r := c.Do("GET", p, nil, "X-Query-Plan", hint).Want(t, 200)
		out = append(out, r.Data(t).([]any)...)
		if next = r.Header.Get("X-Next-Cursor"); next == "" {
			break
		}
	}
	return out[:min(n, len(out))]
}

// listMarkdown is the report's section on filtered lists.
func listMarkdown(p func(string, ...any), f listFigures) {
	p("\n## Filtered lists and their plans\n\n")
	p("%d companies of one organization (imported; ten sectors and seven types spread evenly), two lists of two\n", f.Companies)
	p("filters each, each served by every plan that can serve it (asked for with the `X-Query-Plan` request header;\n")
	p("the answers compared equal). Units are DynamoDB's as DynamoDB Local reports them, per request; ★ marks the\n")
	p("plan the planner picks by itself here (the local server, which holds the embedded engine; a Lambda list\n")
	p("function holds none and picks among the others).\n\n")
	p("| list | plan | records | p50 ms | p99 ms | DynamoDB calls | read units |\n|---|---|---:|---:|---:|---:|---:|\n")
	for _, l := range f.Lists {
		star := ""
		if l.Chosen {
			star = " ★"
		}
		p("| %s | `%s`%s | %d | %s | %s | %d | %.1f |\n", l.Query, l.Plan, star, l.Matches, ms(l.P50), ms(l.P99), l.Usage.Calls, l.Usage.Reads)
	}
	p("\nThe `key:…+filter` rows are the scan the planner avoids: a page reads up to %d records of the organization\n", store.MaxPageReads)
	p("(store.MaxPageReads) and ends there with a cursor, so its records column may be short of the others (the answers\n")
	p("are compared by following the cursors); a sort no index serves over more records than that is a 400, so it has\n")
	p("no row. Each such page counts one request more per %d records it read and did not return. An exact-match index narrows the first list to its\n", store.RecordsPerRequest)
	p("one record; the sort index serves the second a page at a time, reading until the page holds 50 matches; the\n")
	p("engine answers either from its index after one feed check (measured once the import's writes had left the\n")
	p("change feed's %s window, whose entries a search re-reads while they are in it). DynamoDB Local reports that check, a\n", store.FeedWindow)
	p("Query finding nothing, as 0 read units; AWS charges it at least 1 (strongly consistent).\n")
}
