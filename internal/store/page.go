package store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/sourcebase/sourcebase/internal/apperr"
)

// Page is one page of a list: its records and, when more records follow,
// the opaque cursor of the next page.
type Page[T any] struct {
	Items []T
	// Next is the cursor that continues after the last item; "" when no
	// record follows (the last page).
	Next string
	// pos[i] is the position (sort key) of Items[i] in the list bind
	// names: the cursor after item i, encoded only where a page ends.
	pos  []string
	bind string
}

// finish records the page's positions and, when more records follow,
// its Next cursor.
func (p *Page[T]) finish(pos []string, bind string, more bool) {
	p.pos, p.bind = pos, bind
	if more && len(pos) > 0 {
		p.Next = encodeCursor(pos[len(pos)-1], bind)
	}
}

// Cut keeps the first n items (at least one when the page has any): the
// page then continues after item n-1. The HTTP layer cuts a page that
// would not fit its byte budget.
func (p Page[T]) Cut(n int) Page[T] {
	n = max(n, min(1, len(p.Items)))
	if n >= len(p.Items) {
		return p
	}
	return Page[T]{Items: p.Items[:n], Next: encodeCursor(p.pos[n-1], p.bind), pos: p.pos[:n], bind: p.bind}
}

// MapPage converts a page's records (to the view a client sees, say),
// keeping its cursors.
func MapPage[T, V any](p Page[T], f func(*T) V) Page[V] {
	out := Page[V]{Items: make([]V, len(p.Items)), Next: p.Next, pos: p.pos, bind: p.bind}
	for i := range p.Items {
		out.Items[i] = f(&p.Items[i])
	}
	return out
}

// itemMargin is added to each record's stored size when a page is filled
// up to a byte budget: room for what a view adds to the stored record.
// The HTTP layer measures the encoded page exactly and cuts it if needed.
const itemMargin = 1024

// WireSize is the number of bytes s takes once encoded inside a JSON
// string, which is how Lambda carries a response body in its (6 MB)
// response payload: quotes and backslashes double, control characters and
// U+2028/U+2029 become six-byte escapes. It is never less than len(s).
func WireSize[S string | []byte](s S) int {
	var quotes, lineSeps int
	switch v := any(s).(type) {
	case string:
		quotes = strings.Count(v, `"`) + strings.Count(v, `\`)
		lineSeps = strings.Count(v, "\u2028") + strings.Count(v, "\u2029")
	case []byte:
		quotes = bytes.Count(v, []byte(`"`)) + bytes.Count(v, []byte(`\`))
		lineSeps = bytes.Count(v, []byte("\u2028")) + bytes.Count(v, []byte("\u2029"))
	}
	return len(s) + quotes + 3*lineSeps + 5*controls(s)
}

// controls counts the bytes of s below 0x20, eight at a time: JSON text
// rarely holds any (its strings escape them), so a word without one is
// passed over in a few instructions.
func controls[S string | []byte](s S) int {
	const highs, below = 0x8080808080808080, 0x20 * 0x0101010101010101
	n, i := 0, 0
	for ; i+8 <= len(s); i += 8 {
		w := uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
			uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
		if (w-below)&^w&highs == 0 {
			continue // no byte below 0x20 (the test is exact when it finds none)
		}
		for _, c := range []byte{s[i], s[i+1], s[i+2], s[i+3], s[i+4], s[i+5], s[i+6], s[i+7]} {
			if c < 0x20 {
				n++
			}
		}
	}
	for ; i < len(s); i++ {
		if s[i] < 0x20 {
			n++
		}
	}
	return n
}

// cursor is a page position: the sort key, in the list's table or index,
// of the last item returned, bound to the list it came from.
type cursor struct {
	Pos  string `json:"p"`
	Bind string `json:"b"`
}

func encodeCursor(pos, bind string) string {
	b, _ := json.Marshal(cursor{Pos: pos, Bind: bind})
	return base64.RawURLEncoding.EncodeToString(b)
}

// decodeCursor returns the position of a cursor issued for the list bind
// names; a 400 naming cursor when it is malformed or from another list.
func decodeCursor(s, bind string, maxPos int) (string, error) {
	const fix = "pass the X-Next-Cursor header (or the Link header's URL) of the previous page unchanged"
	raw, err := base64.RawURLEncoding.DecodeString(s)
	var c cursor
	if err != nil || len(s) > 4096 || json.Unmarshal(raw, &c) != nil || c.Pos == "" || len(c.Pos) > maxPos || !utf8.ValidString(c.Pos) {
		return "", apperr.InvalidQuery("cursor", "is not a valid cursor; %s", fix)
	}
	if c.Bind != bind {
		return "", apperr.InvalidQuery("cursor", "belongs to another list (another sort, direction, lt or organization); page with the parameters the cursor was issued for")
	}
	return c.Pos, nil
}

// binding names a list: a cursor is only accepted by the list it came from.
func binding(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		fmt.Fprintf(h, "%d:%s|", len(p), p)
	}
	return hex.EncodeToString(h.Sum(nil)[:8])
}

