package embedded_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sourcebase/sourcebase/internal/dev/testenv"
	"github.com/sourcebase/sourcebase/internal/resource"
	"github.com/sourcebase/sourcebase/internal/search"
	"github.com/sourcebase/sourcebase/internal/search/embedded"
	"github.com/sourcebase/sourcebase/internal/search/searchtest"
	"github.com/sourcebase/sourcebase/internal/store"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// notes are the shared test resource.
var notes = searchtest.Notes

type env struct {
	t      *testing.T
	st     *store.Store
	svc    *resource.Service
	engine *embedded.Embedded
	schema *search.Schema
	org    string
}

func newEnv(t *testing.T, st *store.Store) *env {
	t.Helper()
	if st == nil {
		st = testenv.Store(t)
	}
	reg := resource.NewRegistry(st, []*resource.Def{notes}, nil)
	svc, _ := reg.Service("notes")
	return &env{t: t, st: st, svc: svc, engine: embedded.New(st, 0, nil), schema: search.SchemaOf(notes), org: "org1"}
}

func (e *env) create(body string) string {
	e.t.Helper()
	r, err := e.svc.Create(context.Background(), e.org, []byte(body))
	if err != nil {
		e.t.Fatalf("create %s: %v", body, err)
	}
	return r.ID()
}

// names runs a search and returns the names of the page's records.
func (e *env) names(body string) ([]string, int) {
	e.t.Helper()
	req, err := search.Decode(e.schema, []byte(body), 1, 100)
	if err != nil {
		e.t.Fatalf("decode %s: %v", body, err)
	}
	res, err := e.engine.Search(context.Background(), e.org, e.schema, req)
	if err != nil {
		e.t.Fatalf("search %s: %v", body, err)
	}
	var out []string
	for _, raw := range res.Records {
		var rec struct{ Name string }
		json.Unmarshal(raw, &rec)
		out = append(out, rec.Name)
	}
	return out, res.Total
}

func (e *env) want(body string, want ...string) {
	e.t.Helper()
	got, total := e.names(body)
	if !slices.Equal(got, want) || total != len(want) {
		e.t.Errorf("search %s: %v (total %d), want %v", body, got, total, want)
	}
}

func TestANameMatchOutranksADescriptionMatchAndRarerWordsWeighMore(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	e.create(`{"name":"Harbor review","body":"quarterly notes about robotics"}`)
	e.create(`{"name":"Robotics pipeline","body":"the pipeline of the quarter"}`)
	for i := range 8 {
		e.create(fmt.Sprintf(`{"name":"Quarterly memo %d","body":"common words only"}`, i))
	}
	got, _ := e.names(`{"text":"robotics"}`)
	if len(got) != 2 || got[0] != "Robotics pipeline" {
		t.Errorf("robotics: %v, want the name match first", got)
	}
	// "harbor" is in one record, "quarterly" in nine: the rare word decides.
	got, _ = e.names(`{"text":"quarterly harbor"}`)
	if len(got) == 0 || got[0] != "Harbor review" {
		t.Errorf("quarterly harbor: %v, want Harbor review first", got)
	}
}

func TestFullTextNeedsEveryWordAndFuzzyForgivesTyposByWordLength(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	e.create(`{"name":"Acme robotics","body":"warehouse automation"}`)
	e.create(`{"name":"Acme logistics"}`)
	e.want(`{"text":"acme automation","fullText":true}`, "Acme robotics")
	if got, _ := e.names(`{"text":"acme automation"}`); len(got) != 2 || got[0] != "Acme robotics" {
		t.Errorf("without fullText any word matches, best first: %v", got)
	}
	e.want(`{"text":"robotcs"}`)                               // no fuzzy: no match
	e.want(`{"text":"robotcs","fuzzy":true}`, "Acme robotics") // 7 letters: two edits allowed
	e.want(`{"text":"acm","fuzzy":true}`, "Acme logistics", "Acme robotics")
	e.want(`{"text":"ac","fuzzy":true}`) // two letters: exact only
}

