// Package golden makes the golden files of the OpenSearch translation, in
// internal/search/opensearch/testdata: the query body of each golden request
// (Cases, and SemanticCases for hybrid search and similar records), the index
// mapping of every searchable resource (with the vector field, and notes'
// without it) and the bulk body of the sample stream event. The tests of package opensearch compare the
// committed files with what Files makes, and `make generate`
// (internal/generate) rewrites them, so the cases are declared once, here.
package golden

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/url"
	"strings"

	"github.com/aws/aws-lambda-go/events"

	"github.com/sourcebase/sourcebase/internal/embed/bedrock"
	"github.com/sourcebase/sourcebase/internal/search"
	"github.com/sourcebase/sourcebase/internal/search/opensearch"
	"github.com/sourcebase/sourcebase/internal/search/searchtest"
)

// Paths from the repository root: the golden files' directory, and the
// sample DynamoDB stream event the bulk body is made of.
const (
	Dir         = "internal/search/opensearch/testdata"
	StreamEvent = "events/indexer-stream.json"
)

// Patterns match, in Dir, every file Files makes and no other: a file
// matching one that Files did not make is left over from a removed case or
// resource.
var Patterns = []string{"query-*.json", "mapping-*.json", "bulk-*.ndjson"}

// A Case is a golden request: query-<Name>.json is the body of the search
// of Resource (searchtest.Notes under that name) with the query string
// Query and the body Body, by org1, changed by Edit when it is set (for
// what only a list asks of the engine: MissingSmallest, Before).
type Case struct {
	Name, Resource, Query, Body string
	Edit                        func(*search.Request)
}

