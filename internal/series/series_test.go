package series_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/dev/testenv"
	"github.com/sourcebase/sourcebase/internal/series"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// invalidAt checks that err is a 400 naming field.
func invalidAt(t *testing.T, what string, err error, field string) {
	t.Helper()
	var inv *apperr.InvalidError
	if !errors.As(err, &inv) || !strings.HasPrefix(err.Error(), field+" ") {
		t.Errorf("%s: %v, want a 400 naming %s", what, err, field)
	}
}

const point = `{"resource":"companies:cmp_1","key":"metric:revenue","date":"2025-03-31","value":%s,"source":"filing"%s}`

func TestDecodePointsReadsEveryFieldAndKeepsTheNumberAsSent(t *testing.T) {
	t.Parallel()
	body := `{"points":[` + fmt.Sprintf(point, "9007199254740991", `,"unit":" USD m ","currency":"EUR","confidence":87.5,"dealId":"dl_1","periodType":"quarter"`) +
		`,` + fmt.Sprintf(point, "-0.5e3", "") + `]}`
	ps, err := codec.DecodePoints([]byte(body))
	if err != nil || len(ps) != 2 {
		t.Fatalf("%v %v", ps, err)
	}
	p := ps[0]
	if p.Resource != "companies:cmp_1" || p.Key != "metric:revenue" || p.Date != "2025-03-31" || p.Value.String() != "9007199254740991" ||
		p.Source != "filing" || *p.Unit != "USD m" || *p.Currency != "EUR" || *p.Confidence != 87.5 || *p.DealID != "dl_1" || *p.PeriodType != "quarter" {
		t.Errorf("the first point: %+v", p)
	}
	q := ps[1]
	if q.Value.String() != "-0.5e3" || q.Unit != nil || q.Currency != nil || q.Confidence != nil || q.DealID != nil || q.PeriodType != nil {
		t.Errorf("the second point: %+v", q)
	}
}