// pageQuery is one paged read of a partition, of the table or of an
// index, or of the partitions of every shard of a list (shards.go), merged
// in the order of their sort keys.
type pageQuery struct {
	index       Index // zero: the table itself
	pks         []string
	limit       int
	offset      int
	desc        bool
	before      string // id cursor (lt)
	after       string // sort key of the last item of the previous page
	prefix      string // sort key prefix (begins_with)
	idIsSortKey bool   // the sort key is the id, so the lt cursor is a key condition
	maxBytes    int    // byte budget of the page's records; 0 for none
	bind        string // the list's binding, for the next-page cursors
	// match keeps the records a list's filters accept (Query.Match);
	// order sorts them in memory (Query.Order). With either, the offset
	// counts accepted records, so it is skipped in page, not in items.
	match func(doc string) (any, bool)
	order func(a, b any) int
}

// sortAttr is the attribute whose order the query follows.
func (q pageQuery) sortAttr() string {
	if q.index.Name != "" {
		return q.index.SK
	}
	return AttrSK
}

// input builds the Query and the sort key values to drop: with both an lt
// and a cursor on an ascending id order the key condition is a BETWEEN,
// whose ends are excluded here. empty reports a range that holds nothing.
func (q pageQuery) input(table string) (in *dynamodb.QueryInput, exclude map[string]bool, empty bool) {
	pkAttr := AttrPK
	if q.index.Name != "" {
		pkAttr = q.index.PK
	}
	names := map[string]string{"#pk": pkAttr}
	values := map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: q.pks[0]}}
	cond := "#pk = :pk"
	str := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	var filter *string
	lower, upper := "", "" // exclusive bounds of the sort key
	switch {
	case q.prefix != "":
		names["#sk"] = q.sortAttr()
		values[":prefix"] = str(q.prefix)
		cond += " AND begins_with(#sk, :prefix)"
	case q.idIsSortKey:
		upper = q.before
		if q.after != "" && q.desc && (upper == "" || q.after < upper) {
			upper = q.after
		}
		if q.after != "" && !q.desc {
			lower = q.after
		}
	default:
		if q.after != "" && q.desc {
			upper = q.after
		} else if q.after != "" {
			lower = q.after
		}
		if q.before != "" {
			names["#id"] = AttrSK
			values[":lt"] = str(q.before)
			filter = aws.String("#id < :lt")
		}
	}
	switch {
	case lower != "" && upper != "":
		if lower >= upper {
			return nil, nil, true
		}
		names["#sk"] = q.sortAttr()
		values[":lo"], values[":hi"] = str(lower), str(upper)
		cond += " AND #sk BETWEEN :lo AND :hi"
		exclude = map[string]bool{lower: true, upper: true}
	case lower != "":
		names["#sk"] = q.sortAttr()
		values[":lo"] = str(lower)
		cond += " AND #sk > :lo"
	case upper != "":
		names["#sk"] = q.sortAttr()
		values[":hi"] = str(upper)
		cond += " AND #sk < :hi"
	}
	in = &dynamodb.QueryInput{
		TableName:                 aws.String(table),
		KeyConditionExpression:    aws.String(cond),
		FilterExpression:          filter,
		ExpressionAttributeNames:  names,
		ExpressionAttributeValues: values,
		ScanIndexForward:          aws.Bool(!q.desc),
	}
	if q.index.Name != "" {
		in.IndexName = aws.String(q.index.Name)
	} else {
		in.ConsistentRead = aws.Bool(true)
	}
	return in, exclude, false
}

