package recordsapi_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/sourcebase/sourcebase/internal/dev/apitest"
	"github.com/sourcebase/sourcebase/internal/dev/testenv"
	"github.com/sourcebase/sourcebase/internal/ids"
	"github.com/sourcebase/sourcebase/internal/store"
)

// Reads answer a record's stored JSON as it is when the record was stored
// in today's form (store/encoded.go); a record stored otherwise (by older
// code: keys in another order, fields it did not have, no shape stamp) is
// answered as today's code would have stored it. GET, lists and search
// agree byte for byte either way.
func TestARecordStoredByOlderCodeIsAnsweredAsTodaysCodeWouldStoreIt(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	c := e.Org(t)
	for _, tc := range []struct {
		resource, typ, prefix string
		body                  map[string]any
		missing               []string // fields older code did not store
	}{
		{"companies", store.TypeCompany, "cmp", map[string]any{"canonicalName": "Olderfield Holdings", "website": "https://olderfield.example", "tags": []any{"x"}},
			[]string{"custom", "enrichment", "lastFinancials", "assignees", "lastEnrichedAt"}},
		{"workspaces", "WORKSPACE", "wsp", map[string]any{"name": "Olderfield room", "isPersonal": true}, []string{"source", "isPrivate"}},
	} {
		t.Run(tc.resource, func(t *testing.T) {
			// Today's record, and the answer for it.
			made := c.Do("POST", "/v1/"+tc.resource, tc.body).Want(t, http.StatusCreated).Object(t)
			madeID := made["id"].(string)
			var today struct{ Data json.RawMessage }
			c.Do("GET", "/v1/"+tc.resource+"/"+madeID, nil).Want(t, http.StatusOK).Decode(t, &today)

			// The same record under another id as older code stored it.
			id := ids.New(tc.prefix)
			older := map[string]any{}
			for k, v := range made {
				older[k] = v
			}
			older["id"] = id
			for _, f := range tc.missing {
				if _, ok := older[f]; !ok {
					t.Fatalf("%s has no field %s", tc.resource, f)
				}
				delete(older, f)
			}
			doc, _ := json.Marshal(older) // keys sorted: not the declaration's order
			k := store.RecordKey(c.Org, tc.typ, id)
			testenv.PutRaw(t, e.Store, map[string]string{store.AttrPK: k.PK, store.AttrSK: k.SK, store.AttrType: tc.typ, store.AttrDoc: string(doc)})
			want := strings.Replace(string(today.Data), madeID, id, 1)

			var got struct{ Data json.RawMessage }
			c.Do("GET", "/v1/"+tc.resource+"/"+id, nil).Want(t, http.StatusOK).Decode(t, &got)
			if string(got.Data) != want {
				t.Errorf("GET of a record stored by older code:\n%s\nwant\n%s", got.Data, want)
			}
			var listed struct{ Data []json.RawMessage }
			c.Do("GET", "/v1/"+tc.resource+"?limit=1000", nil).Want(t, http.StatusOK).Decode(t, &listed)
			var inList, todayInList bool
			for _, r := range listed.Data {
				inList = inList || string(r) == want
				todayInList = todayInList || string(r) == string(today.Data)
			}
			if !inList || !todayInList {
				t.Errorf("the list does not answer both records as GET does (older: %v, today's: %v)", inList, todayInList)
			}
			var found struct{ Data []json.RawMessage }
			c.Do("POST", "/v1/"+tc.resource+"/search", map[string]any{"text": "olderfield"}).Want(t, http.StatusOK).Decode(t, &found)
			var inSearch, todayInSearch bool
			for _, r := range found.Data {
				inSearch = inSearch || string(r) == want
				todayInSearch = todayInSearch || string(r) == string(today.Data)
			}
			if !inSearch || !todayInSearch {
				t.Errorf("the search does not answer both records as GET does (older: %v, today's: %v): %s", inSearch, todayInSearch, found.Data)
			}
		})
	}
}
