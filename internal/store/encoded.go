package store

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"reflect"
	"strings"
	"unsafe"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/jsonbody"
)

// A read that only answers a record to a client need not decode it: when
// the stored JSON already is the record as clients see it, it is the
// answer. A collection whose Spec has a Shape stores every record in that
// form (Spec.View applied before it is encoded) and stamps the item with
// AttrShape: the shape and a checksum of the doc. GetJSON and ListJSON
// answer a stamped item's doc as it is; any other item (written before the
// shape changed, by older code, or edited outside the service, which the
// checksum catches) is decoded, viewed and encoded again, as a typed read
// would show it. Both paths give the same bytes: encoding/json is
// deterministic, numbers in free-form fields keep their text (json.Number),
// and map keys are sorted.

// castagnoli is the CRC-32C table (hardware-accelerated on amd64 and arm64).
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// shapeStamp is the AttrShape value of doc stored in shape.
func shapeStamp(shape string, doc []byte) string {
	sum := checksum(doc)
	return shape + "." + hex.EncodeToString(sum[:])
}

// stamped reports whether stamp is shapeStamp(shape, doc), without
// allocating: the test every passed-through read makes.
func stamped(stamp, shape, doc string) bool {
	return Stamped(stamp, shape, unsafe.Slice(unsafe.StringData(doc), len(doc)))
}

// Stamped reports whether a stored doc is the record exactly as clients
// see it in shape: whether stamp (its item's AttrShape, as Change.Stamp
// and RawRecord.Stamp carry it) names shape and doc's checksum. A reader
// of stored docs (search) answers such a doc as it is.
func Stamped(stamp, shape string, doc []byte) bool {
	var got [4]byte
	if shape == "" || len(stamp) != len(shape)+1+hex.EncodedLen(len(got)) || stamp[:len(shape)] != shape || stamp[len(shape)] != '.' {
		return false
	}
	if _, err := hex.Decode(got[:], []byte(stamp[len(shape)+1:])); err != nil {
		return false
	}
	return got == checksum(doc)
}

// checksum is the CRC-32C of doc, big-endian. It only reads doc, so a
// stored string is checked in place (stamped) rather than copied: the
// copy would cost an allocation of the record's size on every read.
func checksum(doc []byte) [4]byte {
	c := crc32.Checksum(doc, castagnoli)
	return [4]byte{byte(c >> 24), byte(c >> 16), byte(c >> 8), byte(c)}
}

// JSON is a record as clients see it, already encoded, with its stored
// version (its entity tag). It encodes as its text, which is the stored
// item's string itself when it passes through (no copy).
type JSON struct {
	Versioned
	Text string
}

// MarshalJSON returns the encoded record.
func (j JSON) MarshalJSON() ([]byte, error) { return []byte(j.Text), nil }

// EncodedJSON returns the encoded record: the HTTP layer writes it as it
// is, without the validation encoding/json applies to a Marshaler's output.
func (j *JSON) EncodedJSON() string { return j.Text }

// GetJSON reads one record of org as clients see it, encoded;
// apperr.ErrNotFound when absent, and the spec's placeholder (or the
// error) when it cannot be decoded, as Get.
func (c *Collection[T]) GetJSON(ctx context.Context, org, id string) (*JSON, error) {
	if id == "" || len(id) > MaxIDLength {
		return nil, apperr.ErrNotFound
	}
	k := RecordKey(org, c.spec.Type, id)
	av, err := c.store.getItem(ctx, k.PK, k.SK)
	if err != nil {
		return nil, err
	}
	j, err := c.encoded(av)
	if err != nil {
		return nil, err
	}
	return &j, nil
}

// ListJSON is List with each record as clients see it, encoded.
func (c *Collection[T]) ListJSON(ctx context.Context, org string, q Query) (Page[JSON], error) {
	out := Page[JSON]{Items: []JSON{}}
	pq, err := c.pageQuery(ctx, org, q)
	if err != nil {
		return out, err
	}
	if pq.index.KeysOnly {
		return out, fmt.Errorf("store: ListJSON of the keys-only index %s", pq.index.Name)
	}
	var failed error
	pos, more, err := c.store.page(ctx, pq, func(av map[string]types.AttributeValue) bool {
		j, err := c.encoded(av)
		var ue *UndecodableError
		switch {
		case errors.As(err, &ue): // without a placeholder it is skipped
			return false
		case err != nil:
			failed = err
			return false
		}
		out.Items = append(out.Items, j)
		return true
	})
	if err == nil {
		err = failed
	}
	out.finish(pos, pq.bind, more)
	return out, err
}