// items yields the query's items in order after skipping offset items,
// which it reads as keys only, so skipped records are never read whole.
// want says how many more items the caller expects to take: each read
// asks for that many (DynamoDB answers at most 1 MB), so what is read
// beyond the page stays small. The caller stops the sequence when it has
// enough.
func (s *Store) items(ctx context.Context, q pageQuery, want func() int) iter.Seq2[map[string]types.AttributeValue, error] {
	if len(q.pks) > 1 {
		return s.merged(ctx, q, want)
	}
	return func(yield func(map[string]types.AttributeValue, error) bool) {
		in, exclude, empty := q.input(s.Table)
		if empty {
			return
		}
		sortAttr := q.sortAttr()
		skipped := func(av map[string]types.AttributeValue) bool {
			if exclude == nil {
				return false
			}
			v, _ := av[sortAttr].(*types.AttributeValueMemberS)
			return v != nil && exclude[v.Value]
		}

		// Skip the offset reading keys only: the page's items are never
		// decoded. A filtered or ordered list skips in page instead.
		skip := q.offset
		if q.match != nil || q.order != nil {
			skip = 0
		}
		for skip > 0 {
			skipIn := *in
			skipIn.Limit = aws.Int32(int32(min(skip, 1000)))
			skipNames := map[string]string{"#kpk": AttrPK, "#ksk": AttrSK}
			for k, v := range in.ExpressionAttributeNames {
				skipNames[k] = v
			}
			skipIn.ExpressionAttributeNames = skipNames
			skipIn.ProjectionExpression = aws.String("#kpk, #ksk")
			if q.index.Name != "" {
				skipNames["#ipk"], skipNames["#isk"] = q.index.PK, q.index.SK
				skipIn.ProjectionExpression = aws.String("#kpk, #ksk, #ipk, #isk")
			}
			res, err := s.DB.Query(ctx, &skipIn)
			if err != nil {
				yield(nil, fmt.Errorf("query %s: %w", q.pks[0], err))
				return
			}
			passedOver(ctx, int(res.ScannedCount))
			for _, av := range res.Items {
				if !skipped(av) {
					skip--
				}
			}
			if res.LastEvaluatedKey == nil {
				return
			}
			in.ExclusiveStartKey = res.LastEvaluatedKey
		}

		for {
			in.Limit = aws.Int32(int32(min(max(want(), 1), 1001)))
			res, err := s.DB.Query(ctx, in)
			if err != nil {
				yield(nil, fmt.Errorf("query %s: %w", q.pks[0], err))
				return
			}
			passedOver(ctx, int(res.ScannedCount-res.Count)) // refused by the lt filter
			for _, av := range res.Items {
				if skipped(av) {
					continue
				}
				if !yield(inflated(av), nil) {
					return
				}
			}
			if res.LastEvaluatedKey == nil {
				return
			}
			in.ExclusiveStartKey = res.LastEvaluatedKey
		}
	}
}

// merged yields the items of every partition of q.pks (a list's shards)
// in the order of their sort keys, as if they were one partition: each
// partition is read as items reads one, the reads going on as the merge
// takes their items. The offset is skipped by reading the items it skips
// (a sharded list's offset reads them whole).
func (s *Store) merged(ctx context.Context, q pageQuery, want func() int) iter.Seq2[map[string]types.AttributeValue, error] {
	return func(yield func(map[string]types.AttributeValue, error) bool) {
		type head struct {
			next func() (map[string]types.AttributeValue, error, bool)
			stop func()
			av   map[string]types.AttributeValue
			pos  string
		}
		var heads []*head
		defer func() {
			for _, h := range heads {
				h.stop()
			}
		}()
		advance := func(h *head) (bool, error) {
			av, err, ok := h.next()
			if !ok || err != nil {
				return false, err
			}
			h.av, h.pos = av, q.position(av)
			return true, nil
		}
		for _, pk := range q.pks {
			one := q
			one.pks, one.offset = []string{pk}, 0
			next, stop := iter.Pull2(s.items(ctx, one, shardWant(want, len(q.pks))))
			heads = append(heads, &head{next: next, stop: stop})
		}
		// The first read of every shard at once (mergeReads at a time):
		// a page waits for one round trip, not one per shard.
		oks, errs := make([]bool, len(heads)), make([]error, len(heads))
		var wg sync.WaitGroup
		slots := make(chan struct{}, mergeReads)
		for i, h := range heads {
			wg.Add(1)
			slots <- struct{}{}
			go func() {
				defer func() { <-slots; wg.Done() }()
				oks[i], errs[i] = advance(h)
			}()
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			yield(nil, err)
			return
		}
		live := heads[:0]
		for i, h := range heads {
			if oks[i] {
				live = append(live, h)
			} else {
				h.stop()
			}
		}
		heads = live
		skip := q.offset
		if q.match != nil || q.order != nil {
			skip = 0
		}
		for len(heads) > 0 {
			i := 0
			for j, h := range heads {
				if (!q.desc && h.pos < heads[i].pos) || (q.desc && h.pos > heads[i].pos) {
					i = j
				}
			}
			h := heads[i]
			if skip > 0 {
				skip--
				passedOver(ctx, 1)
			} else if !yield(h.av, nil) {
				return
			}
			ok, err := advance(h)
			if err != nil {
				yield(nil, err)
				return
			}
			if !ok {
				h.stop()
				heads = append(heads[:i], heads[i+1:]...)
			}
		}
	}
}