func TestFiltersOfEveryOperatorNestAndCombineWithText(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	e.create(`{"name":"Alpha","source":"crm","stage":"new","size":10,"score":1.5,"closedOn":"2024-01-10","isPrivate":true,"tags":["fintech","b2b"],"location":{"city":"Boston"}}`)
	e.create(`{"name":"Beta","source":"Email import","stage":"won","size":20,"score":2.5,"closedOn":"2024-06-01","isPrivate":false,"tags":["health"]}`)
	e.create(`{"name":"Gamma","stage":"lost","size":30}`)
	for body, want := range map[string][]string{
		`{"filters":{"and":[{"field":"stage","operator":"eq","value":"won"}]}}`:                                             {"Beta"},
		`{"filters":{"and":[{"field":"stage","operator":"ne","value":"won"}]}}`:                                             {"Gamma", "Alpha"},
		`{"filters":{"and":[{"field":"source","operator":"ne","value":"crm"}]}}`:                                            {"Gamma", "Beta"},
		`{"filters":{"and":[{"field":"stage","operator":"in","value":["new","lost"]}]}}`:                                    {"Gamma", "Alpha"},
		`{"filters":{"and":[{"field":"stage","operator":"nin","value":["new","lost"]}]}}`:                                   {"Beta"},
		`{"filters":{"and":[{"field":"size","operator":"gt","value":10}]}}`:                                                 {"Gamma", "Beta"},
		`{"filters":{"and":[{"field":"size","operator":"gte","value":10},{"field":"size","operator":"lt","value":30}]}}`:    {"Beta", "Alpha"},
		`{"filters":{"and":[{"field":"score","operator":"lte","value":1.5}]}}`:                                              {"Alpha"},
		`{"filters":{"and":[{"field":"closedOn","operator":"gt","value":"2024-03-01"}]}}`:                                   {"Beta"},
		`{"filters":{"and":[{"field":"createdAt","operator":"gt","value":"2000-01-01T00:00:00Z"}]}}`:                        {"Gamma", "Beta", "Alpha"},
		`{"filters":{"and":[{"field":"isPrivate","operator":"eq","value":false}]}}`:                                         {"Gamma", "Beta"}, // a Bool defaults to false
		`{"filters":{"and":[{"field":"source","operator":"contains","value":"MAIL"}]}}`:                                     {"Beta"},
		`{"filters":{"and":[{"field":"source","operator":"contains","value":".*"}]}}`:                                       nil,
		`{"filters":{"and":[{"field":"name","operator":"startsWith","value":"al"}]}}`:                                       {"Alpha"},
		`{"filters":{"and":[{"field":"tags","operator":"contains","value":"fintech"}]}}`:                                    {"Alpha"},
		`{"filters":{"and":[{"field":"tags","operator":"eq","value":"health"}]}}`:                                           {"Beta"},
		`{"filters":{"and":[{"field":"location.city","operator":"eq","value":"Boston"}]}}`:                                  {"Alpha"},
		`{"filters":{"and":[{"field":"source","operator":"exists","value":false}]}}`:                                        {"Gamma"},
		`{"filters":{"and":[{"field":"tags","operator":"exists","value":true}]}}`:                                           {"Beta", "Alpha"},
		`{"filters":{"or":[{"field":"stage","operator":"eq","value":"lost"},{"field":"size","operator":"lt","value":15}]}}`: {"Gamma", "Alpha"},
		`{"filters":{"and":[{"field":"size","operator":"gt","value":5,"or":[{"field":"stage","operator":"eq","value":"won"},{"field":"stage","operator":"eq","value":"lost","and":[{"field":"size","operator":"eq","value":30}]}]}]}}`: {"Gamma", "Beta"},
		`{"text":"beta","filters":{"and":[{"field":"stage","operator":"eq","value":"won"}]}}`: {"Beta"},
		`{"text":"beta","filters":{"and":[{"field":"stage","operator":"eq","value":"new"}]}}`: nil,
	} {
		e.want(body, want...)
	}
}

