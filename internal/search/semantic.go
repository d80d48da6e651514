package search

import (
	"cmp"
	"context"
	"slices"
	"strings"

	"github.com/sourcebase/sourcebase/internal/apperr"
)

// Hybrid search and similar records rank by meaning as well as by words:
// every searchable record has an embedding vector of its text fields
// (SemanticText), kept by package search/vectors, and the engines fuse a
// keyword ranking and a vector ranking by reciprocal rank fusion (Fuse).

// Rankings a search answers in metadata.ranking.
const (
	// RankingHybrid: keyword and vector rankings fused (Fuse).
	RankingHybrid = "hybrid"
	// RankingSemantic: by cosine similarity to a record (similar records).
	RankingSemantic = "semantic"
)

// SemanticPending is metadata.semantic when a result's record (or the
// record whose similar records were asked) has no embedding yet: it is
// found by keyword now, and by meaning once its embedding lands.
const SemanticPending = "pending"

// SemanticCandidates is how many nearest records by meaning (among those
// the filters admit) a hybrid search adds to its keyword matches: a
// hybrid search answers the keyword matches and these, fused.
const SemanticCandidates = 100

// RRFK is reciprocal rank fusion's constant k: a record at rank r (from
// 1) of a ranking scores 1/(RRFK+r) from it (Cormack, Clarke and
// Buettcher, 2009, whose k of 60 OpenSearch's and Elasticsearch's RRF
// take too).
const RRFK = 60

// MaxSimilar is the deepest (page-1)*limit+limit a similar records
// request reaches (ParsePaging's bounds, as a search's).
const MaxSimilar = MaxOffset + MaxLimit

// ErrSemanticOff: the deployment has no embedding model (EMBEDDINGS=off),
// so similar records cannot be found: 501 semantic_off.
var ErrSemanticOff = apperr.Coded(apperr.CodeSemanticOff, "",
	"this deployment has no embedding model (EMBEDDINGS=off, or OpenSearch Serverless), so it cannot find records by meaning; search by text instead")

// SemanticText is the text of rec that its embedding is made of: the
// values of s's text-weighted fields, heaviest first (then in schema
// order), joined by newlines. Empty when the record has none.
func SemanticText(s *Schema, rec map[string]any) string {
	fields := make([]Field, 0, 4)
	for _, f := range s.Fields {
		if f.Weight > 0 {
			fields = append(fields, f)
		}
	}
	slices.SortStableFunc(fields, func(a, b Field) int { return cmp.Compare(b.Weight, a.Weight) })
	var b strings.Builder
	for _, f := range fields {
		for _, v := range ValuesAt(rec, f.Name) {
			str, ok := v.(string)
			if str = strings.TrimSpace(str); !ok || str == "" {
				continue
			}
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(str)
		}
	}
	return b.String()
}

// Fuse merges rankings (ids, best first) by reciprocal rank fusion: an id
// scores the sum of 1/(RRFK+rank) over the rankings that hold it; ties go
// to the larger id (the newer record), as everywhere in search.
func Fuse(rankings ...[]string) []string {
	score := map[string]float64{}
	var ids []string
	for _, ranking := range rankings {
		for i, id := range ranking {
			if _, seen := score[id]; !seen {
				ids = append(ids, id)
			}
			score[id] += 1 / float64(RRFK+i+1)
		}
	}
	slices.SortFunc(ids, func(a, b string) int {
		if c := cmp.Compare(score[b], score[a]); c != 0 {
			return c
		}
		return cmp.Compare(b, a)
	})
	return ids
}

// Dot is the dot product of two vectors of the same length: their cosine
// similarity when both are of unit length (embed.Provider's are).
func Dot(a, b []float32) float32 {
	var s float32
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// Similarity is one record's cosine similarity to a query vector.
type Similarity struct {
	ID    string
	Score float32
}

// Nearest sorts sims by score, highest first (ties: the larger id first),
// and keeps the first n (all when n < 0).
func Nearest(sims []Similarity, n int) []Similarity {
	slices.SortFunc(sims, func(a, b Similarity) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return cmp.Compare(b.ID, a.ID)
	})
	if n >= 0 && len(sims) > n {
		sims = sims[:n]
	}
	return sims
}

// Similarer answers the records nearest by meaning to one record: Request's
// Filter and paging apply (Text, Sort, Fuzzy, FullText, Hybrid do not).
type Similarer interface {
	Similar(ctx context.Context, org string, s *Schema, id string, r *Request) (*Result, error)
}
