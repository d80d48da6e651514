package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/dev/testenv"
	"github.com/sourcebase/sourcebase/internal/ids"
	"github.com/sourcebase/sourcebase/internal/jsonbody"
	"github.com/sourcebase/sourcebase/internal/store"
)

// shaped is a record type with a View (empty tags are [], never null)
// and free-form data whose numbers must keep their text.
type shaped struct {
	store.Versioned
	ID   string         `json:"id"`
	Name string         `json:"name"`
	Tags []string       `json:"tags"`
	Data map[string]any `json:"data"`
}

func shapedSpec(shape string) store.Spec[shaped] {
	return store.Spec[shaped]{
		Type:    "SHAPED",
		ID:      func(s *shaped) string { return s.ID },
		IDOrder: []string{"createdAt"},
		View: func(s *shaped) {
			if s.Tags == nil {
				s.Tags = []string{}
			}
		},
		Shape: shape,
	}
}

// setDoc replaces an item's stored JSON behind the store's back, leaving
// its other attributes (its shape stamp included) as they are.
func setDoc(t *testing.T, st *store.Store, k store.Key, doc string) {
	t.Helper()
	_, err := st.DB.UpdateItem(context.Background(), &dynamodb.UpdateItemInput{
		TableName: aws.String(st.Table),
		Key: map[string]types.AttributeValue{
			store.AttrPK: &types.AttributeValueMemberS{Value: k.PK}, store.AttrSK: &types.AttributeValueMemberS{Value: k.SK},
		},
		UpdateExpression:          aws.String("SET #doc = :doc"),
		ExpressionAttributeNames:  map[string]string{"#doc": store.AttrDoc},
		ExpressionAttributeValues: map[string]types.AttributeValue{":doc": &types.AttributeValueMemberS{Value: doc}},
	})
	if err != nil {
		t.Fatal(err)
	}
}

// typed is what a typed read answers for the record: its JSON.
func typed(t *testing.T, c *store.Collection[shaped], org, id string) string {
	t.Helper()
	v, err := c.Get(context.Background(), org, id)
	if err != nil {
		t.Fatal(err)
	}
	b, err := jsonbody.Marshal(v) // as an answer encodes it
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestEncodedReadsAnswerWhatATypedReadAnswersWhateverTheItemHolds(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := testenv.Store(t)
	shape := store.ShapeOf(shaped{})
	c := store.NewCollection(st, shapedSpec(shape))
	org := ids.New("org")

	// Written by the collection: stored as viewed, stamped, answered as stored.
	big := json.Number("12345678901234567890123")
	v := shaped{ID: ids.New("shp"), Name: `<b>&"x"`, Data: map[string]any{"n": big, "z": nil, "a": []any{1.5, "é"}}}
	if err := c.Create(ctx, org, &v); err != nil {
		t.Fatal(err)
	}
	k := store.RecordKey(org, "SHAPED", v.ID)
	res, err := st.DB.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(st.Table), Key: map[string]types.AttributeValue{
		store.AttrPK: &types.AttributeValueMemberS{Value: k.PK}, store.AttrSK: &types.AttributeValueMemberS{Value: k.SK}}})
	if err != nil {
		t.Fatal(err)
	}
	stamp, _ := res.Item[store.AttrShape].(*types.AttributeValueMemberS)
	if stamp == nil || !strings.HasPrefix(stamp.Value, shape+".") {
		t.Fatalf("the item's shape stamp is %v, want %s.<checksum>", res.Item[store.AttrShape], shape)
	}
	doc := res.Item[store.AttrDoc].(*types.AttributeValueMemberS).Value
	if !strings.Contains(doc, `"tags":[]`) || !strings.Contains(doc, big.String()) {
		t.Fatalf("the stored record is not the viewed one, numbers exact: %s", doc)
	}

	check := func(t *testing.T, c *store.Collection[shaped], wantVersion string) {
		t.Helper()
		want := typed(t, c, org, v.ID)
		j, err := c.GetJSON(ctx, org, v.ID)
		if err != nil {
			t.Fatal(err)
		}
		if string(j.Text) != want {
			t.Errorf("GetJSON answered\n%s\na typed Get answers\n%s", j.Text, want)
		}
		if j.ETag() != wantVersion {
			t.Errorf("GetJSON's entity tag is %s, want %s", j.ETag(), wantVersion)
		}
		p, err := c.ListJSON(ctx, org, store.Query{Limit: 10})
		if err != nil || len(p.Items) != 1 || string(p.Items[0].Text) != want {
			t.Errorf("ListJSON answered %d records (%v), want exactly\n%s", len(p.Items), err, want)
		}
		if err == nil && len(p.Items) == 1 {
			if b, _ := jsonbody.Marshal(p.Items[0]); string(b) != want {
				t.Errorf("a listed record encodes as\n%s\nwant\n%s", b, want)
			}
		}
	}
	t.Run("stamped", func(t *testing.T) { check(t, c, `"1"`) })
	t.Run("another shape", func(t *testing.T) {
		// A collection whose records changed shape re-encodes the old ones.
		check(t, store.NewCollection(st, shapedSpec(store.ShapeOf(shaped{}, "view.2"))), `"1"`)
	})
	t.Run("no shape", func(t *testing.T) { check(t, store.NewCollection(st, shapedSpec("")), `"1"`) })
	t.Run("edited outside the service", func(t *testing.T) {
		// Valid JSON that is not the view (null tags, an unknown field),
		// under the old stamp: the checksum no longer matches.
		setDoc(t, st, k, `{"id":"`+v.ID+`","name":"edited","tags":null,"data":{},"extra":1}`)
		check(t, c, `"1"`)
		j, _ := c.GetJSON(ctx, org, v.ID)
		if got := string(j.Text); !strings.Contains(got, `"tags":[]`) || strings.Contains(got, "extra") {
			t.Errorf("an edited record was answered as stored: %s", got)
		}
	})
	t.Run("rewritten", func(t *testing.T) {
		// An update stamps it again.
		if _, err := c.Update(ctx, org, v.ID, func(s *shaped) error { s.Name = "again"; return nil }); err != nil {
			t.Fatal(err)
		}
		check(t, c, `"2"`)
	})
	t.Run("undecodable", func(t *testing.T) {
		setDoc(t, st, k, `{"id":`)
		if _, err := c.GetJSON(ctx, org, v.ID); !errors.As(err, new(*store.UndecodableError)) {
			t.Errorf("GetJSON of a damaged record: %v, want an UndecodableError", err)
		}
		if p, err := c.ListJSON(ctx, org, store.Query{Limit: 10}); err != nil || len(p.Items) != 0 {
			t.Errorf("ListJSON with a damaged record: %d records, %v; want it skipped", len(p.Items), err)
		}
	})
	t.Run("absent", func(t *testing.T) {
		if _, err := c.GetJSON(ctx, org, ids.New("shp")); !errors.Is(err, apperr.ErrNotFound) {
			t.Errorf("GetJSON of no record: %v, want not found", err)
		}
		if _, err := c.GetJSON(ctx, "another-org", v.ID); !errors.Is(err, apperr.ErrNotFound) {
			t.Errorf("GetJSON of another organization's record: %v, want not found", err)
		}
	})
}

