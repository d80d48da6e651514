// Package opensearch is the scale-out search engine: searches translated
// into OpenSearch query bodies (Amazon OpenSearch Service or Serverless,
// through opensearch-go with SigV4), one index per resource fed from the
// table's DynamoDB stream by the indexer, and every page's records read
// again from the table.
//
// How a record is indexed: its JSON as stored (the `doc` attribute), plus
// OrgField, under the document id DocID(org, id), in the index
// IndexName(prefix, resource). The mapping (Mapping) is static: only the
// schema's fields are indexed, at their JSON paths:
//
//	string fields with a text weight: text (standard tokenizer, lower
//	    case, asciifolding, English stop words), with sub-fields "raw" (the
//	    exact value) and "lower" (the value folded: lower case and
//	    asciifolding, as fold.Text folds it);
//	other string fields (and arrays of strings): keyword, with "lower";
//	numbers: double; integers: long; booleans: boolean;
//	dates: date (strict_date); date-times: date (strict_date_optional_time).
//
// With embeddings on (a managed domain: see Semantic), a document also
// holds VectorField, the embedding of its text (knn_vector), or
// PendingField when its text could not be embedded yet; hybrid search and
// similar records query it with the k-NN plugin (semantic.go).
package opensearch

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode"

	"github.com/sourcebase/sourcebase/internal/fold"
	"github.com/sourcebase/sourcebase/internal/search"
)

// OrgField is the keyword field every document carries: the id of the
// organization the record belongs to. Every search filters on it.
const OrgField = "_org"

// Fields of hybrid search and similar records (embeddings on):
const (
	// VectorField is the record's embedding vector (knn_vector), of its
	// search.SemanticText, when it has one.
	VectorField = "_vec"
	// PendingField is true in a document indexed without its vector
	// because the provider could not embed its text yet: the record is
	// found by keyword meanwhile (not mapped; read from _source).
	PendingField = "_pending"
)

// Sub-fields of string fields, and the names the mapping defines.
const (
	rawSub       = "raw"   // exact value of a text field
	lowerSub     = "lower" // value folded (contains, startsWith, sort)
	textAnalyzer = "sb_text"
	stopFilter   = "sb_english_stop"
	foldNorm     = "sb_fold"
	// ignoreAbove: longer strings are not kept as exact values (Lucene
	// refuses terms over 32,766 bytes; 8,191 characters fit in any case).
	ignoreAbove = 8191
)

// IndexName is the index of a resource's records: "<prefix>-<resource>".
func IndexName(prefix, resource string) string { return prefix + "-" + resource }

// DocID is the document id of org's record id: "<org>:<id>".
func DocID(org, id string) string { return org + ":" + id }

type obj = map[string]any

// Query is the OpenSearch search body of r over org's records of s. r was
// decoded by search.Decode for s (or made of search.ParseCondition's
// predicates), so every field exists and every value has its field's
// type; a value of another type is an error all the same. r.Before keeps
// the ids below it, and r.From shifts the offset (a list's position).
func Query(org string, s *search.Schema, r *search.Request) ([]byte, error) {
	body, err := keywordBody(org, s, r)
	if err != nil {
		return nil, err
	}
	return json.MarshalIndent(body, "", "  ")
}

// keywordBody is Query's body before it is encoded.
func keywordBody(org string, s *search.Schema, r *search.Request) (obj, error) {
	filter, err := filters(org, s, r)
	if err != nil {
		return nil, err
	}
	b := obj{"filter": filter}
	if tq := textQuery(s, r); tq != nil {
		b["must"] = []any{tq}
	}
	return obj{
		"query":            obj{"bool": b},
		"from":             r.Offset(),
		"size":             r.Limit,
		"track_total_hits": true,
		"_source":          false,
		"sort":             sortOrder(s, r),
	}, nil
}