// Cases are the golden requests.
var Cases = []Case{
	{"empty", "notes", "", ``, nil},
	{"paging", "notes", "page=3&limit=25", ``, nil},
	{"text", "notes", "", `{"text":"Acme rocket, the launch"}`, nil},
	{"text-stopwords-only", "notes", "", `{"text":"the of"}`, nil},
	{"text-fulltext", "notes", "", `{"text":"acme rocket","fullText":true}`, nil},
	{"text-fuzzy", "notes", "", `{"text":"ac acme rockets","fuzzy":true}`, nil},
	{"text-fuzzy-fulltext", "notes", "", `{"text":"acme rockets","fuzzy":true,"fullText":true}`, nil},
	{"fuzzy-ignored-by-documents", "documents", "", `{"text":"acme rockets","fuzzy":true}`, nil},
	{"fuzzy-ignored-by-company-hybrid", "companies", "", `{"text":"acme rockets","fuzzy":true,"hybrid":true}`, nil},
	{"fuzzy-used-by-company-keyword", "companies", "", `{"text":"acme rockets","fuzzy":true}`, nil},
	{"fuzzy-ignored-by-activity-fulltext", "activities", "", `{"text":"acme rockets","fuzzy":true,"fullText":true}`, nil},
	{"fuzzy-used-by-activity-without-fulltext", "activities", "", `{"text":"acme rockets","fuzzy":true}`, nil},
	{"fuzzy-used-by-workspaces", "workspaces", "", `{"text":"acme","fuzzy":true,"hybrid":true}`, nil},
	{"eq-every-type", "notes", "", `{"filters":{"and":[
		{"field":"stage","operator":"eq","value":"won"},
		{"field":"name","operator":"eq","value":"Acme"},
		{"field":"size","operator":"eq","value":3},
		{"field":"score","operator":"eq","value":2.5},
		{"field":"isPrivate","operator":"eq","value":false},
		{"field":"closedOn","operator":"eq","value":"2024-05-01"},
		{"field":"createdAt","operator":"eq","value":"2024-05-01T10:00:00+02:00"},
		{"field":"tags","operator":"eq","value":"red"},
		{"field":"location.city","operator":"eq","value":"Oslo"},
		{"field":"contacts.email","operator":"eq","value":"a@b.co"}]}}`, nil},
	{"ne-in-nin", "notes", "", `{"filters":{"and":[
		{"field":"stage","operator":"ne","value":"lost"},
		{"field":"size","operator":"in","value":[1,2,3]},
		{"field":"name","operator":"in","value":["Acme","Globex"]},
		{"field":"tags","operator":"nin","value":["red","blue"]},
		{"field":"closedOn","operator":"nin","value":["2024-01-01"]}]}}`, nil},
	{"ranges", "notes", "", `{"filters":{"and":[
		{"field":"size","operator":"gt","value":1},
		{"field":"size","operator":"lte","value":10},
		{"field":"score","operator":"gte","value":0.5},
		{"field":"score","operator":"lt","value":9.5},
		{"field":"closedOn","operator":"gte","value":"2024-01-01"},
		{"field":"updatedAt","operator":"lt","value":"2024-06-01T00:00:00.123Z"}]}}`, nil},
	{"contains-startswith-exists", "notes", "", `{"filters":{"and":[
		{"field":"name","operator":"contains","value":"Me*Co?"},
		{"field":"source","operator":"startsWith","value":"Web"},
		{"field":"body","operator":"contains","value":"launch"},
		{"field":"tags","operator":"contains","value":"red"},
		{"field":"location.city","operator":"exists","value":true},
		{"field":"score","operator":"exists","value":false}]}}`, nil},
	{"folded", "notes", "", `{"text":"Müller STRAẞE","filters":{"and":[
		{"field":"name","operator":"contains","value":"ZÜRICH"},
		{"field":"source","operator":"startsWith","value":"Société"}]}}`, nil},
	{"or-only", "notes", "", `{"filters":{"or":[
		{"field":"stage","operator":"eq","value":"won"},
		{"field":"stage","operator":"eq","value":"new"}]}}`, nil},
	{"nested", "notes", "", `{"text":"acme","filters":{"and":[
		{"field":"isPrivate","operator":"eq","value":false},
		{"or":[
			{"field":"stage","operator":"eq","value":"won"},
			{"field":"size","operator":"gt","value":5,"and":[{"field":"tags","operator":"contains","value":"big"}]},
			{"and":[{"field":"source","operator":"exists","value":false},{"or":[{"field":"score","operator":"lt","value":1}]}]}]}],
		"or":[{"field":"name","operator":"startsWith","value":"a"},{"field":"name","operator":"startsWith","value":"b"}]}}`, nil},
	{"sort", "notes", "", `{"text":"acme","sort":[
		{"field":"name","direction":"asc"},{"field":"size","direction":"desc"},{"field":"closedOn"}]}`, nil},
	{"sort-by-id", "notes", "", `{"sort":[{"field":"isPrivate"},{"field":"id","direction":"asc"}]}`, nil},
	{"list-sort-missing-smallest", "notes", "limit=25", `{"sort":[{"field":"name","direction":"asc"},{"field":"size","direction":"desc"},{"field":"id","direction":"desc"}]}`, func(r *search.Request) {
		for i := range r.Sort {
			r.Sort[i].MissingSmallest = true
		}
	}},
	{"list-before", "notes", "limit=25", `{"filters":{"and":[{"field":"stage","operator":"eq","value":"won"}]}}`, func(r *search.Request) {
		r.Before, r.From = "nte_01J00000000000000000000000", 50
		r.Sort = []search.SortKey{{Field: "id", Desc: true, MissingSmallest: true}}
	}},
}

// The golden requests of hybrid search and similar records: each
// SemanticCase is the body of one of the queries the engine sends for it,
// made of the search (or similar records request) Body with the query
// string Query, by org1, and the stand-ins below.
var (
	// QueryVector stands for the embedding of a hybrid search's text or of
	// a record (three dimensions, for the bodies' shape; a model's have
	// 100 or 512).
	QueryVector = []float32{0.6, 0, -0.8}
	// NearIDs stand for the document ids a hybrid search's k-NN query
	// found: the sorted union's ids clause and the count's.
	NearIDs = []string{"org1:nte_01J00000000000000000000002", "org1:nte_01J00000000000000000000001"}
)

