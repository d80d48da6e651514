package apitest_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/sourcebase/sourcebase/internal/dev/apitest"
	"github.com/sourcebase/sourcebase/internal/dev/testenv"
)

// enrichedValue is candidate i of an enrichable company property.
func enrichedValue(prop string, i int) any {
	switch prop {
	case "alternativeNames":
		return []string{fmt.Sprintf("Name %d", i)}
	case "website", "linkedinUrl":
		return fmt.Sprintf("https://c%d.example", i)
	case "location":
		return map[string]any{"city": fmt.Sprintf("City %d", i)}
	case "employeeCount":
		return 10 + i
	case "lastValuation", "lastAmountRaised", "totalMoneyRaised":
		return 1000.5 * float64(i+1)
	case "lastRoundDate":
		return fmt.Sprintf("2025-01-%02d", 1+i%28)
	case "lastFinancials":
		return map[string]any{"revenue": i}
	}
	return fmt.Sprintf("%s candidate %d, a sentence of ordinary length about the company", prop, i)
}

// BenchmarkReconcileCompany times one write that reconciles a company
// whose 16 enrichable attributes (every one a company has) hold many
// candidates: pinning, then unpinning, one candidate. Each write reads the
// company, Queries its candidates and writes one transaction. The issue
// asks for 20 attributes × 50 candidates; a company has 16 enrichable
// attributes, so the second case carries the same 1,000 candidates over
// those 16 (63 each, 55 for the last).
func BenchmarkReconcileCompany(b *testing.B) {
	for _, bc := range []struct {
		name  string
		total int
	}{{"16attributes×50candidates", 16 * 50}, {"1000candidates(20×50)over16attributes", 1000}} {
		b.Run(bc.name, func(b *testing.B) { benchmarkReconcile(b, bc.total) })
	}
}

func benchmarkReconcile(b *testing.B, total int) {
	calls := &testenv.CountingTransport{}
	env := apitest.NewWith(b, apitest.Options{Transport: calls})
	c := env.Org(b)
	id := c.Do("POST", "/v1/companies", map[string]any{"canonicalName": "Enriched"}).Want(b, http.StatusCreated).Object(b)["id"].(string)
	path := "/v1/enrichments/resources/companies/" + id
	props := []string{"alternativeNames", "website", "linkedinUrl", "description", "shortDescription", "sector", "subsector",
		"industry", "location", "employeeCount", "ownershipStatus", "lastValuation", "lastAmountRaised", "totalMoneyRaised",
		"lastRoundDate", "lastFinancials"}
	per := (total + len(props) - 1) / len(props)
	var first string
	left := total
	for _, p := range props {
		n := min(per, left)
		left -= n
		for from := 0; from < n; from += 50 {
			values := make([]any, 0, 50)
			for i := from; i < min(from+50, n); i++ {
				values = append(values, map[string]any{"property": p, "value": enrichedValue(p, i), "source": "provider", "confidence": i % 100})
			}
			added := c.Do("POST", path, map[string]any{"values": values}).Want(b, http.StatusCreated).List(b)
			if first == "" {
				first = added[0]["id"].(string)
			}
		}
	}
	if n := len(c.Do("GET", path, nil).Want(b, http.StatusOK).List(b)); n != total {
		b.Fatalf("%d candidates stored, want %d", n, total)
	}
	calls.Reset()
	pinned := false
	for b.Loop() {
		pinned = !pinned
		c.Do("PATCH", path+"/"+first, map[string]any{"pinned": pinned}).Want(b, http.StatusOK)
	}
	b.ReportMetric(float64(calls.Count())/float64(b.N), "ddbcalls/op")
}
