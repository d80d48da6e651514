package embedded

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/custom"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/keyword"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	unicodetok "github.com/blevesearch/bleve/v2/analysis/tokenizer/unicode"
	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/blevesearch/bleve/v2/registry"
	bsearch "github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/query"
	index "github.com/blevesearch/bleve_index_api"
	"github.com/sourcebase/sourcebase/internal/fold"
	"github.com/sourcebase/sourcebase/internal/resource"
	"github.com/sourcebase/sourcebase/internal/search"
)

// How a record is indexed in bleve: each searchable field of the schema
// becomes up to three index fields, named by a prefix and the field's
// path (dots as "__"):
//
//	t_<f>  the words of a text-weighted field (Unicode words folded by
//	       fold.Text, so without case or diacritics; English stop words
//	       left out), scored with BM25; a search's text is analyzed
//	       alike, so its terms, fuzzy ones too, are folded;
//	k_<f>  the exact value (eq, ne, in, nin; array elements);
//	l_<f>  the value folded (fold.Text: contains, startsWith, sorting
//	       strings; queries fold their value alike), but for a value
//	       empty folded, which sorts as missing;
//	n_<f>  numbers, and dates and times as epoch milliseconds (the last
//	       one when a record holds several);
//	b_<f>  booleans (the last one);
//
// and hasField lists the fields holding a value (exists). Strings longer
// than search.MaxTermLength are in t_ only. search.Match and
// search.Compare decide filters and order as these fields do.
const (
	hasField     = "_has"
	textAnalyzer = "sourcebase_text"
	foldFilter   = "sourcebase_fold"
)

func init() {
	if err := registry.RegisterTokenFilter(foldFilter, func(map[string]any, *registry.Cache) (analysis.TokenFilter, error) {
		return folding{}, nil
	}); err != nil {
		panic(err)
	}
}

// folding is the token filter that folds each term with fold.Text (the
// folding of contains, startsWith and sort keys), leaving out a term that
// folds to nothing.
type folding struct{}

func (folding) Filter(in analysis.TokenStream) analysis.TokenStream {
	out := in[:0]
	for _, tok := range in {
		if tok.Term = []byte(fold.Text(string(tok.Term))); len(tok.Term) > 0 {
			out = append(out, tok)
		}
	}
	return out
}

func indexName(prefix, field string) string {
	return prefix + strings.ReplaceAll(field, ".", "__")
}

// newMapping is the bleve mapping of a schema: nothing dynamic, BM25.
func newMapping(s *search.Schema) (*mapping.IndexMappingImpl, error) {
	im := bleve.NewIndexMapping()
	im.ScoringModel = index.BM25Scoring
	im.DefaultAnalyzer = textAnalyzer
	if err := im.AddCustomAnalyzer(textAnalyzer, map[string]any{
		"type": custom.Name, "tokenizer": unicodetok.Name, "token_filters": []any{foldFilter, en.StopName},
	}); err != nil {
		return nil, fmt.Errorf("search: analyzer: %w", err)
	}
	dm := bleve.NewDocumentStaticMapping()
	kw := func(analyzer string) *mapping.FieldMapping {
		fm := bleve.NewTextFieldMapping()
		fm.Analyzer = analyzer
		fm.IncludeTermVectors = false
		fm.IncludeInAll = false
		return fm
	}
	dm.AddFieldMappingsAt(hasField, kw(keyword.Name))
	for _, f := range s.Fields {
		if f.Weight > 0 {
			fm := bleve.NewTextFieldMapping()
			fm.Analyzer = textAnalyzer
			fm.IncludeInAll = false
			fm.DocValues = false
			dm.AddFieldMappingsAt(indexName("t_", f.Name), fm)
		}
		switch f.Type {
		case search.Keyword, search.Text, search.Keywords:
			dm.AddFieldMappingsAt(indexName("k_", f.Name), kw(keyword.Name))
			dm.AddFieldMappingsAt(indexName("l_", f.Name), kw(keyword.Name)) // folded by document
		case search.Number, search.Integer, search.Date, search.DateTime:
			fm := bleve.NewNumericFieldMapping()
			fm.IncludeInAll = false
			dm.AddFieldMappingsAt(indexName("n_", f.Name), fm)
		case search.Bool:
			fm := bleve.NewBooleanFieldMapping()
			fm.IncludeInAll = false
			dm.AddFieldMappingsAt(indexName("b_", f.Name), fm)
		}
	}
	im.DefaultMapping = dm
	return im, nil
}