// SimilarID is the record whose similar records the golden requests ask.
const SimilarID = "nte_01J00000000000000000000003"

// Kinds of SemanticCase: which query of the engine's a body is.
const (
	HybridKeyword = "hybrid keyword" // opensearch.HybridKeywordQuery
	HybridKNN     = "hybrid knn"     // opensearch.KNNQuery with QueryVector
	HybridCount   = "hybrid count"   // opensearch.HybridCountQuery of NearIDs
	HybridSorted  = "hybrid sorted"  // opensearch.HybridSortedQuery with NearIDs
	SimilarKNN    = "similar knn"    // opensearch.SimilarQuery of SimilarID with QueryVector
	SimilarCount  = "similar count"  // opensearch.SimilarCountQuery of SimilarID
)

// A SemanticCase is a golden body of hybrid search or similar records:
// query-<Name>.json, a query of Kind for the request (Query, Body) on
// searchtest.Notes.
type SemanticCase struct {
	Name, Kind, Query, Body string
}

// hybridBody and similarBody are the golden semantic requests.
const (
	hybridBody  = `{"text":"acme rockets","hybrid":true,"filters":{"and":[{"field":"stage","operator":"eq","value":"won"}]}}`
	sortedBody  = `{"text":"acme rockets","hybrid":true,"filters":{"and":[{"field":"stage","operator":"eq","value":"won"}]},"sort":[{"field":"name"}]}`
	similarBody = `{"filters":{"and":[{"field":"stage","operator":"eq","value":"won"}]}}`
)

// SemanticCases are the golden semantic bodies: a hybrid search without
// sort sends HybridKNN and HybridKeyword (and HybridCount when the
// keyword window does not hold every match); with a sort, HybridKNN and
// HybridSorted; similar records, SimilarCount and SimilarKNN.
var SemanticCases = []SemanticCase{
	{"hybrid-knn", HybridKNN, "page=2&limit=20", hybridBody},
	{"hybrid-keyword", HybridKeyword, "page=2&limit=20", hybridBody},
	{"hybrid-count", HybridCount, "page=2&limit=20", hybridBody},
	{"hybrid-sorted", HybridSorted, "page=2&limit=20", sortedBody},
	{"similar-knn", SimilarKNN, "page=2&limit=20", similarBody},
	{"similar-count", SimilarCount, "page=2&limit=20", similarBody},
}

// Request is the search c's bodies are made of.
func (c SemanticCase) Request() (*search.Request, error) {
	page, limit, err := paging(c.Query)
	if err != nil {
		return nil, fmt.Errorf("case %s: %w", c.Name, err)
	}
	req, err := search.Decode(search.SchemaOf(searchtest.Notes), []byte(c.Body), page, limit)
	if err != nil {
		return nil, fmt.Errorf("case %s: decode %s: %w", c.Name, c.Body, err)
	}
	return req, nil
}

// QueryBody is the OpenSearch request body c stands for.
func (c SemanticCase) QueryBody() ([]byte, error) {
	req, err := c.Request()
	if err != nil {
		return nil, err
	}
	s := search.SchemaOf(searchtest.Notes)
	switch c.Kind {
	case HybridKeyword:
		return opensearch.HybridKeywordQuery("org1", s, req)
	case HybridKNN:
		return opensearch.KNNQuery("org1", s, req, QueryVector)
	case HybridCount:
		return opensearch.HybridCountQuery("org1", s, req, NearIDs)
	case HybridSorted:
		return opensearch.HybridSortedQuery("org1", s, req, NearIDs)
	case SimilarKNN:
		return opensearch.SimilarQuery("org1", s, SimilarID, req, QueryVector)
	case SimilarCount:
		return opensearch.SimilarCountQuery("org1", s, SimilarID, req)
	}
	return nil, fmt.Errorf("case %s: unknown kind %q", c.Name, c.Kind)
}