// filters are the conditions every record of a search of r must meet:
// org's records (the OrgField term), r's filter tree and r's cursor.
func filters(org string, s *search.Schema, r *search.Request) ([]any, error) {
	filter := []any{obj{"term": obj{OrgField: org}}}
	if r.Filter != nil {
		q, err := filterQuery(s, r.Filter)
		if err != nil {
			return nil, err
		}
		filter = append(filter, q)
	}
	if r.Before != "" {
		filter = append(filter, obj{"range": obj{"id": obj{"lt": r.Before}}})
	}
	return filter, nil
}

// words splits text as the standard tokenizer does, near enough: runs of
// letters, digits and marks, folded (fold.Text) as the analyzer folds
// them; stop words (which the index does not hold) and repeats are left
// out.
func words(text string) []string {
	var out []string
	seen := map[string]bool{}
	for _, w := range strings.FieldsFunc(fold.Text(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && !unicode.IsMark(r) && r != '\''
	}) {
		w = strings.Trim(w, "'")
		if w == "" || stopWords[w] || seen[w] {
			continue
		}
		seen[w] = true
		out = append(out, w)
	}
	return out
}

// stopWords are Lucene's English stop words (the analyzer's "_english_").
var stopWords = map[string]bool{}

func init() {
	for _, w := range strings.Fields("a an and are as at be but by for if in into is it no not of on or such that the their then there these they this to was will with") {
		stopWords[w] = true
	}
}

// textQuery is the query of r's text over the weighted fields: per word,
// a match in any field (boosted by its weight; with fuzzy, also a match
// within search.Fuzziness edits at half the weight); any word matches, or
// every word with fullText. Nil when there is no text.
func textQuery(s *search.Schema, r *search.Request) any {
	if r.Text == "" {
		return nil
	}
	ws := words(r.Text)
	if len(ws) == 0 {
		return obj{"match_none": obj{}}
	}
	fuzzy := r.Fuzzy && search.FuzzyApplies(s.Resource, r)
	var per []any
	for _, w := range ws {
		var alts []any
		for _, f := range s.Fields {
			if f.Weight <= 0 {
				continue
			}
			alts = append(alts, obj{"match": obj{f.Name: obj{"query": w, "boost": f.Weight}}})
			if d := search.Fuzziness(w); fuzzy && d > 0 {
				alts = append(alts, obj{"match": obj{f.Name: obj{"query": w, "fuzziness": d, "boost": f.Weight / 2}}})
			}
		}
		per = append(per, obj{"bool": obj{"should": alts, "minimum_should_match": 1}})
	}
	if r.FullText {
		return obj{"bool": obj{"must": per}}
	}
	return obj{"bool": obj{"should": per, "minimum_should_match": 1}}
}

// filterQuery translates a predicate tree: its own condition, every And,
// and one of Or.
func filterQuery(s *search.Schema, p *search.Predicate) (any, error) {
	var all []any
	if p.Field != "" {
		f, ok := s.Field(p.Field)
		if !ok {
			return nil, fmt.Errorf("opensearch: %s is not a field of %s", p.Field, s.Resource)
		}
		q, err := leafQuery(f, p.Op, p.Value)
		if err != nil {
			return nil, err
		}
		all = append(all, q)
	}
	for _, c := range p.And {
		q, err := filterQuery(s, c)
		if err != nil {
			return nil, err
		}
		all = append(all, q)
	}
	if len(p.Or) > 0 {
		var alts []any
		for _, c := range p.Or {
			q, err := filterQuery(s, c)
			if err != nil {
				return nil, err
			}
			alts = append(alts, q)
		}
		all = append(all, obj{"bool": obj{"should": alts, "minimum_should_match": 1}})
	}
	switch len(all) {
	case 0:
		return obj{"match_all": obj{}}, nil // a node with no condition holds
	case 1:
		return all[0], nil
	}
	return obj{"bool": obj{"filter": all}}, nil
}

func not(q any) any { return obj{"bool": obj{"must_not": []any{q}}} }

