package jobsapi_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/sourcebase/sourcebase/internal/dev/apitest"
)

// Issue 44: nothing an import reads is lost, and nothing it cannot take is
// dropped without a word.

func TestAnImportTakesReconciledColumnsAsCandidatesAndRefusesOtherReadOnlyValuesPerRow(t *testing.T) {
	t.Parallel()
	c := apitest.New(t).Org(t)
	file := "Name,Employees,Total Raised,origin,externalReference.source,externalId\n" +
		"Acme,250,1234567890.12,workflow,,crm-1\n" +
		"Beta,ten,,,,crm-2\n" +
		"Gamma,300,,,hubspot,crm-3\n" +
		"Delta,,,,,crm-4\n"
	j := apitest.RunImport(t, c, map[string]any{"resource": "companies", "format": "csv", "confidence": 70,
		"mapping": map[string]any{"Name": "canonicalName", "Employees": "employeeCount", "Total Raised": "totalMoneyRaised"}}, []byte(file))
	if j["status"] != "completed" || apitest.Num(j["created"]) != 2 || apitest.Num(j["failed"]) != 2 || apitest.Num(j["confidence"]) != 70 {
		t.Fatalf("import ended %s", apitest.JSONOf(j))
	}
	rows := readCSV(t, download(t, j["errorsUrl"].(string)))
	if len(rows) != 3 || strings.Join(rows[0], ",") != "row,error,Name,Employees,Total Raised,origin,externalReference.source,externalId" ||
		rows[1][0] != "2" || !strings.Contains(rows[1][1], "Employees") || !strings.Contains(rows[1][1], "not an integer") ||
		rows[2][0] != "3" || !strings.Contains(rows[2][1], "externalReference.source is read-only") {
		t.Errorf("errors file %q", rows)
	}
	acme := c.Do("GET", "/v1/companies?externalId=crm-1", nil).Want(t, 200).List(t)
	if len(acme) != 1 {
		t.Fatalf("crm-1: %s", apitest.JSONOf(acme))
	}
	co := acme[0]
	if apitest.JSONOf(co["employeeCount"]) != "250" || apitest.JSONOf(co["totalMoneyRaised"]) != "1234567890.12" || co["origin"] != "workflow" || co["lastEnrichedAt"] == nil {
		t.Errorf("imported company %s", apitest.JSONOf(co))
	}
	cands := co["enrichment"].(map[string]any)["employeeCount"].([]any)
	if len(cands) != 1 || apitest.JSONOf(cands[0].(map[string]any)["source"]) != `"import"` || apitest.Num(cands[0].(map[string]any)["confidence"]) != 70 {
		t.Errorf("employeeCount candidates %s", apitest.JSONOf(cands))
	}
	vals := c.Do("GET", "/v1/enrichments/resources/companies/"+apitest.IDOf(t, co), nil).Want(t, 200).List(t)
	if len(vals) != 2 || vals[0]["provider"] != "import" || vals[0]["sourceId"] != j["id"] {
		t.Errorf("enrichment values %s", apitest.JSONOf(vals))
	}
	delta := c.Do("GET", "/v1/companies?externalId=crm-4", nil).Want(t, 200).List(t)
	if len(delta) != 1 || delta[0]["origin"] != "user" || delta[0]["employeeCount"] != nil || apitest.JSONOf(delta[0]["enrichment"]) != "{}" {
		t.Errorf("a row without candidates %s", apitest.JSONOf(delta))
	}
	// The REST API still refuses what only an import takes.
	c.Do("POST", "/v1/companies", map[string]any{"canonicalName": "X", "employeeCount": 250}).Want(t, 400)
}

