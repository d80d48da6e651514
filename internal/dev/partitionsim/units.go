package partitionsim

import (
	"encoding/json"
	"math"
)

// table is what the simulator needs of a table's description: its key
// attributes and those of its global secondary indexes with their
// projections.
type table struct {
	name    string
	pk, sk  string
	indexes []index
}

type index struct {
	name, pk, sk string
	projection   string // ALL, KEYS_ONLY or INCLUDE
	include      []string
}

// describeOutput is the part of DescribeTable's answer a table is read from.
type describeOutput struct {
	Table struct {
		TableName              string
		KeySchema              []keyElement
		GlobalSecondaryIndexes []struct {
			IndexName  string
			KeySchema  []keyElement
			Projection struct {
				ProjectionType   string
				NonKeyAttributes []string
			}
		}
	}
}

type keyElement struct{ AttributeName, KeyType string }

func keysOf(schema []keyElement) (pk, sk string) {
	for _, k := range schema {
		if k.KeyType == "HASH" {
			pk = k.AttributeName
		} else {
			sk = k.AttributeName
		}
	}
	return pk, sk
}

func parseTable(body []byte) (*table, error) {
	var d describeOutput
	if err := json.Unmarshal(body, &d); err != nil {
		return nil, err
	}
	t := &table{name: d.Table.TableName}
	t.pk, t.sk = keysOf(d.Table.KeySchema)
	for _, g := range d.Table.GlobalSecondaryIndexes {
		ix := index{name: g.IndexName, projection: g.Projection.ProjectionType, include: g.Projection.NonKeyAttributes}
		ix.pk, ix.sk = keysOf(g.KeySchema)
		t.indexes = append(t.indexes, ix)
	}
	return t, nil
}

// access is the capacity one request takes from one partition key value
// of a table or of one of its indexes.
type access struct {
	key   Key
	sk    string // the sort key written (writes only), for heat splits
	write bool
	units float64
}

// writeUnits is the write units of an item of size bytes: one per KB.
func writeUnits(size int) float64 { return math.Max(1, math.Ceil(float64(size)/1024)) }

// readUnits is the read units of reading size bytes at once: one per 4
// KB strongly consistent, half that eventually consistent.
func readUnits(size int, consistent bool) float64 {
	u := math.Max(1, math.Ceil(float64(size)/4096))
	if !consistent {
		u /= 2
	}
	return u
}

// writes is the capacity that replacing old by new (either nil: a put of a
// new item, a delete) takes, as DynamoDB charges it: the table's write of
// the larger of the two (twice in a transaction), and for each index the
// item is or was in, one write of its projection when it changed, two when
// its index key changed (the old entry deleted, the new one put).
// (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/GSI.html#GSI.ThroughputConsiderations.Writes)
func (t *table) writes(key item, old, new item, transactional bool) []access {
	size := max(old.size(), new.size())
	u := writeUnits(size)
	if transactional {
		u *= 2
	}
	out := []access{{key: Key{Table: t.name, PK: str(key[t.pk])}, sk: str(key[t.sk]), write: true, units: u}}
	for _, ix := range t.indexes {
		was, is := ix.project(t, old), ix.project(t, new)
		switch {
		case was == nil && is == nil, equal(was, is):
		case was != nil && is != nil && str(was[ix.pk]) == str(is[ix.pk]) && str(was[ix.sk]) == str(is[ix.sk]):
			out = append(out, ix.write(t, is, max(was.size(), is.size())))
		default:
			if was != nil {
				out = append(out, ix.write(t, was, was.size()))
			}
			if is != nil {
				out = append(out, ix.write(t, is, is.size()))
			}
		}
	}
	return out
}

func (ix index) write(t *table, entry item, size int) access {
	return access{key: Key{Table: t.name, Index: ix.name, PK: str(entry[ix.pk])}, sk: str(entry[ix.sk]), write: true, units: writeUnits(size)}
}

// indexNamed is the table's index of that name.
func (t *table) indexNamed(name string) (index, bool) {
	for _, ix := range t.indexes {
		if ix.name == name {
			return ix, true
		}
	}
	return index{}, false
}