func leafQuery(f search.Field, op search.Op, v any) (any, error) {
	switch op {
	case search.Eq, search.Ne:
		val, err := value(f, v)
		if err != nil {
			return nil, err
		}
		q := obj{"term": obj{exactField(f): val}}
		if op == search.Ne {
			return not(q), nil
		}
		return q, nil
	case search.In, search.Nin:
		vs, ok := v.([]any)
		if !ok {
			return nil, typeErr(f, op, v)
		}
		vals := make([]any, len(vs))
		for i, e := range vs {
			val, err := value(f, e)
			if err != nil {
				return nil, err
			}
			vals[i] = val
		}
		q := obj{"terms": obj{exactField(f): vals}}
		if op == search.Nin {
			return not(q), nil
		}
		return q, nil
	case search.Gt, search.Gte, search.Lt, search.Lte:
		switch f.Type {
		case search.Number, search.Integer, search.Date, search.DateTime:
		default:
			return nil, typeErr(f, op, v)
		}
		val, err := value(f, v)
		if err != nil {
			return nil, err
		}
		return obj{"range": obj{f.Name: obj{string(op): val}}}, nil
	case search.Contains, search.StartsWith:
		str, ok := v.(string)
		if !ok {
			return nil, typeErr(f, op, v)
		}
		switch {
		case f.Type == search.Keywords && op == search.Contains:
			return obj{"term": obj{exactField(f): str}}, nil // holds the element
		case f.Type != search.Keyword && f.Type != search.Text:
			return nil, typeErr(f, op, v)
		case op == search.Contains:
			return obj{"wildcard": obj{f.Name + "." + lowerSub: obj{"value": "*" + escapeWildcard(fold.Text(str)) + "*", "case_insensitive": true}}}, nil
		default:
			return obj{"prefix": obj{f.Name + "." + lowerSub: obj{"value": fold.Text(str), "case_insensitive": true}}}, nil
		}
	case search.Exists:
		b, ok := v.(bool)
		if !ok {
			return nil, typeErr(f, op, v)
		}
		q := obj{"exists": obj{"field": f.Name}}
		if !b {
			return not(q), nil
		}
		return q, nil
	}
	return nil, fmt.Errorf("opensearch: unknown operator %q on %s", op, f.Name)
}

// exactField is where f's exact values are: the "raw" sub-field of a text
// field, the field itself otherwise.
func exactField(f search.Field) string {
	if isString(f.Type) && f.Weight > 0 {
		return f.Name + "." + rawSub
	}
	return f.Name
}

func isString(t search.Type) bool {
	return t == search.Keyword || t == search.Text || t == search.Keywords
}

// value is v as the JSON value of f's index field.
func value(f search.Field, v any) (any, error) {
	ok := false
	switch f.Type {
	case search.Keyword, search.Text, search.Keywords:
		_, ok = v.(string)
	case search.Number:
		_, ok = v.(float64)
	case search.Integer:
		_, ok = v.(int64)
	case search.Bool:
		_, ok = v.(bool)
	case search.Date, search.DateTime:
		t, isTime := v.(time.Time)
		if !isTime {
			break
		}
		if f.Type == search.Date {
			return t.UTC().Format(time.DateOnly), nil
		}
		return t.UTC().Format(time.RFC3339Nano), nil
	}
	if !ok {
		return nil, typeErr(f, "", v)
	}
	return v, nil
}

func typeErr(f search.Field, op search.Op, v any) error {
	return fmt.Errorf("opensearch: value %v (%T) of %s %s does not fit its type", v, v, f.Name, op)
}