// paging reads page and limit from a query string as search does.
func paging(query string) (page, limit int, err error) {
	if query == "" {
		return 1, search.DefaultLimit, nil
	}
	q := url.Values{}
	for _, kv := range strings.Split(query, "&") {
		k, v, _ := strings.Cut(kv, "=")
		q[k] = []string{v}
	}
	return search.ParsePaging(q)
}

// Schema is the schema c searches: searchtest.Notes under c's resource name,
// for the rules that depend on the resource.
func (c Case) Schema() *search.Schema {
	s := search.SchemaOf(searchtest.Notes)
	s.Resource = c.Resource
	return s
}

// QueryBody is the OpenSearch request body c translates to.
func (c Case) QueryBody() ([]byte, error) {
	page, limit, err := paging(c.Query)
	if err != nil {
		return nil, fmt.Errorf("case %s: %w", c.Name, err)
	}
	req, err := search.Decode(c.Schema(), []byte(c.Body), page, limit)
	if err != nil {
		return nil, fmt.Errorf("case %s: decode %s: %w", c.Name, c.Body, err)
	}
	if c.Edit != nil {
		c.Edit(req)
	}
	return opensearch.Query("org1", c.Schema(), req)
}

// Dimensions is the vector field's dimension in the golden mappings: the
// deployments' model's (Bedrock's Titan Text Embeddings V2 as configured,
// bedrock.Dimensions).
const Dimensions = bedrock.Dimensions

// KeywordOnlyMapping is the golden mapping of searchtest.Notes without
// the vector field (EMBEDDINGS=off, or OpenSearch Serverless).
const KeywordOnlyMapping = "mapping-notes-keyword-only.json"

// Schemas are the schemas with a golden mapping: searchtest.Notes and the
// service's searchable resources (searchable: the schemas of
// kinds.Searchable, which this package does not import, being below it).
func Schemas(searchable []*search.Schema) []*search.Schema {
	return append([]*search.Schema{search.SchemaOf(searchtest.Notes)}, searchable...)
}

// Files returns the content of every golden file by its name in Dir, given
// the service's searchable resources (as for Schemas) and the sample stream
// event (the content of StreamEvent). Every file ends with one newline.
func Files(searchable []*search.Schema, stream []byte) (map[string][]byte, error) {
	files := map[string][]byte{}
	for _, c := range Cases {
		b, err := c.QueryBody()
		if err != nil {
			return nil, err
		}
		files["query-"+c.Name+".json"] = line(b)
	}
	for _, c := range SemanticCases {
		b, err := c.QueryBody()
		if err != nil {
			return nil, err
		}
		files["query-"+c.Name+".json"] = line(b)
	}
	for _, s := range Schemas(searchable) {
		b, err := opensearch.Mapping(s, Dimensions)
		if err != nil {
			return nil, fmt.Errorf("mapping of %s: %w", s.Resource, err)
		}
		files["mapping-"+s.Resource+".json"] = line(b)
	}
	b, err := opensearch.Mapping(search.SchemaOf(searchtest.Notes), 0)
	if err != nil {
		return nil, err
	}
	files[KeywordOnlyMapping] = line(b)
	var ev events.DynamoDBEvent
	if err := json.Unmarshal(stream, &ev); err != nil {
		return nil, fmt.Errorf("%s: %w", StreamEvent, err)
	}
	// The sample holds a record whose document does not parse, on purpose:
	// its warning is the indexer's test's business, not the generator's.
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.DiscardHandler))
	body, _ := opensearch.Bulk("sourcebase", searchable, ev)
	slog.SetDefault(prev)
	files["bulk-indexer-stream.ndjson"] = line(body)
	return files, nil
}

// line is b ending with exactly one newline.
func line(b []byte) []byte {
	return append(bytes.TrimSuffix(b, []byte("\n")), '\n')
}