func TestTextFiltersAndSortsFoldCaseAndDiacritics(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	e.create(`{"name":"Zürich Versicherung","body":"owned by Société Générale","source":"Société Générale"}`)
	e.create(`{"name":"Müller AG","body":"Straße und Brücke"}`)
	e.create(`{"name":"Émile"}`)
	e.create(`{"name":"Dora"}`)
	e.create(`{"name":"Fritz"}`)
	e.create(`{"name":"zurich re"}`)
	for body, want := range map[string][]string{
		`{"text":"zurich","sort":[{"field":"name"}]}`: {"zurich re", "Zürich Versicherung"},
		`{"text":"ZÜRICH","sort":[{"field":"name"}]}`: {"zurich re", "Zürich Versicherung"},
		`{"text":"muller"}`:                           {"Müller AG"},
		`{"text":"strasse brucke","fullText":true}`:   {"Müller AG"},
		`{"text":"mueller","fuzzy":true}`:             {"Müller AG"}, // one edit from "muller"
		`{"text":"societe"}`:                          {"Zürich Versicherung"},
		`{"filters":{"and":[{"field":"name","operator":"contains","value":"URICH"}]},"sort":[{"field":"name"}]}`: {"zurich re", "Zürich Versicherung"},
		`{"filters":{"and":[{"field":"source","operator":"startsWith","value":"soc"}]}}`:                         {"Zürich Versicherung"},
		`{"filters":{"and":[{"field":"source","operator":"contains","value":"GÉNÉR"}]}}`:                         {"Zürich Versicherung"},
		`{"filters":{"and":[{"field":"name","operator":"startsWith","value":"emi"}]}}`:                           {"Émile"},
		`{"filters":{"and":[{"field":"name","operator":"eq","value":"emile"}]}}`:                                 nil, // eq stays exact
		`{"sort":[{"field":"name"}]}`: {"Dora", "Émile", "Fritz", "Müller AG", "zurich re", "Zürich Versicherung"},
	} {
		e.want(body, want...)
	}
}

func TestSortKeysApplyInOrderWithMissingValuesLastAndTiesNewestFirst(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	e.create(`{"name":"b","size":2}`)
	e.create(`{"name":"a","size":2}`)
	e.create(`{"name":"c"}`)
	e.create(`{"name":"d","size":1}`)
	e.want(`{"sort":[{"field":"size"},{"field":"name","direction":"desc"}]}`, "d", "b", "a", "c")
	e.want(`{"sort":[{"field":"size","direction":"desc"}]}`, "a", "b", "d", "c")
	e.want(`{}`, "d", "c", "a", "b")
	e.want(`{"sort":[{"field":"name"}]}`, "a", "b", "c", "d")
}

func TestEveryWriteIsVisibleToTheNextSearchEvenInAnotherProcess(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t, nil)
	other := newEnv(t, e.st) // another process: its own engine over the same table
	id := e.create(`{"name":"Original title"}`)
	e.want(`{"text":"original"}`, "Original title")
	other.want(`{"text":"original"}`, "Original title")
	if _, err := other.svc.Update(ctx, "org1", id, []byte(`{"name":"Renamed title"}`)); err != nil {
		t.Fatal(err)
	}
	e.want(`{"text":"original"}`)
	e.want(`{"text":"renamed"}`, "Renamed title")
	if err := other.svc.Delete(ctx, "org1", id); err != nil {
		t.Fatal(err)
	}
	e.want(`{"text":"renamed"}`)
	e.want(`{}`)
	// Another organization's records never show.
	e.org = "org2"
	e.create(`{"name":"Renamed title"}`)
	other.want(`{"text":"renamed"}`)
}

