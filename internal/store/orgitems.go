package store

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// An organization's items, whole: what the operator's list-orgs counts,
// export-org writes out, restore-org writes back and delete-org deletes
// (package admin). Every item an organization owns is found by OwnerOf,
// from its key alone where the key says (every "ORG#<org>…" partition,
// a work queue's item naming the organization) and otherwise from the
// index keys or the record it holds (an API key's item, a trigger's
// route), so that a Scan of the table finds them all.

// OrgIDPrefix starts every organization id (ids.New("org")).
const OrgIDPrefix = "org_"

// OwnerOf is the organization that owns item, "" for an item of none:
// a rate limit counter (RATE#…, expiring within minutes), an item of a
// table outside the service's layout.
func OwnerOf(item Image) string {
	pk, sk := ImageString(item, AttrPK), ImageString(item, AttrSK)
	if org := orgOfKey(pk); org != "" {
		return org
	}
	if strings.HasPrefix(pk, TypeRate+"#") {
		return ""
	}
	if isQueue(queueName(pk)) {
		// A queue's item names its organization: a partition to purge
		// ("ORG#<org>#…"), a pending job ("<org>#<job>").
		if org := orgOfKey(sk); org != "" {
			return org
		}
		if org, _, _ := strings.Cut(sk, "#"); strings.HasPrefix(org, OrgIDPrefix) {
			return org
		}
	}
	// A partition of one organization's own named by its id after its
	// type ("JOBSLOT#<org>").
	for _, part := range strings.Split(pk, "#")[1:] {
		if strings.HasPrefix(part, OrgIDPrefix) {
			return part
		}
	}
	// An item outside the organizations' partitions (an API key, a
	// trigger's route): its index keys are the organization's, or its
	// record names it.
	for _, ix := range Indexes {
		if org := orgOfKey(ImageString(item, ix.PK)); org != "" {
			return org
		}
	}
	if text, ok, err := docText(item); ok && err == nil {
		var doc struct {
			OrganizationID string `json:"organizationId"`
		}
		if json.Unmarshal([]byte(text), &doc) == nil && doc.OrganizationID != "" {
			return doc.OrganizationID
		}
	}
	return ""
}

// orgOfKey is <org> of a key value "ORG#<org>[#…]", "" for any other.
func orgOfKey(v string) string {
	rest, ok := strings.CutPrefix(v, "ORG#")
	if !ok {
		return ""
	}
	org, _, _ := strings.Cut(rest, "#")
	return org
}

// queueName is the name of a work queue's partition ("PURGE",
// "PURGE#12": PURGE).
func queueName(pk string) string {
	name, _, _ := strings.Cut(pk, "#")
	return name
}

// ItemType is the type of an item for an operator's counts: its type
// attribute when it has one, else the type part of its partition key
// ("ORG#<org>#COMPANY@03…": COMPANY), else the partition key's first part.
func ItemType(item Image) string {
	if t := ImageString(item, AttrType); t != "" {
		return t
	}
	pk := ImageString(item, AttrPK)
	if rest, ok := strings.CutPrefix(pk, "ORG#"); ok {
		_, typ, found := strings.Cut(rest, "#")
		if !found {
			return TypeOrg
		}
		typ, _, _ = strings.Cut(typ, "#")
		typ, _, _ = strings.Cut(typ, "@")
		return typ
	}
	return queueName(pk)
}

// ItemSize is item's size as DynamoDB counts it against the 400 KB
// limit and bills its storage: the lengths of its attribute names and
// values (numbers: their digits; DynamoDB's own encoding of a number is
// up to a byte shorter or longer).
func ItemSize(item Image) int {
	n := 0
	for k, v := range item {
		n += len(k) + attrSize(v)
	}
	return n
}

// StoredSize is what item takes in storage as DynamoDB bills it: its
// size and 100 bytes of overhead, in the table and again in every index
// that holds it (the indexes projecting every attribute hold it whole;
// a keys-only index its keys).
func StoredSize(item Image) int64 {
	size := ItemSize(item)
	total := int64(size + 100)
	for _, ix := range Indexes {
		if ImageString(item, ix.PK) == "" {
			continue
		}
		if ix.KeysOnly {
			total += int64(len(AttrPK)+len(AttrSK)+len(ix.PK)+len(ix.SK)+len(ImageString(item, AttrPK))+
				len(ImageString(item, AttrSK))+len(ImageString(item, ix.PK))+len(ImageString(item, ix.SK))) + 100
			continue
		}
		total += int64(size + 100)
	}
	return total
}

// KeyOf is item's primary key.
func KeyOf(item Image) Key { return Key{ImageString(item, AttrPK), ImageString(item, AttrSK)} }