func TestAnImportSaysWhichColumnsItDoesNotReadAndTheErrorsFileAlwaysHasTheFilesColumns(t *testing.T) {
	t.Parallel()
	c := apitest.New(t).Org(t)
	file := "id,canonicalName,website,createdAt,updatedAt,lastEnrichedAt\n" +
		"cmp_01hzzzzzzzzzzzzzzzzzzzzzzz,Acme,https://acme.example,2026-01-01T00:00:00Z,2026-01-01T00:00:00Z,\n" +
		"cmp_01hzzzzzzzzzzzzzzzzzzzzzzy,Beta,not a website,2026-01-01T00:00:00Z,2026-01-01T00:00:00Z,\n"
	j := apitest.RunImport(t, c, map[string]any{"resource": "companies", "format": "csv"}, []byte(file))
	if apitest.Num(j["created"]) != 1 || apitest.Num(j["failed"]) != 1 {
		t.Fatalf("import ended %s", apitest.JSONOf(j))
	}
	var cols []string
	for _, ic := range j["ignoredColumns"].([]any) {
		m := ic.(map[string]any)
		cols = append(cols, m["column"].(string))
		if m["reason"] == "" {
			t.Errorf("no reason: %s", apitest.JSONOf(m))
		}
	}
	if strings.Join(cols, ",") != "id,createdAt,updatedAt,lastEnrichedAt" {
		t.Errorf("ignoredColumns %s", apitest.JSONOf(j["ignoredColumns"]))
	}
	rows := readCSV(t, download(t, j["errorsUrl"].(string)))
	if len(rows) != 2 || strings.Join(rows[0], ",") != "row,error,id,canonicalName,website,createdAt,updatedAt,lastEnrichedAt" || rows[1][3] != "Beta" {
		t.Errorf("errors file %q", rows)
	}
}

func TestARepeatedKeyInOneFileFailsItsRowInEveryMode(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	file := []byte("canonicalName,externalId\nFirst,crm-00001\nOther,crm-00002\nSecond,crm-00001\n")
	for _, tc := range []struct {
		mode             string
		created, updated float64
	}{{"upsert", 2, 0}, {"update", 0, 2}, {"create", 2, 0}} {
		c := e.Org(t)
		body := map[string]any{"resource": "companies", "format": "csv", "mode": tc.mode}
		if tc.mode != "create" {
			body["match"] = "externalId"
		}
		if tc.mode == "update" {
			for _, ext := range []string{"crm-00001", "crm-00002"} {
				c.Do("POST", "/v1/companies", map[string]any{"canonicalName": "Before", "externalId": ext}).Want(t, 201)
			}
		}
		j := apitest.RunImport(t, c, body, file)
		if apitest.Num(j["created"]) != tc.created || apitest.Num(j["updated"]) != tc.updated || apitest.Num(j["failed"]) != 1 || apitest.Num(j["duplicates"]) != 1 {
			t.Errorf("%s: %s", tc.mode, apitest.JSONOf(j))
			continue
		}
		rows := readCSV(t, download(t, j["errorsUrl"].(string)))
		if len(rows) != 2 || rows[1][0] != "3" || !strings.Contains(rows[1][1], `"crm-00001" is also the externalId of row 1`) {
			t.Errorf("%s: errors file %q", tc.mode, rows)
		}
		got := c.Do("GET", "/v1/companies?externalId=crm-00001", nil).Want(t, 200).List(t)
		if len(got) != 1 || got[0]["canonicalName"] != "First" {
			t.Errorf("%s: crm-00001 is %s", tc.mode, apitest.JSONOf(got))
		}
	}
}

func TestAnImportOfManyCandidatesARowWritesEveryRow(t *testing.T) {
	t.Parallel()
	c := apitest.New(t).Org(t)
	var b strings.Builder
	b.WriteString("canonicalName,externalId,employeeCount,totalMoneyRaised,lastValuation,ownershipStatus,lastRoundDate\n")
	for i := range 60 { // 7 item writes a row: more than one transaction's 100 in each group of 25
		b.WriteString(strings.Join([]string{"Co " + strconv.Itoa(i), "ext-" + strconv.Itoa(i), strconv.Itoa(10 + i), strconv.Itoa(1000+i) + ".5", "1e9", "private", "2025-01-02"}, ",") + "\n")
	}
	j := apitest.RunImport(t, c, map[string]any{"resource": "companies", "format": "csv"}, []byte(b.String()))
	if apitest.Num(j["created"]) != 60 || apitest.Num(j["failed"]) != 0 {
		t.Fatalf("import ended %s", apitest.JSONOf(j))
	}
	got := c.Do("GET", "/v1/companies?externalId=ext-59", nil).Want(t, 200).List(t)
	if len(got) != 1 || apitest.JSONOf(got[0]["employeeCount"]) != "69" || apitest.JSONOf(got[0]["totalMoneyRaised"]) != "1059.5" || apitest.JSONOf(got[0]["lastValuation"]) != "1e9" && apitest.JSONOf(got[0]["lastValuation"]) != "1000000000" {
		t.Errorf("ext-59 is %s", apitest.JSONOf(got))
	}
}