func TestDecodePointsNamesThePointAndFieldAtFault(t *testing.T) {
	t.Parallel()
	good := fmt.Sprintf(point, "1", "")
	with := func(field, value string) string {
		return `{"points":[` + good + `,` + strings.Replace(good, `"source":"filing"`, `"source":"filing","`+field+`":`+value, 1) + `]}`
	}
	without := func(field string) string {
		p := good
		for _, f := range []string{`"resource":"companies:cmp_1",`, `"key":"metric:revenue",`, `"date":"2025-03-31",`, `"value":1,`, `,"source":"filing"`} {
			if strings.Contains(f, `"`+field+`"`) {
				p = strings.Replace(p, f, "", 1)
			}
		}
		return `{"points":[` + good + `,` + p + `]}`
	}
	for _, c := range []struct{ name, body, field string }{
		{"no points", `{}`, "points"},
		{"null points", `{"points":null}`, "points"},
		{"no point", `{"points":[]}`, "points"},
		{"an unknown top-level field", `{"points":[` + good + `],"extra":1}`, "extra"},
		{"an unknown point field", with("extra", "1"), "points[1].extra"},
		{"no resource", without("resource"), "points[1].resource"},
		{"no key", without("key"), "points[1].key"},
		{"no date", without("date"), "points[1].date"},
		{"no value", without("value"), "points[1].value"},
		{"no source", without("source"), "points[1].source"},
		{"a blank source", strings.Replace(with("unit", `"m"`), `"source":"filing","unit"`, `"source":"  ","unit"`, 1), "points[1].source"},
		{"a currency in lower case", with("currency", `"usd"`), "points[1].currency"},
		{"a confidence over 100", with("confidence", "100.5"), "points[1].confidence"},
		{"a negative confidence", with("confidence", "-1"), "points[1].confidence"},
		{"a period type not offered", with("periodType", `"week"`), "points[1].periodType"},
		{"an empty unit", with("unit", `""`), "points[1].unit"},
		{"a value that is text", strings.Replace(without("value"), `"source":"filing"}]`, `"source":"filing","value":"1"}]`, 1), "points[1].value"},
		{"an integer no client reads exactly", strings.Replace(without("value"), `"source":"filing"}]`, `"source":"filing","value":9007199254740992}]`, 1), "points[1].value"},
		{"a value beyond a double", strings.Replace(without("value"), `"source":"filing"}]`, `"source":"filing","value":1e400}]`, 1), "points[1].value"},
	} {
		_, err := codec.DecodePoints([]byte(c.body))
		invalidAt(t, c.name, err, c.field)
	}
	for _, c := range []struct{ name, old, new string }{
		{"a resource type without series", `"companies:cmp_1"`, `"workflows:wf_1"`},
		{"a resource without an id", `"companies:cmp_1"`, `"companies:"`},
		{"a key without its prefix", `"metric:revenue"`, `"revenue"`},
		{"a key with a space", `"metric:revenue"`, `"metric:net revenue"`},
		{"a date that is no day", `"2025-03-31"`, `"2025-02-30"`},
		{"a date with a time", `"2025-03-31"`, `"2025-03-31T00:00:00Z"`},
		{"a date written otherwise", `"2025-03-31"`, `"2025-3-31"`},
	} {
		body := `{"points":[` + good + `,` + strings.Replace(good, c.old, c.new, 1) + `]}`
		_, err := codec.DecodePoints([]byte(body))
		var inv *apperr.InvalidError
		if !errors.As(err, &inv) || !strings.HasPrefix(err.Error(), "points[1].") {
			t.Errorf("%s: %v, want a 400 naming points[1]", c.name, err)
		}
	}
	many := make([]string, series.MaxBatch+1)
	for i := range many {
		many[i] = good
	}
	_, err := codec.DecodePoints([]byte(`{"points":[` + strings.Join(many, ",") + `]}`))
	invalidAt(t, "a batch over the limit", err, "points")
	if _, err := codec.DecodePoints([]byte(`{"points":[` + strings.Join(many[1:], ",") + `]}`)); err != nil {
		t.Errorf("a full batch: %v", err)
	}
}

func TestDecodeQueryDefaultsAndChecksThePeriod(t *testing.T) {
	t.Parallel()
	q, err := codec.DecodeQuery([]byte(`{"resource":"deals:dl_1","key":"metric:arr"}`))
	if err != nil || q.Resource != "deals:dl_1" || q.Key != "metric:arr" || q.Policy != series.PolicyLatest || q.Granularity != "day" ||
		q.Start != "" || q.End != "" || q.DealContext != "" || q.Sources != nil || q.MinConfidence != nil {
		t.Errorf("the least query: %+v, %v", q, err)
	}
	q, err = codec.DecodeQuery([]byte(`{"resource":"people:p_1","key":"metric:x","dealContext":"dl_9","policy":"all",
		"period":{"start":"2024-01-01","end":"2024-12-31","granularity":"quarter","sources":["a","b"],"minConfidence":50}}`))
	if err != nil || q.Policy != series.PolicyAll || q.DealContext != "dl_9" || q.Start != "2024-01-01" || q.End != "2024-12-31" ||
		q.Granularity != "quarter" || strings.Join(q.Sources, ",") != "a,b" || *q.MinConfidence != 50 {
		t.Errorf("a full query: %+v, %v", q, err)
	}
	// A period of one day, and open periods, are periods.
	for _, period := range []string{`{"start":"2024-05-05","end":"2024-05-05"}`, `{"start":"2024-05-05"}`, `{"end":"2024-05-05"}`, `{}`, `null`} {
		if _, err := codec.DecodeQuery([]byte(`{"resource":"deals:d","key":"metric:x","period":` + period + `}`)); err != nil {
			t.Errorf("period %s: %v", period, err)
		}
	}
	for _, c := range []struct{ name, body, field string }{
		{"no resource", `{"key":"metric:x"}`, "resource"},
		{"a malformed resource", `{"resource":"deal:d","key":"metric:x"}`, "resource"},
		{"no key", `{"resource":"deals:d"}`, "key"},
		{"a malformed key", `{"resource":"deals:d","key":"x"}`, "key"},
		{"an unknown policy", `{"resource":"deals:d","key":"metric:x","policy":"first"}`, "policy"},
		{"an unknown field", `{"resource":"deals:d","key":"metric:x","periods":{}}`, "periods"},
		{"an end before the start", `{"resource":"deals:d","key":"metric:x","period":{"start":"2024-02-01","end":"2024-01-31"}}`, "period.end"},
		{"a start that is no date", `{"resource":"deals:d","key":"metric:x","period":{"start":"2024-13-01"}}`, "period.start"},
		{"an end that is no date", `{"resource":"deals:d","key":"metric:x","period":{"end":"yesterday"}}`, "period.end"},
		{"an unknown granularity", `{"resource":"deals:d","key":"metric:x","period":{"granularity":"hour"}}`, "period.granularity"},
		{"an unknown period field", `{"resource":"deals:d","key":"metric:x","period":{"from":"2024-01-01"}}`, "period.from"},
		{"a confidence over 100", `{"resource":"deals:d","key":"metric:x","period":{"minConfidence":101}}`, "period.minConfidence"},
		{"an empty source", `{"resource":"deals:d","key":"metric:x","period":{"sources":[""]}}`, "period.sources[0]"},
		{"a period that is no object", `{"resource":"deals:d","key":"metric:x","period":"2024"}`, "period"},
	} {
		_, err := codec.DecodeQuery([]byte(c.body))
		invalidAt(t, c.name, err, c.field)
	}
}