func TestShapeOfFollowsTheJSONForm(t *testing.T) {
	t.Parallel()
	type a struct {
		X string `json:"x"`
	}
	type b struct {
		X string `json:"y"`
	}
	type c struct {
		X string `json:"x"`
		Y int    `json:"y"`
	}
	if store.ShapeOf(a{}) == store.ShapeOf(b{}) || store.ShapeOf(a{}) == store.ShapeOf(c{}) {
		t.Error("types of different JSON forms share a shape")
	}
	if store.ShapeOf(a{}) != store.ShapeOf(a{}) || store.ShapeOf(a{}) == store.ShapeOf(a{}, "2") {
		t.Error("a shape is not a function of the type and its revisions")
	}
}

// Readers of stored docs (search: the feed, a rebuild from the records, the
// OpenSearch engine's read-back by ids) get each doc's stamp, which
// Present honours as GetJSON does.
func TestStoredDocsReachTheirReadersWithTheirStamps(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := testenv.Store(t)
	spec := shapedSpec(store.ShapeOf(shaped{}))
	spec.Feed = true
	c := store.NewCollection(st, spec)
	org := ids.New("org")
	since := time.Now().Add(-store.FeedWindow)
	v := shaped{ID: ids.New("shp"), Name: "fed"}
	if err := c.Create(ctx, org, &v); err != nil {
		t.Fatal(err)
	}
	want := typed(t, c, org, v.ID)
	present := func(what string, doc []byte, stamp string) {
		t.Helper()
		if !store.Stamped(stamp, spec.Shape, doc) {
			t.Errorf("%s: the doc is not stamped with the collection's shape (stamp %q)", what, stamp)
		}
		got, err := c.Present(doc, stamp)
		if err != nil || string(got) != want {
			t.Errorf("%s presents as %s (%v), want %s", what, got, err, want)
		}
		// Without its stamp the doc is re-encoded to the same bytes.
		if got, err := c.Present(doc, ""); err != nil || string(got) != want {
			t.Errorf("%s without its stamp presents as %s (%v), want %s", what, got, err, want)
		}
	}
	changes, err := st.Changes(ctx, org, "SHAPED", since)
	if err != nil || len(changes) != 1 || changes[0].ID != v.ID || changes[0].Version != 1 {
		t.Fatalf("changes: %v, %v", changes, err)
	}
	recs, err := st.Records(ctx, org, "SHAPED")
	if err != nil || len(recs) != 1 {
		t.Fatalf("records: %v, %v", recs, err)
	}
	present("the record", recs[0].Doc, recs[0].Stamp)
	got, err := st.GetRecords(ctx, org, "SHAPED", []string{v.ID})
	if err != nil || len(got) != 1 {
		t.Fatalf("records by id: %v, %v", got, err)
	}
	present("the record by id", got[0].Doc, got[0].Stamp)
	if store.Stamped(got[0].Stamp, store.ShapeOf(shaped{}, "other"), got[0].Doc) || store.Stamped(got[0].Stamp, spec.Shape, append([]byte(" "), got[0].Doc...)) {
		t.Error("a stamp matches another shape or another doc")
	}
}