// mergeReads is how many shards' first reads a merged list makes at once.
const mergeReads = 16

// shardWant is how many items each read of one of n merged partitions
// asks for: its share of what the merge wants (and one more), doubling
// at each further read of the partition, up to what the merge wants. A
// page of a sharded list reads about a page in all, not a page of each
// shard, and a shard that holds most of the list gets it in a few reads.
func shardWant(want func() int, n int) func() int {
	batch := 0
	return func() int {
		w := want()
		if batch == 0 {
			batch = max(2, (w+n-1)/n+1)
		} else {
			batch *= 2
		}
		return min(batch, max(w, 2))
	}
}

// position is an item's sort key in the query's order.
func (q pageQuery) position(av map[string]types.AttributeValue) string {
	v, _ := av[q.sortAttr()].(*types.AttributeValueMemberS)
	if v == nil {
		return ""
	}
	return v.Value
}

// MaxPageReads bounds the records one page of a list reads when its
// filters are evaluated on the records read (Query.Match) or its order
// made in memory (Query.Order): a filtered page that has read that many
// ends there, with fewer records than its limit (even none) and a cursor
// that goes on after the last record read; a list ordered in memory, or an
// offset reached through such a filter, that would read more is a
// *ReadLimitError. Store.PageReads lowers it (tests).
const MaxPageReads = 1000

// pageReads is the records a page may read (MaxPageReads, or PageReads).
func (s *Store) pageReads() int {
	if s.PageReads > 0 {
		return s.PageReads
	}
	return MaxPageReads
}

// ReadLimitError is a list that would read more than a page may
// (MaxPageReads) to answer where no cursor can go on from the records
// read: a list ordered in memory (Sort) or an offset (page) reached
// through a filter evaluated on the records read. The list layer turns it
// into a 400 naming what an index serves.
type ReadLimitError struct {
	Sort bool // ordering in memory; else reaching the offset
	Max  int  // the records a page may read
}

func (e *ReadLimitError) Error() string {
	if e.Sort {
		return fmt.Sprintf("store: ordering the list in memory would read more than %d records", e.Max)
	}
	return fmt.Sprintf("store: reaching the page's offset would read more than %d records", e.Max)
}