// Present is a stored doc of the collection, as a reader of stored docs
// (search) holds it with its item's stamp, as clients see it: as it is
// when stamped with the collection's shape, else decoded (numbers kept
// exact), viewed and encoded again, as GetJSON would answer it.
func (c *Collection[T]) Present(doc []byte, stamp string) (json.RawMessage, error) {
	if Stamped(stamp, c.spec.Shape, doc) {
		return doc, nil
	}
	v := new(T)
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return nil, fmt.Errorf("a stored %s cannot be decoded: %s", c.spec.Type, decodeProblem(err))
	}
	c.view(v)
	return jsonbody.Marshal(v)
}

// encoded is the stored record of av as clients see it: its doc when the
// item is stamped with the collection's shape and the doc's checksum,
// else the record decoded, viewed and encoded again (or the
// *UndecodableError of decoded).
func (c *Collection[T]) encoded(av map[string]types.AttributeValue) (JSON, error) {
	var j JSON
	stamp, _ := av[AttrShape].(*types.AttributeValueMemberS)
	if doc, ok, err := docText(av); c.spec.Shape != "" && ok && err == nil && stamp != nil && stamped(stamp.Value, c.spec.Shape, doc) {
		j.Text = doc
		j.SetStoreVersion(itemVersion(av))
		return j, nil
	}
	v, version, err := c.decoded(av)
	if err != nil {
		return j, err
	}
	b, err := jsonbody.Marshal(v)
	if err != nil {
		return j, err
	}
	j.Text = string(b)
	j.SetStoreVersion(version)
	return j, nil
}

// decoded is the record of a stored item as a typed read returns it: the
// spec's Load and View applied, or its placeholder when it cannot be
// decoded; without a placeholder, the *UndecodableError (logged once).
func (c *Collection[T]) decoded(av map[string]types.AttributeValue) (v *T, version int64, err error) {
	v = new(T)
	it, err := decodeItem(av, v)
	var ue *UndecodableError
	switch {
	case errors.As(err, &ue):
		reportUndecodable(ue)
		if c.spec.Undecodable == nil {
			return nil, 0, err
		}
		v, it.Version = c.placeholder(ue), ue.Version
	case c.spec.Load != nil:
		c.spec.Load(v, it.Strings)
	}
	c.view(v)
	return v, it.Version, nil
}

// view applies the spec's View, if any.
func (c *Collection[T]) view(v *T) {
	if c.spec.View != nil {
		c.spec.View(v)
	}
}

// ShapeOf names the JSON form of v's type: its fields' names, options and
// types, recursively, with revisions appended. Stored records stamped with
// an earlier shape are re-encoded on read, so a collection's Shape must
// change whenever the JSON its records encode to could: ShapeOf follows
// the type's structure; a revision string covers what it cannot see (a
// View that now fills a field differently, a MarshalJSON of a field type).
func ShapeOf(v any, revisions ...string) string {
	var b strings.Builder
	describeType(&b, reflect.TypeOf(v), map[reflect.Type]bool{})
	for _, r := range revisions {
		b.WriteString("|")
		b.WriteString(r)
	}
	sum := checksum([]byte(b.String()))
	return hex.EncodeToString(sum[:])
}

var marshaler = reflect.TypeFor[json.Marshaler]()

// describeType writes t's JSON structure.
func describeType(b *strings.Builder, t reflect.Type, seen map[reflect.Type]bool) {
	if t == nil {
		b.WriteString("nil")
		return
	}
	b.WriteString(t.PkgPath() + "." + t.Name() + ":" + t.Kind().String())
	if seen[t] || t.Implements(marshaler) || reflect.PointerTo(t).Implements(marshaler) {
		return
	}
	seen[t] = true
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Array:
		b.WriteString("(")
		describeType(b, t.Elem(), seen)
		b.WriteString(")")
	case reflect.Map:
		b.WriteString("(")
		describeType(b, t.Key(), seen)
		b.WriteString(",")
		describeType(b, t.Elem(), seen)
		b.WriteString(")")
	case reflect.Struct:
		b.WriteString("{")
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() && !f.Anonymous {
				continue
			}
			b.WriteString(f.Name + " " + string(f.Tag) + " ")
			describeType(b, f.Type, seen)
			b.WriteString(";")
		}
		b.WriteString("}")
	}
}