// document is the bleve document of a record (decoded JSON) for s.
func document(s *search.Schema, rec map[string]any) map[string]any {
	doc := map[string]any{}
	var has []string
	for _, f := range s.Fields {
		vals := search.ValuesAt(rec, f.Name)
		if len(vals) == 0 {
			continue
		}
		has = append(has, f.Name)
		var strs []string
		for _, v := range vals {
			switch f.Type {
			case search.Keyword, search.Text, search.Keywords:
				if str, ok := v.(string); ok {
					strs = append(strs, str)
				}
			case search.Number, search.Integer, search.Date, search.DateTime:
				if n, ok := search.NumberOf(f.Type, v); ok {
					doc[indexName("n_", f.Name)] = n
				}
			case search.Bool:
				if b, ok := v.(bool); ok {
					doc[indexName("b_", f.Name)] = b
				}
			}
		}
		if len(strs) == 0 {
			continue
		}
		if f.Weight > 0 {
			doc[indexName("t_", f.Name)] = strs
		}
		var exact, folded []string
		for _, str := range strs {
			if len(str) > search.MaxTermLength {
				continue
			}
			exact = append(exact, str)
			if fs := fold.Text(str); fs != "" {
				folded = append(folded, fs)
			}
		}
		doc[indexName("k_", f.Name)] = exact
		doc[indexName("l_", f.Name)] = folded
	}
	doc[hasField] = has
	return doc
}

// textQuery is the query of r's text over the text-weighted fields, nil
// when there is no text to match.
func textQuery(s *search.Schema, im *mapping.IndexMappingImpl, r *search.Request) query.Query {
	if r.Text == "" {
		return nil
	}
	terms := analyze(im, r.Text)
	if len(terms) == 0 {
		return bleve.NewMatchNoneQuery()
	}
	fuzzy := r.Fuzzy && search.FuzzyApplies(s.Resource, r)
	var weighted []search.Field
	for _, f := range s.Fields {
		if f.Weight > 0 {
			weighted = append(weighted, f)
		}
	}
	// One term anywhere: a disjunction over the fields, each weighted; a
	// fuzzy term also matches near spellings, scored below an exact match.
	termQuery := func(term string) query.Query {
		var per []query.Query
		for _, f := range weighted {
			field := indexName("t_", f.Name)
			tq := bleve.NewTermQuery(term)
			tq.SetField(field)
			tq.SetBoost(f.Weight)
			per = append(per, tq)
			if d := search.Fuzziness(term); fuzzy && d > 0 {
				fq := bleve.NewFuzzyQuery(term)
				fq.SetField(field)
				fq.SetFuzziness(d)
				fq.SetBoost(f.Weight / 2)
				per = append(per, fq)
			}
		}
		return bleve.NewDisjunctionQuery(per...)
	}
	var parts []query.Query
	for _, t := range terms {
		parts = append(parts, termQuery(t))
	}
	if r.FullText {
		return bleve.NewConjunctionQuery(parts...) // every word must match
	}
	return bleve.NewDisjunctionQuery(parts...) // any word matches; more matches rank higher
}

