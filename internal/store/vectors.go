package store

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// A searchable record's embedding vector (package search/vectors) is an
// item of its own, beside the record: the readers that keep a search
// index (the embedded engine, the OpenSearch indexer) put it when the
// record's text changes and read it instead of embedding again. The
// record's deletion deletes it in the same transaction (Collection's
// change feed entry of a delete).

// TypeVector is the item type of a record's embedding vector.
const TypeVector = "VECTOR"

// VectorKey is {"ORG#<org>#VECTOR#<TYPE>#<id>", "VECTOR"}: the embedding
// vector of one record, in a partition of its own (written at the rate of
// the record).
func VectorKey(org, typ, id string) Key {
	return Key{OrgPartition(org, TypeVector) + "#" + typ + "#" + id, TypeVector}
}

// Vector is a record's embedding: the model that made it, a hash of the
// text it was made of (and the model), and its values.
type Vector struct {
	Model  string
	Hash   string
	Values []float32
}

// attributes of a vector item
const (
	attrVectorModel  = "model"
	attrVectorHash   = "hash"
	attrVectorValues = "vec"
)

// Vectors reads the vectors of org's records of typ with the given ids
// (strongly consistent, MaxBatch keys a BatchGetItem): the ids without
// one are left out.
func (s *Store) Vectors(ctx context.Context, org, typ string, ids []string) (map[string]Vector, error) {
	out := make(map[string]Vector, len(ids))
	seen := map[string]bool{}
	var keys []map[string]types.AttributeValue
	flush := func() error {
		err := s.batchGetKeys(ctx, "vectors of "+typ, keys, func(av map[string]types.AttributeValue) error {
			id, v, err := decodeVector(av, org, typ)
			if err != nil {
				return err
			}
			out[id] = v
			return nil
		})
		keys = keys[:0]
		return err
	}
	for _, id := range ids {
		if id == "" || len(id) > MaxIDLength || seen[id] {
			continue
		}
		seen[id] = true
		k := VectorKey(org, typ, id)
		if keys = append(keys, key(k.PK, k.SK)); len(keys) == MaxBatch {
			if err := flush(); err != nil {
				return nil, err
			}
		}
	}
	if len(keys) > 0 {
		if err := flush(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// PutVector puts the vector of org's record id of typ (replacing any).
func (s *Store) PutVector(ctx context.Context, org, typ, id string, v Vector) error {
	k := VectorKey(org, typ, id)
	raw := make([]byte, 4*len(v.Values))
	for i, x := range v.Values {
		binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(x))
	}
	av := key(k.PK, k.SK)
	av[AttrType] = &types.AttributeValueMemberS{Value: TypeVector}
	av[attrVectorModel] = &types.AttributeValueMemberS{Value: v.Model}
	av[attrVectorHash] = &types.AttributeValueMemberS{Value: v.Hash}
	av[attrVectorValues] = &types.AttributeValueMemberB{Value: raw}
	if _, err := s.DB.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(s.Table), Item: av}); err != nil {
		return classify(ctx, fmt.Errorf("put the vector of %s %s: %w", typ, id, err))
	}
	return nil
}

// deleteVectorOp deletes the vector of org's record id of typ, if any.
func (s *Store) deleteVectorOp(org, typ, id string) Op {
	k := VectorKey(org, typ, id)
	return Op{w: types.TransactWriteItem{Delete: &types.Delete{TableName: aws.String(s.Table), Key: key(k.PK, k.SK)}}}
}

// decodeVector reads a vector item of org's records of typ.
func decodeVector(av map[string]types.AttributeValue, org, typ string) (string, Vector, error) {
	pk, _ := av[AttrPK].(*types.AttributeValueMemberS)
	prefix := OrgPartition(org, TypeVector) + "#" + typ + "#"
	if pk == nil || len(pk.Value) <= len(prefix) || pk.Value[:len(prefix)] != prefix {
		return "", Vector{}, fmt.Errorf("store: a vector item outside %s", prefix)
	}
	var v Vector
	if m, ok := av[attrVectorModel].(*types.AttributeValueMemberS); ok {
		v.Model = m.Value
	}
	if h, ok := av[attrVectorHash].(*types.AttributeValueMemberS); ok {
		v.Hash = h.Value
	}
	raw, ok := av[attrVectorValues].(*types.AttributeValueMemberB)
	if !ok || len(raw.Value)%4 != 0 {
		return "", Vector{}, fmt.Errorf("store: the vector item %s has no vector", pk.Value)
	}
	v.Values = make([]float32, len(raw.Value)/4)
	for i := range v.Values {
		v.Values[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw.Value[4*i:]))
	}
	return pk.Value[len(prefix):], v, nil
}
