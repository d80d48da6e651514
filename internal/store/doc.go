package store

import (
	"bytes"
	"compress/flate"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// A record's JSON is stored as text (a string doc) unless deflating it
// makes the item cost fewer write units: DynamoDB bills a write 1 unit per
// KB of the item, in the table and again in every index that projects it,
// so an item just over a KB boundary costs a unit more in each copy. Then
// the doc is binary: a format byte (docDeflate) and the JSON deflated
// (RFC 1951). Reads cost per 4 KB and are rarely changed by it, so a doc
// is never deflated when that saves no write unit, and most records (and
// the reads of them) stay text. docs/decisions.md, "Stored docs deflated
// when that saves a write unit".
const docDeflate = 1

// writeUnit is the size DynamoDB bills one write unit for.
const writeUnit = 1024

// maxInflated bounds what one stored doc inflates to: far above the 400
// KB of an item's JSON, so only a damaged doc reaches it.
const maxInflated = 16 << 20

// deflaters deflate at BestSpeed: on a company-sized doc it takes half
// the time of the default level (about 23 µs against 49 on this machine)
// for 3 % more bytes.
var deflaters = sync.Pool{New: func() any {
	w, _ := flate.NewWriter(nil, flate.BestSpeed)
	return w
}}

var inflaters sync.Pool // of io.ReadCloser that are flate.Resetter

// docValue is the stored form of doc in an item whose other attributes
// take rest bytes: text, or deflated when that makes the item cost fewer
// write units.
func docValue(doc []byte, rest int) types.AttributeValue {
	text := rest + len(AttrDoc) + len(doc)
	if text <= writeUnit {
		return &types.AttributeValueMemberS{Value: string(doc)}
	}
	deflated := DeflateDoc(doc)
	if units(rest+len(AttrDoc)+len(deflated)) >= units(text) {
		return &types.AttributeValueMemberS{Value: string(doc)}
	}
	return &types.AttributeValueMemberB{Value: deflated}
}

// DeflateDoc is a doc's binary stored form: a format byte and the JSON
// deflated (InflateDoc reads it).
func DeflateDoc(doc []byte) []byte {
	var buf bytes.Buffer
	buf.WriteByte(docDeflate)
	w := deflaters.Get().(*flate.Writer)
	w.Reset(&buf)
	_, _ = w.Write(doc) // writes to a bytes.Buffer cannot fail
	_ = w.Close()
	deflaters.Put(w)
	return buf.Bytes()
}

func units(size int) int { return (size + writeUnit - 1) / writeUnit }

// itemSize is DynamoDB's size of an item's attributes (names and
// values), close enough to tell which write unit it falls in, with room
// for what a write adds to the item (writeMeta).
func itemSize(av map[string]types.AttributeValue) int {
	n := writeMeta
	for k, v := range av {
		n += len(k) + attrSize(v)
	}
	return n
}

// writeMeta is room for the attributes a write adds to an item after it
// is encoded: its actor, the time it was sent and its write token (about
// 110 bytes; the actor's id varies).
const writeMeta = 130

// docText is an item's record as JSON text, whichever form it is stored
// in; ok is false when the item has no doc, and err says why a binary doc
// cannot be read.
func docText(av map[string]types.AttributeValue) (text string, ok bool, err error) {
	switch doc := av[AttrDoc].(type) {
	case *types.AttributeValueMemberS:
		return doc.Value, true, nil
	case *types.AttributeValueMemberB:
		text, err := InflateDoc(doc.Value)
		return text, true, err
	}
	return "", false, nil
}

// inflated gives an item a page just read its doc as text, so that the
// page's several reads of it (its filter, its byte budget, its decoding)
// inflate a binary doc once; one that cannot be inflated stays as read,
// for its decoding to report. av is the query's own answer, read by no
// one else.
func inflated(av map[string]types.AttributeValue) map[string]types.AttributeValue {
	if doc, ok := av[AttrDoc].(*types.AttributeValueMemberB); ok {
		if text, err := InflateDoc(doc.Value); err == nil {
			av[AttrDoc] = &types.AttributeValueMemberS{Value: text}
		}
	}
	return av
}

// InflateDoc is the JSON of a binary stored doc (as a DynamoDB stream's
// image carries it).
func InflateDoc(b []byte) (string, error) {
	if len(b) == 0 || b[0] != docDeflate {
		return "", errors.New("its binary doc is not in a known format")
	}
	in := bytes.NewReader(b[1:])
	r, _ := inflaters.Get().(io.ReadCloser)
	if r == nil {
		r = flate.NewReader(in)
	} else if err := r.(flate.Resetter).Reset(in, nil); err != nil {
		return "", fmt.Errorf("its binary doc cannot be inflated: %w", err)
	}
	defer inflaters.Put(r)
	// Read straight into one buffer (io.Copy would allocate 32 KB a call).
	var out bytes.Buffer
	out.Grow(4 * len(b))
	n, err := out.ReadFrom(io.LimitReader(r, maxInflated+1))
	if err != nil {
		return "", fmt.Errorf("its binary doc cannot be inflated: %w", err)
	}
	if n > maxInflated {
		return "", errors.New("its binary doc inflates beyond 16 MB")
	}
	return out.String(), nil
}