func TestParseResourceAndValidKey(t *testing.T) {
	t.Parallel()
	for s, ok := range map[string]bool{"companies:cmp_01ab": true, "deals:d-1": true, "people:p": true,
		"company:c": false, "funds:f": false, "companies:": false, "companies:a:b": false, "companies:a b": false, ":x": false,
		"companies:" + strings.Repeat("a", 100): true, "companies:" + strings.Repeat("a", 101): false} {
		typ, id, got := codec.ParseResource(s)
		if got != ok || ok && typ+":"+id != s {
			t.Errorf("ParseResource(%q) = %q %q %v", s, typ, id, got)
		}
	}
	for s, ok := range map[string]bool{"metric:revenue": true, "metric:a.b-c_d": true, "metric:": false, "metrics:x": false,
		"metric:a/b": false, "metric:" + strings.Repeat("a", 100): true, "metric:" + strings.Repeat("a", 101): false} {
		if series.ValidKey(s) != ok {
			t.Errorf("ValidKey(%q) = %v", s, !ok)
		}
	}
}

// seriesKinds are the kinds of record the tests' series belong to, as the
// service's declarations have them (resources.SeriesKinds).
var seriesKinds = []string{"companies", "deals", "people"}

// codec decodes bodies as a service of seriesKinds does.
var codec = series.NewService(nil, nil, seriesKinds)

// records are the records of one organization a test's points may name.
func service(t *testing.T, org string, records ...string) *series.Service {
	t.Helper()
	known := map[string]bool{}
	for _, r := range records {
		known[r] = true
	}
	return series.NewService(testenv.Store(t), func(_ context.Context, o, typ, id string) (bool, error) {
		return o == org && known[typ+":"+id], nil
	}, seriesKinds)
}

func decode(t *testing.T, points ...string) []series.Point {
	t.Helper()
	ps, err := codec.DecodePoints([]byte(`{"points":[` + strings.Join(points, ",") + `]}`))
	if err != nil {
		t.Fatal(err)
	}
	return ps
}

func pt(date, value, source string, extra string) string {
	return fmt.Sprintf(`{"resource":"companies:c1","key":"metric:revenue","date":%q,"value":%s,"source":%q%s}`, date, value, source, extra)
}