// analyze splits text into the terms the text fields hold.
func analyze(im *mapping.IndexMappingImpl, text string) []string {
	a := im.AnalyzerNamed(textAnalyzer)
	var out []string
	seen := map[string]bool{}
	for _, tok := range a.Analyze([]byte(text)) {
		t := string(tok.Term)
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}

// filterQuery translates a predicate tree (as search.Match decides it).
func filterQuery(s *search.Schema, p *search.Predicate) query.Query {
	var must []query.Query
	if p.Field != "" {
		f, ok := s.Field(p.Field)
		if !ok {
			return bleve.NewMatchNoneQuery()
		}
		must = append(must, leafQuery(f, p.Op, p.Value))
	}
	for _, c := range p.And {
		must = append(must, filterQuery(s, c))
	}
	if len(p.Or) > 0 {
		var alts []query.Query
		for _, c := range p.Or {
			alts = append(alts, filterQuery(s, c))
		}
		must = append(must, bleve.NewDisjunctionQuery(alts...))
	}
	switch len(must) {
	case 0:
		return bleve.NewMatchAllQuery()
	case 1:
		return must[0]
	}
	return bleve.NewConjunctionQuery(must...)
}

func not(q query.Query) query.Query {
	b := bleve.NewBooleanQuery()
	b.AddMust(bleve.NewMatchAllQuery())
	b.AddMustNot(q)
	return b
}

func leafQuery(f search.Field, op search.Op, v any) query.Query {
	switch op {
	case search.Eq:
		return equal(f, v)
	case search.Ne:
		return not(equal(f, v))
	case search.In, search.Nin:
		var alts []query.Query
		for _, e := range v.([]any) {
			alts = append(alts, equal(f, e))
		}
		q := query.Query(bleve.NewDisjunctionQuery(alts...))
		if op == search.Nin {
			q = not(q)
		}
		return q
	case search.Gt, search.Gte, search.Lt, search.Lte:
		n, ok := search.NumberOf(f.Type, v)
		if !ok {
			return bleve.NewMatchNoneQuery()
		}
		var q *query.NumericRangeQuery
		incl := op == search.Gte || op == search.Lte
		if op == search.Gt || op == search.Gte {
			q = bleve.NewNumericRangeInclusiveQuery(&n, nil, &incl, nil)
		} else {
			q = bleve.NewNumericRangeInclusiveQuery(nil, &n, nil, &incl)
		}
		q.SetField(indexName("n_", f.Name))
		return q
	case search.Contains, search.StartsWith:
		if op == search.Contains && f.Type == search.Keywords {
			return equal(f, v)
		}
		str, ok := v.(string)
		if !ok {
			return bleve.NewMatchNoneQuery()
		}
		str = fold.Text(str)
		if str == "" {
			// Every exact value holds the empty string, the empty one
			// too, which l_ leaves out.
			q := bleve.NewPrefixQuery("")
			q.SetField(indexName("k_", f.Name))
			return q
		}
		if op == search.StartsWith {
			q := bleve.NewPrefixQuery(str)
			q.SetField(indexName("l_", f.Name))
			return q
		}
		// (?s): "." also matches a newline, so that the value is found
		// anywhere in a value of several lines.
		q := bleve.NewRegexpQuery("(?s).*" + regexp.QuoteMeta(str) + ".*")
		q.SetField(indexName("l_", f.Name))
		return q
	case search.Exists:
		q := bleve.NewTermQuery(f.Name)
		q.SetField(hasField)
		if v == true {
			return q
		}
		return not(q)
	}
	return bleve.NewMatchNoneQuery()
}

func equal(f search.Field, v any) query.Query {
	switch f.Type {
	case search.Number, search.Integer, search.Date, search.DateTime:
		n, ok := search.NumberOf(f.Type, v)
		if !ok {
			return bleve.NewMatchNoneQuery()
		}
		yes := true
		q := bleve.NewNumericRangeInclusiveQuery(&n, &n, &yes, &yes)
		q.SetField(indexName("n_", f.Name))
		return q
	case search.Bool:
		b, ok := v.(bool)
		if !ok {
			return bleve.NewMatchNoneQuery()
		}
		q := bleve.NewBoolFieldQuery(b)
		q.SetField(indexName("b_", f.Name))
		return q
	}
	str, ok := v.(string)
	if !ok {
		return bleve.NewMatchNoneQuery()
	}
	q := bleve.NewTermQuery(str)
	q.SetField(indexName("k_", f.Name))
	return q
}

// beforeQuery keeps the records whose id is less than before.
func beforeQuery(before string) query.Query {
	no := false
	q := bleve.NewTermRangeInclusiveQuery("", before, nil, &no)
	q.SetField(indexName("k_", resource.FieldID))
	return q
}

// sortOrder is the order of results: the request's keys (missing values
// last, or smallest with MissingSmallest: as search.Compare orders them),
// else relevance when there is text, else newest first; ties by id,
// newest first, so that paging is stable.
func sortOrder(s *search.Schema, r *search.Request) bsearch.SortOrder {
	var order bsearch.SortOrder
	for _, k := range r.Sort {
		f, _ := s.Field(k.Field)
		if f.Name == resource.FieldID {
			order = append(order, &bsearch.SortDocID{Desc: k.Desc})
			continue
		}
		sf := &bsearch.SortField{Desc: k.Desc, Missing: bsearch.SortFieldMissingLast}
		if k.MissingSmallest && !k.Desc {
			sf.Missing = bsearch.SortFieldMissingFirst
		}
		switch f.Type {
		case search.Number, search.Integer, search.Date, search.DateTime:
			sf.Field, sf.Type = indexName("n_", f.Name), bsearch.SortFieldAsNumber
		case search.Bool:
			sf.Field, sf.Type = indexName("b_", f.Name), bsearch.SortFieldAsString
		default:
			sf.Field, sf.Type = indexName("l_", f.Name), bsearch.SortFieldAsString
		}
		order = append(order, sf)
	}
	if len(r.Sort) == 0 && r.Text != "" {
		order = append(order, &bsearch.SortScore{Desc: true})
	}
	return append(order, &bsearch.SortDocID{Desc: true})
}
