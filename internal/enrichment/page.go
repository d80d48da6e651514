package enrichment

import (
	"context"
	"encoding/json"
	"slices"

	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/clock"
	"github.com/sourcebase/sourcebase/internal/store"
)

// rankKey is where a candidate stands in a record's listing (its
// property, then what Compare ranks by): the position a page's cursor
// holds, so that the next page goes on after it even when that candidate
// was deleted since.
type rankKey struct {
	Property   string      `json:"p"`
	Pinned     bool        `json:"n,omitempty"`
	PinnedAt   *clock.Time `json:"a,omitempty"`
	Confidence float64     `json:"c"`
	Source     string      `json:"s"`
	CapturedOn clock.Time  `json:"t"`
	ID         string      `json:"i"`
}

// maxRankKey bounds a cursor's position: a rankKey's JSON.
const maxRankKey = 1024

func keyOf(v *Value) string {
	b, _ := json.Marshal(rankKey{Property: v.Property, Pinned: v.Pinned, PinnedAt: v.PinnedAt, Confidence: v.Confidence,
		Source: v.Source, CapturedOn: v.CapturedOn, ID: v.ID})
	return string(b)
}

// Page is one page of a record's candidate values in the listing's order
// (by property in the type's order, then rank): up to q.Limit values
// (every one when q.Limit is 0), after the value q.Cursor names (the
// X-Next-Cursor of the previous page) and then q.Offset more (page); the
// HTTP layer ends it early at its byte budget. A page reads every candidate of the record (one strongly
// consistent Query, as every write does) and ranks them. A candidate whose
// rank changes between two pages (pinned, say) may be listed twice or not
// at all, as a record whose sort field changes in a sorted list.
func (s *Service) Page(ctx context.Context, org, typ, id string, q store.Query) (store.Page[Value], error) {
	bind := store.Binding("enrichment", org, typ, id)
	var after *rankKey
	if q.Cursor != "" {
		pos, err := store.DecodeCursor(q.Cursor, bind, maxRankKey)
		if err != nil {
			return store.NewPage[Value](nil, nil, bind, false), err
		}
		var k rankKey
		if json.Unmarshal([]byte(pos), &k) != nil || k.ID == "" {
			return store.NewPage[Value](nil, nil, bind, false), apperr.InvalidQuery("cursor",
				"is not a valid cursor; pass the X-Next-Cursor header (or the Link header's URL) of the previous page unchanged")
		}
		after = &k
	}
	t, err := s.existing(ctx, org, typ, id)
	if err != nil {
		return store.NewPage[Value](nil, nil, bind, false), err
	}
	vals, _, err := s.read(ctx, org, typ, id)
	if err != nil {
		return store.NewPage[Value](nil, nil, bind, false), err
	}
	ranked := t.ranked(vals)
	start := 0
	if after != nil {
		last := Value{ID: after.ID, Property: after.Property, Pinned: after.Pinned, PinnedAt: after.PinnedAt,
			Confidence: after.Confidence, Source: after.Source, CapturedOn: after.CapturedOn}
		order := t.order()
		if _, ok := order[last.Property]; !ok {
			return store.NewPage[Value](nil, nil, bind, false), apperr.InvalidQuery("cursor", "names a property %q that %s do not have", last.Property, typ)
		}
		start = len(ranked)
		for i := range ranked {
			if t.compare(order, last, ranked[i]) < 0 {
				start = i
				break
			}
		}
	}
	start = min(start+q.Offset, len(ranked))
	end := len(ranked)
	if q.Limit > 0 {
		end = min(start+q.Limit, end)
	}
	items := slices.Clone(ranked[start:end])
	pos := make([]string, len(items))
	for i := range items {
		pos[i] = keyOf(&items[i])
	}
	return store.NewPage(items, pos, bind, end < len(ranked)), nil
}

// order is each property's place in the listing.
func (t *Type) order() map[string]int {
	pos := make(map[string]int, len(t.Properties))
	for i, p := range t.Properties {
		pos[p] = i
	}
	return pos
}

// compare orders two candidates as the listing does: by property, then
// rank (Compare).
func (t *Type) compare(order map[string]int, a, b Value) int {
	if a.Property != b.Property {
		return order[a.Property] - order[b.Property]
	}
	return Compare(a, b)
}