func TestAWriteIsAllOrNothingAndAReadBucketsAndPicks(t *testing.T) {
	t.Parallel()
	s := service(t, "org_a", "companies:c1", "deals:d1")
	ctx := context.Background()
	// A point naming a record the organization does not have fails the
	// batch, naming it, and writes nothing.
	_, err := s.Write(ctx, "org_a", decode(t, pt("2024-01-10", "1", "a", ""), pt("2024-01-11", "2", "a", `,"dealId":"d9"`)), false)
	invalidAt(t, "a point of an unknown deal", err, "points[1].dealId")
	got, _, err := s.Read(ctx, "org_a", series.Query{Resource: "companies:c1", Key: "metric:revenue"})
	if err != nil || len(got.Points) != 0 {
		t.Fatalf("after a refused batch: %+v, %v", got, err)
	}
	// A dry run checks and writes nothing, and gives no ids.
	dry, err := s.Write(ctx, "org_a", decode(t, pt("2024-01-10", "1", "a", "")), true)
	if err != nil || dry[0].ID != "" || dry[0].CapturedOn.IsZero() {
		t.Errorf("a dry run: %+v, %v", dry, err)
	}
	written, err := s.Write(ctx, "org_a", decode(t,
		pt("2024-01-10", "1", "a", `,"confidence":90`),
		pt("2024-01-10", "2", "b", `,"confidence":40`),
		pt("2024-02-03", "3", "a", ""),
		pt("2024-02-20", "4", "b", `,"confidence":10`),
		pt("2024-04-01", "9007199254740991", "a", ""),
	), false)
	if err != nil || len(written) != 5 || !strings.HasPrefix(written[0].ID, "mpt_") {
		t.Fatalf("a write: %+v, %v", written, err)
	}
	read := func(q series.Query) string {
		t.Helper()
		q.Resource, q.Key = "companies:c1", "metric:revenue"
		s, _, err := s.Read(ctx, "org_a", q)
		if err != nil {
			t.Fatalf("read %+v: %v", q, err)
		}
		var out []string
		for _, p := range s.Points {
			out = append(out, p.Date+"="+p.Value.String())
		}
		return strings.Join(out, " ")
	}
	for _, c := range []struct {
		q    series.Query
		want string
	}{
		// Latest per day: the last written of a date.
		{series.Query{}, "2024-01-10=2 2024-02-03=3 2024-02-20=4 2024-04-01=9007199254740991"},
		{series.Query{Policy: series.PolicyHighestConfidence}, "2024-01-10=1 2024-02-03=3 2024-02-20=4 2024-04-01=9007199254740991"},
		{series.Query{Policy: series.PolicyAll, End: "2024-01-31"}, "2024-01-10=2 2024-01-10=1"},
		// A bucket answers at its last date with candidates.
		{series.Query{Granularity: "month"}, "2024-01-10=2 2024-02-20=4 2024-04-01=9007199254740991"},
		{series.Query{Granularity: "quarter"}, "2024-02-20=4 2024-04-01=9007199254740991"},
		{series.Query{Granularity: "year", Start: "2024-01-11", End: "2024-03-31"}, "2024-02-20=4"},
		{series.Query{Sources: []string{"a"}}, "2024-01-10=1 2024-02-03=3 2024-04-01=9007199254740991"},
	} {
		if got := read(c.q); got != c.want {
			t.Errorf("%+v: %s, want %s", c.q, got, c.want)
		}
	}
	// Another organization's record has no series.
	if _, _, err := s.Read(ctx, "org_b", series.Query{Resource: "companies:c1", Key: "metric:revenue"}); err == nil {
		t.Error("another organization read the series")
	}
	if _, _, err := s.Read(ctx, "org_a", series.Query{Resource: "companies:c1", Key: "metric:revenue", DealContext: "d9"}); err == nil {
		t.Error("a deal context of an unknown deal was accepted")
	}
}