func TestARecordReadOlderThanItsFeedEntryIsReadAgainAfterTheEntryLeavesTheWindow(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t, nil)
	id := e.create(`{"name":"Alpha"}`)
	e.want(`{"text":"alpha"}`, "Alpha")
	// The index was last used two minutes ago, and an entry written a
	// minute ago names version 2, which a read of the record does not show
	// yet (as a plain read may not, for an instant, see every item of a
	// transaction).
	e.engine.IdleFor("org1", "notes", 2*time.Minute)
	typ := e.schema.Type
	k := store.ChangeKey("org1", typ, time.Now().Add(-time.Minute), id, 2)
	entry, err := e.st.CreateExpiringOp(store.Item{PK: k.PK, SK: k.SK, Type: store.TypeChange, Version: 2, Strings: map[string]string{"rid": id}}, time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if err := e.st.Transact(ctx, nil, entry); err != nil {
		t.Fatal(err)
	}
	e.want(`{"text":"alpha"}`, "Alpha")
	// Version 2 of the record shows, with no entry of its own; the entry
	// has left the next refresh's window (its last refresh less
	// store.FeedWindow): the pending read finds it.
	recs, err := e.st.GetRecords(ctx, "org1", typ, []string{id})
	if err != nil || len(recs) != 1 {
		t.Fatalf("the record: %v %v", recs, err)
	}
	var doc map[string]any
	if err := json.Unmarshal(recs[0].Doc, &doc); err != nil {
		t.Fatal(err)
	}
	doc["name"] = "Beta"
	rk := store.RecordKey("org1", typ, id)
	record, err := e.st.ReplaceOp(store.Item{PK: rk.PK, SK: rk.SK, Type: typ, Doc: doc, Version: 2})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.st.Transact(ctx, nil, record); err != nil {
		t.Fatal(err)
	}
	e.want(`{"text":"beta"}`, "Beta")
	e.want(`{"text":"alpha"}`)
}

func TestPagesSplitTheResultsAndCountThemAll(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	for i := range 7 {
		e.create(fmt.Sprintf(`{"name":"n%d","size":%d}`, i, i))
	}
	var seen []string
	for page := 1; page <= 3; page++ {
		req, _ := search.Decode(e.schema, []byte(`{"sort":[{"field":"size"}]}`), page, 3)
		res, err := e.engine.Search(context.Background(), "org1", e.schema, req)
		if err != nil {
			t.Fatal(err)
		}
		if res.Total != 7 {
			t.Errorf("page %d: total %d", page, res.Total)
		}
		for _, r := range res.Records {
			var rec struct{ Name string }
			json.Unmarshal(r, &rec)
			seen = append(seen, rec.Name)
		}
	}
	if strings.Join(seen, ",") != "n0,n1,n2,n3,n4,n5,n6" {
		t.Errorf("pages: %v", seen)
	}
}

func TestAWarmSearchWithNothingChangedCostsOneDynamoDBCall(t *testing.T) {
	t.Parallel()
	var counter testenv.CountingTransport
	st := testenv.StoreWith(t, &counter)
	e := newEnv(t, st)
	for i := range 5 {
		e.create(fmt.Sprintf(`{"name":"n%d"}`, i))
	}
	e.names(`{"text":"n1"}`) // builds the index
	counter.Reset()
	e.names(`{"text":"n2","filters":{"and":[{"field":"name","operator":"startsWith","value":"n"}]}}`)
	if n := counter.Count(); n != 1 {
		t.Errorf("a warm search made %d DynamoDB calls, want 1", n)
	}
}

func TestIndexesBeyondTheRecordBudgetAreDroppedAndRebuiltWhenSearchedAgain(t *testing.T) {
	t.Parallel()
	var counter testenv.CountingTransport
	e := newEnv(t, testenv.StoreWith(t, &counter))
	for _, org := range []string{"org1", "org2"} {
		e.org = org
		e.create(`{"name":"first ` + org + `"}`)
		e.create(`{"name":"second ` + org + `"}`)
	}
	// callsPerSearch alternates searches of the two organizations and
	// returns the DynamoDB calls of the last one.
	callsPerSearch := func(maxDocs int) int {
		e.engine = embedded.New(e.st, maxDocs, nil)
		n := 0
		for range 3 {
			for _, org := range []string{"org1", "org2"} {
				e.org = org
				counter.Reset()
				e.want(`{"text":"first"}`, "first "+org)
				n = counter.Count()
			}
		}
		return n
	}
	// Room for both: a warm search is the feed's one Query.
	if n := callsPerSearch(0); n != 1 {
		t.Errorf("with room for both indexes a search made %d calls, want 1", n)
	}
	// Room for one (3 records, 2 each): each search drops the other
	// organization's index, and the next search of it rebuilds it.
	if n := callsPerSearch(3); n < 2 {
		t.Errorf("with room for one index a search made %d calls, want a rebuild (2 or more)", n)
	}
}