// page reads up to q.limit items and as many as fit q.maxBytes (at least
// one), calling take for each; take reports whether it kept the item (an
// undecodable item without a placeholder is dropped). page reads one item
// beyond the page to know whether another page follows, and returns the
// position of each kept item. With a match function, items it refuses are
// passed over, and the page ends after reading pageReads items, its last
// position that of the last item read; with an order, the list is read
// whole (up to pageReads items) and sorted first.
func (s *Store) page(ctx context.Context, q pageQuery, take func(av map[string]types.AttributeValue) bool) (pos []string, more bool, err error) {
	total, read, reads := 0, 0, s.pageReads()
	// Up to the limit and one more; with a budget, about as many as the
	// records seen so far say fit in what is left of it, and one more.
	want := func() int {
		n := q.limit + 1 - len(pos)
		if q.maxBytes > 0 && len(pos) > 0 {
			n = min(n, (q.maxBytes-total)/(total/len(pos))+1)
		}
		if q.match != nil {
			// A filter passes over records: read more at a time, never
			// past what the page may read.
			n = min(max(n*4, 100), reads-read)
		}
		return n
	}
	seq, position := s.items(ctx, q, want), q.position
	skip := 0
	if q.match != nil || q.order != nil {
		skip = q.offset
	}
	if q.order != nil {
		ordered, err := s.ordered(ctx, q)
		if err != nil {
			return nil, false, err
		}
		start := min(skip, len(ordered))
		seq = func(yield func(map[string]types.AttributeValue, error) bool) {
			for _, av := range ordered[start:] {
				if !yield(av, nil) {
					return
				}
			}
		}
		n := start
		position = func(map[string]types.AttributeValue) string { n++; return strconv.Itoa(n) }
		skip = 0
		defer func() { passedOver(ctx, -len(pos)) }() // ordered() counted every record read
	}
	for av, err := range seq {
		if err != nil {
			return pos, false, err
		}
		if q.match != nil && q.order == nil {
			read++
			_, ok := q.match(docOf(av))
			if !ok || skip > 0 {
				if ok {
					skip--
				}
				passedOver(ctx, 1)
				if read < reads {
					continue
				}
				if skip > 0 {
					return pos, false, &ReadLimitError{Max: reads}
				}
				// The page has read what it may: it ends here, and the
				// next goes on after the record read last.
				return append(pos, position(av)), true, nil
			}
		}
		if len(pos) == q.limit {
			return pos, true, nil
		}
		if q.maxBytes > 0 && len(pos) > 0 && total+estimate(av) > q.maxBytes {
			return pos, true, nil
		}
		p := position(av)
		if !take(av) {
			continue
		}
		total += estimate(av)
		pos = append(pos, p)
		if q.match != nil && q.order == nil && read >= reads {
			return pos, true, nil
		}
	}
	return pos, false, nil
}

// ordered reads every item of the list that q.match accepts, in the
// order q.order gives them; a list of more than pageReads items (or
// MaxOrderedBytes of them) is a *ReadLimitError.
func (s *Store) ordered(ctx context.Context, q pageQuery) ([]map[string]types.AttributeValue, error) {
	type entry struct {
		av map[string]types.AttributeValue
		v  any
	}
	var all []entry
	size, read, reads := 0, 0, s.pageReads()
	whole := q
	whole.offset, whole.after = 0, ""
	for av, err := range s.items(ctx, whole, func() int { return reads + 1 - read }) {
		if err != nil {
			return nil, err
		}
		if read++; read > reads {
			return nil, &ReadLimitError{Sort: true, Max: reads}
		}
		passedOver(ctx, 1)
		v, ok := any(nil), true
		if q.match != nil {
			v, ok = q.match(docOf(av))
		}
		if !ok {
			continue
		}
		if size += len(docOf(av)); size > MaxOrderedBytes {
			return nil, &ReadLimitError{Sort: true, Max: reads}
		}
		all = append(all, entry{av, v})
	}
	slices.SortStableFunc(all, func(a, b entry) int { return q.order(a.v, b.v) })
	out := make([]map[string]types.AttributeValue, len(all))
	for i, e := range all {
		out[i] = e.av
	}
	return out, nil
}

// docOf is an item's stored doc ("" when it has none).
func docOf(av map[string]types.AttributeValue) string {
	doc, _, _ := docText(av) // one that cannot be read is undecodable where it is decoded
	return doc
}

// estimate is what an item adds to a page before it is decoded: its
// record's JSON as Lambda carries it, plus room for what a view adds.
func estimate(av map[string]types.AttributeValue) int {
	doc, ok, _ := docText(av)
	if !ok {
		return itemMargin
	}
	return WireSize(doc) + itemMargin
}

// NewPage is a page of a list its caller orders and cuts itself (a list
// ranked in memory): items, the position of each (pos[i], the cursor
// after items[i] encodes it), the list's binding (Binding) and whether
// more items follow. Like a page the store reads, the HTTP layer may cut
// it to its byte budget and hand out the cursor after its last item.
func NewPage[T any](items []T, pos []string, bind string, more bool) Page[T] {
	if items == nil {
		items = []T{}
	}
	p := Page[T]{Items: items}
	p.finish(pos, bind, more)
	return p
}

// Binding names a list from its parts (its kind, organization, record,
// order): a cursor is only accepted by the list it was issued for.
func Binding(parts ...string) string { return binding(parts...) }

// DecodeCursor returns the position of a cursor issued for the list bind
// names (by NewPage); a 400 naming cursor when it is malformed, longer
// than maxPos or from another list.
func DecodeCursor(s, bind string, maxPos int) (string, error) { return decodeCursor(s, bind, maxPos) }