// escapeWildcard quotes the wildcard query's special characters.
func escapeWildcard(s string) string {
	return strings.NewReplacer(`\`, `\\`, `*`, `\*`, `?`, `\?`).Replace(s)
}

// sortOrder is the order of results: the request's keys (strings folded;
// missing values last, or with MissingSmallest first ascending and
// last descending), else relevance when there is text, else newest
// first; ties by id, newest first, so that paging is stable.
func sortOrder(s *search.Schema, r *search.Request) []any {
	var out []any
	for _, k := range r.Sort {
		f, _ := s.Field(k.Field)
		order := "asc"
		if k.Desc {
			order = "desc"
		}
		field := f.Name
		if isString(f.Type) && f.Name != "id" {
			field += "." + lowerSub
		}
		missing := "_last"
		if k.MissingSmallest && !k.Desc {
			missing = "_first"
		}
		out = append(out, obj{field: obj{"order": order, "missing": missing}})
	}
	if len(r.Sort) == 0 && r.Text != "" {
		out = append(out, obj{"_score": obj{"order": "desc"}})
	}
	return append(out, obj{"id": obj{"order": "desc"}})
}

// Mapping is the index body (settings and mappings) of s's index, with
// the VectorField of dims dimensions when dims > 0 (embeddings on; 0:
// none, for EMBEDDINGS=off and for OpenSearch Serverless, see Semantic).
func Mapping(s *search.Schema, dims int) ([]byte, error) {
	props := obj{OrgField: obj{"type": "keyword"}}
	index := obj{"max_result_window": search.MaxOffset + search.MaxLimit}
	if dims > 0 {
		// The k-NN plugin's approximate search (HNSW by faiss, which
		// filters while it searches from OpenSearch 2.9 on) over unit
		// vectors, so that the inner product is the cosine.
		props[VectorField] = obj{"type": "knn_vector", "dimension": dims,
			"method": obj{"name": "hnsw", "engine": "faiss", "space_type": "innerproduct"}}
		index["knn"] = true
	}
	for _, f := range s.Fields {
		parts := strings.Split(f.Name, ".")
		at := props
		for _, p := range parts[:len(parts)-1] {
			child, ok := at[p].(obj)
			if !ok {
				child = obj{"properties": obj{}}
				at[p] = child
			}
			at = child["properties"].(obj)
		}
		at[parts[len(parts)-1]] = fieldMapping(f)
	}
	body := obj{
		"settings": obj{
			// Deep pages: from+size reaches search.MaxOffset+search.MaxLimit.
			"index": index,
			// Text, and the "lower" sub-fields, are folded: lower case and
			// asciifolding (Lucene's ASCIIFoldingFilter), as fold.Text does
			// for the embedded engine and the lists.
			"analysis": obj{
				"filter": obj{stopFilter: obj{"type": "stop", "stopwords": "_english_"}},
				"analyzer": obj{textAnalyzer: obj{"type": "custom", "tokenizer": "standard",
					"filter": []any{"lowercase", "asciifolding", stopFilter}}},
				"normalizer": obj{foldNorm: obj{"type": "custom", "filter": []any{"lowercase", "asciifolding"}}},
			}},
		"mappings": obj{"dynamic": false, "properties": props},
	}
	return json.MarshalIndent(body, "", "  ")
}

func fieldMapping(f search.Field) obj {
	lower := obj{"type": "keyword", "normalizer": foldNorm, "ignore_above": ignoreAbove}
	switch f.Type {
	case search.Keyword, search.Text, search.Keywords:
		if f.Weight > 0 && f.Name != "id" {
			return obj{"type": "text", "analyzer": textAnalyzer, "fields": obj{
				rawSub:   obj{"type": "keyword", "ignore_above": ignoreAbove},
				lowerSub: lower,
			}}
		}
		return obj{"type": "keyword", "ignore_above": ignoreAbove, "fields": obj{lowerSub: lower}}
	case search.Number:
		return obj{"type": "double", "ignore_malformed": true}
	case search.Integer:
		return obj{"type": "long", "ignore_malformed": true}
	case search.Bool:
		return obj{"type": "boolean"}
	case search.Date:
		return obj{"type": "date", "format": "strict_date", "ignore_malformed": true}
	case search.DateTime:
		return obj{"type": "date", "format": "strict_date_optional_time", "ignore_malformed": true}
	}
	return obj{"type": "keyword"}
}