// ScanItems reads the whole table with segments Scans at once (a
// parallel Scan, at least 1), each of its own part of the table, and
// hands every item to fn, from segments goroutines at once. Consistent
// (twice the read units): an item written before the scan began is
// found. It reads every item of every organization: an operator's
// command, billed for the whole table (docs/operations.md), never a
// request's.
func (s *Store) ScanItems(ctx context.Context, segments int, consistent bool, fn func(Image) error) error {
	segments = max(segments, 1)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	errs := make([]error, segments)
	for seg := range segments {
		wg.Add(1)
		go func() {
			defer wg.Done()
			in := &dynamodb.ScanInput{TableName: aws.String(s.Table), ConsistentRead: aws.Bool(consistent),
				Segment: aws.Int32(int32(seg)), TotalSegments: aws.Int32(int32(segments))}
			for p := dynamodb.NewScanPaginator(s.DB, in); p.HasMorePages(); {
				page, err := p.NextPage(ctx)
				if err != nil {
					errs[seg] = classify(ctx, fmt.Errorf("scan %s (segment %d of %d): %w", s.Table, seg, segments, err))
					cancel()
					return
				}
				for _, item := range page.Items {
					if err := fn(item); err != nil {
						errs[seg] = err
						cancel()
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	// The first failure, not the cancellations it caused.
	for _, err := range errs {
		if err != nil && !errors.Is(err, context.Canceled) {
			return err
		}
	}
	return errors.Join(errs...)
}

// ErrItemDiffers is wrapped by RestoreItem's error when the table holds
// another item under the key of the item to restore.
var ErrItemDiffers = errors.New("another item is stored under its key")

// RestoreItem writes item exactly as given (none of the attributes a
// write adds) unless an item has its key: written is false when the
// table held this very item already (a restore run again), and the error
// wraps ErrItemDiffers when it held another (never overwritten).
func (s *Store) RestoreItem(ctx context.Context, item Image) (written bool, err error) {
	k := KeyOf(item)
	_, err = s.DB.PutItem(ctx, &dynamodb.PutItemInput{
		TableName: aws.String(s.Table), Item: item,
		ConditionExpression:                 aws.String("attribute_not_exists(pk)"),
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	var failed *types.ConditionalCheckFailedException
	if !errors.As(err, &failed) {
		if err != nil {
			return false, classify(ctx, fmt.Errorf("restore %s %s: %w", k.PK, k.SK, err))
		}
		return true, nil
	}
	old := failed.Item
	if old == nil { // a DynamoDB that does not return it: read it
		out, err := s.DB.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(s.Table), Key: key(k.PK, k.SK), ConsistentRead: aws.Bool(true)})
		if err != nil {
			return false, classify(ctx, fmt.Errorf("read %s %s: %w", k.PK, k.SK, err))
		}
		old = out.Item
	}
	if SameItem(old, item) {
		return false, nil
	}
	return false, fmt.Errorf("%s %s: %w", k.PK, k.SK, ErrItemDiffers)
}

// SameItem reports whether a and b hold the same attributes and values.
func SameItem(a, b Image) bool {
	ja, err1 := MarshalItem(a)
	jb, err2 := MarshalItem(b)
	return err1 == nil && err2 == nil && string(ja) == string(jb)
}

// DeleteKeys deletes the items at keys, 25 to a BatchWriteItem, sending
// again what DynamoDB left unprocessed (throttled) after a growing wait.
// An absent item is no error: deleting again is harmless.
func (s *Store) DeleteKeys(ctx context.Context, keys []Key) error {
	for len(keys) > 0 {
		n := min(len(keys), 25)
		reqs := make([]types.WriteRequest, 0, n)
		seen := map[Key]bool{}
		for _, k := range keys[:n] {
			if seen[k] { // a batch may not name one key twice
				continue
			}
			seen[k] = true
			reqs = append(reqs, types.WriteRequest{DeleteRequest: &types.DeleteRequest{Key: key(k.PK, k.SK)}})
		}
		keys = keys[n:]
		for attempt := 0; len(reqs) > 0; attempt++ {
			out, err := s.DB.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{s.Table: reqs}})
			if err != nil {
				return classify(ctx, fmt.Errorf("delete items of %s: %w", s.Table, err))
			}
			reqs = out.UnprocessedItems[s.Table]
			if len(reqs) == 0 {
				break
			}
			wait := time.Duration(rand.Int64N(int64(50*time.Millisecond) << min(attempt, 6)))
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(wait):
			}
		}
	}
	return nil
}

// MarshalItem is item as DynamoDB's JSON of attribute values
// ({"pk":{"S":"ORG#…"},"doc":{"B":"…base64…"},"ttl":{"N":"17…"}}), with
// its attributes in name order: lossless, so that UnmarshalItem gives
// back the very item (sets, binary and numbers as stored).
func MarshalItem(item Image) ([]byte, error) {
	m := make(map[string]any, len(item))
	for k, v := range item {
		j, err := avJSON(v)
		if err != nil {
			return nil, fmt.Errorf("attribute %s: %w", k, err)
		}
		m[k] = j
	}
	return json.Marshal(m) // encoding/json writes map keys sorted
}

// UnmarshalItem reads an item MarshalItem wrote.
func UnmarshalItem(b []byte) (Image, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	item := make(Image, len(m))
	for k, raw := range m {
		v, err := avFromJSON(raw)
		if err != nil {
			return nil, fmt.Errorf("attribute %s: %w", k, err)
		}
		item[k] = v
	}
	return item, nil
}

func avJSON(v types.AttributeValue) (map[string]any, error) {
	b64 := base64.StdEncoding.EncodeToString
	switch x := v.(type) {
	case *types.AttributeValueMemberS:
		return map[string]any{"S": x.Value}, nil
	case *types.AttributeValueMemberN:
		return map[string]any{"N": x.Value}, nil
	case *types.AttributeValueMemberB:
		return map[string]any{"B": b64(x.Value)}, nil
	case *types.AttributeValueMemberBOOL:
		return map[string]any{"BOOL": x.Value}, nil
	case *types.AttributeValueMemberNULL:
		return map[string]any{"NULL": true}, nil
	case *types.AttributeValueMemberSS:
		return map[string]any{"SS": x.Value}, nil
	case *types.AttributeValueMemberNS:
		return map[string]any{"NS": x.Value}, nil
	case *types.AttributeValueMemberBS:
		out := make([]string, len(x.Value))
		for i, b := range x.Value {
			out[i] = b64(b)
		}
		return map[string]any{"BS": out}, nil
	case *types.AttributeValueMemberL:
		out := make([]any, len(x.Value))
		for i, e := range x.Value {
			j, err := avJSON(e)
			if err != nil {
				return nil, err
			}
			out[i] = j
		}
		return map[string]any{"L": out}, nil
	case *types.AttributeValueMemberM:
		out := make(map[string]any, len(x.Value))
		for k, e := range x.Value {
			j, err := avJSON(e)
			if err != nil {
				return nil, err
			}
			out[k] = j
		}
		return map[string]any{"M": out}, nil
	}
	return nil, fmt.Errorf("an attribute value of type %s", reflect.TypeOf(v))
}

func avFromJSON(raw json.RawMessage) (types.AttributeValue, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	if len(m) != 1 {
		return nil, fmt.Errorf("an attribute value has one type, not %d", len(m))
	}
	for t, v := range m {
		switch t {
		case "S", "N":
			var s string
			if err := json.Unmarshal(v, &s); err != nil {
				return nil, err
			}
			if t == "S" {
				return &types.AttributeValueMemberS{Value: s}, nil
			}
			return &types.AttributeValueMemberN{Value: s}, nil
		case "B":
			var s string
			if err := json.Unmarshal(v, &s); err != nil {
				return nil, err
			}
			b, err := base64.StdEncoding.DecodeString(s)
			return &types.AttributeValueMemberB{Value: b}, err
		case "BOOL":
			var b bool
			err := json.Unmarshal(v, &b)
			return &types.AttributeValueMemberBOOL{Value: b}, err
		case "NULL":
			return &types.AttributeValueMemberNULL{Value: true}, nil
		case "SS", "NS", "BS":
			var ss []string
			if err := json.Unmarshal(v, &ss); err != nil {
				return nil, err
			}
			switch t {
			case "SS":
				return &types.AttributeValueMemberSS{Value: ss}, nil
			case "NS":
				return &types.AttributeValueMemberNS{Value: ss}, nil
			}
			bs := make([][]byte, len(ss))
			for i, s := range ss {
				b, err := base64.StdEncoding.DecodeString(s)
				if err != nil {
					return nil, err
				}
				bs[i] = b
			}
			return &types.AttributeValueMemberBS{Value: bs}, nil
		case "L":
			var l []json.RawMessage
			if err := json.Unmarshal(v, &l); err != nil {
				return nil, err
			}
			out := make([]types.AttributeValue, len(l))
			for i, e := range l {
				av, err := avFromJSON(e)
				if err != nil {
					return nil, err
				}
				out[i] = av
			}
			return &types.AttributeValueMemberL{Value: out}, nil
		case "M":
			var mm map[string]json.RawMessage
			if err := json.Unmarshal(v, &mm); err != nil {
				return nil, err
			}
			out := make(map[string]types.AttributeValue, len(mm))
			for k, e := range mm {
				av, err := avFromJSON(e)
				if err != nil {
					return nil, err
				}
				out[k] = av
			}
			return &types.AttributeValueMemberM{Value: out}, nil
		default:
			return nil, fmt.Errorf("unknown attribute value type %q", t)
		}
	}
	return nil, errors.New("unreachable")
}
