package store_test

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/sourcebase/sourcebase/internal/dev/testenv"
	"github.com/sourcebase/sourcebase/internal/ids"
	"github.com/sourcebase/sourcebase/internal/store"
)

// incompressible is n characters of random text, which deflate cannot
// make much smaller.
func incompressible(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return base64.RawStdEncoding.EncodeToString(b)[:n]
}

func TestADocIsStoredDeflatedOnlyWhenThatSavesAWriteUnit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	log := &writeLog{}
	db := testenv.Client(t, nil)
	st := testenv.StoreOn(t, dynamodb.New(db.Options(), log.option))
	c := things(st)
	raw := func(id string) types.AttributeValue {
		t.Helper()
		k := store.RecordKey("org1", "THING", id)
		out, err := st.DB.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(st.Table), ConsistentRead: aws.Bool(true),
			Key: map[string]types.AttributeValue{store.AttrPK: &types.AttributeValueMemberS{Value: k.PK}, store.AttrSK: &types.AttributeValueMemberS{Value: k.SK}}})
		if err != nil || out.Item == nil {
			t.Fatalf("read %s: %v", id, err)
		}
		return out.Item[store.AttrDoc]
	}
	for _, tc := range []struct {
		name     string
		text     string
		deflated bool
		units    float64
	}{
		// The record and its copy in the name index: 1 unit each a KB.
		{"small", "a few words", false, 2},
		// Just over a KB as text; well under it deflated.
		{"repetitive, over a KB", strings.Repeat("logistics and freight forwarding ", 40), true, 2},
		// Random text deflates too little to leave its second KB.
		{"random, over a KB", incompressible(1500), false, 4},
		// Far over: deflated it needs fewer KB.
		{"repetitive, many KB", strings.Repeat("a company in the north of the country <&> \u2028 ünïcode ", 300), true, 2},
	} {
		log.take()
		note := tc.text // outside every index key
		v := thing{ID: ids.New("thg"), Name: "n", Note: &note, Count: 7}
		if err := c.Create(ctx, "org1", &v); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if _, units := log.take(); units != tc.units {
			t.Errorf("%s: the create cost %v write units, want %v", tc.name, units, tc.units)
		}
		_, binary := raw(v.ID).(*types.AttributeValueMemberB)
		if binary != tc.deflated {
			t.Errorf("%s: stored deflated = %v, want %v", tc.name, binary, tc.deflated)
		}
		// Every read answers the record as written: Get, a batch read, a
		// list, and the encoded JSON a GET answers.
		got, err := c.Get(ctx, "org1", v.ID)
		if err != nil || got.Note == nil || *got.Note != note || got.Count != 7 {
			t.Errorf("%s: Get = %+v, %v", tc.name, got, err)
		}
		many, err := c.GetMany(ctx, "org1", []string{v.ID})
		if err != nil || len(many) != 1 || *many[0].Note != note {
			t.Errorf("%s: GetMany = %d records, %v", tc.name, len(many), err)
		}
		page, err := c.List(ctx, "org1", store.Query{Limit: 100})
		found := false
		for _, it := range page.Items {
			found = found || it.ID == v.ID && it.Note != nil && *it.Note == note
		}
		if err != nil || !found {
			t.Errorf("%s: the list does not hold the record as written (%v)", tc.name, err)
		}
	}
}

func TestADamagedDeflatedDocIsUndecodableNotAPanic(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := testenv.Store(t)
	c := things(st)
	v := thing{ID: ids.New("thg"), Name: "x"}
	if err := c.Create(ctx, "org1", &v); err != nil {
		t.Fatal(err)
	}
	k := store.RecordKey("org1", "THING", v.ID)
	for _, bad := range [][]byte{{1, 0xff, 0xfe}, {9, 1, 2}, {}} {
		_, err := st.DB.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(st.Table),
			Key:                       map[string]types.AttributeValue{store.AttrPK: &types.AttributeValueMemberS{Value: k.PK}, store.AttrSK: &types.AttributeValueMemberS{Value: k.SK}},
			UpdateExpression:          aws.String("SET #doc = :bad"),
			ExpressionAttributeNames:  map[string]string{"#doc": store.AttrDoc},
			ExpressionAttributeValues: map[string]types.AttributeValue{":bad": &types.AttributeValueMemberB{Value: append(bad, 0)}}})
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.Get(ctx, "org1", v.ID)
		var ue *store.UndecodableError
		if !errors.As(err, &ue) {
			t.Errorf("a damaged binary doc %v read as %v, want an UndecodableError", bad, err)
		}
		// A list passes over it (the collection has no placeholder).
		if page, err := c.List(ctx, "org1", store.Query{Limit: 10}); err != nil || len(page.Items) != 0 {
			t.Errorf("a list with a damaged binary doc %v: %d items, %v; want it passed over", bad, len(page.Items), err)
		}
	}
}

// BenchmarkInflateDoc is the read of a deflated company-sized doc.
func BenchmarkInflateDoc(b *testing.B) {
	doc := `{"id":"cmp_01m8fagjq85yvd6w84b7zfh7wd","canonicalName":"Company 042 logistics","alternativeNames":[],"website":"https://company042.example","linkedinUrl":null,"description":null,"shortDescription":null,"sector":null,"subsector":null,"industry":null,"location":{},"companyType":"operating","origin":"user","externalId":null,"externalReference":{},"tags":["seed"],"assignees":[],"custom":{},"employeeCount":null,"ownershipStatus":null,"lastValuation":null,"lastAmountRaised":null,"totalMoneyRaised":null,"lastRoundDate":null,"lastFinancials":{},"enrichment":{},"lastEnrichedAt":null,"lastEnrichmentStartedAt":null,"createdAt":"2026-11-27T20:17:55.432Z","updatedAt":"2026-11-27T20:17:55.432Z"}`
	z := store.DeflateDoc([]byte(doc))
	b.ReportAllocs()
	for b.Loop() {
		if got, err := store.InflateDoc(z); err != nil || got != doc {
			b.Fatal(err)
		}
	}
}
