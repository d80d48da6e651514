package api

import (
	"net/http"

	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/input"
	"github.com/sourcebase/sourcebase/internal/resources"
)

// decodeEntry reads {"recordId": "..."}.
func decodeEntry(body []byte) (string, error) {
	o, err := input.ParseObject(body, "recordId")
	if err != nil {
		return "", err
	}
	id, err := o.String("recordId", input.Text{Min: 1, Max: 256, Trim: true})
	if err == nil && (!id.Set || id.Null) {
		err = apperr.Invalid("recordId", "is required: the id of a record of the list's resourceType")
	}
	return id.Value, err
}

// addListEntry puts a record on a list: 201 with the entry, or 200 with
// the existing entry when the record is on the list already.
func (a *API) addListEntry(w http.ResponseWriter, r *http.Request) {
	recordID, ok := decodeBody(w, r, decodeEntry)
	if !ok {
		return
	}
	e, created, err := a.d.Entries.Add(r.Context(), principal(r).OrgID, r.PathValue("id"), recordID)
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	reply(w, r, status)(e, err)
}

func (a *API) listEntries(w http.ResponseWriter, r *http.Request) {
	if q, ok := pageQuery(w, r); ok {
		list[resources.Entry](w, r)(a.d.Entries.Page(r.Context(), principal(r).OrgID, r.PathValue("id"), q))
	}
}

func (a *API) removeListEntry(w http.ResponseWriter, r *http.Request) {
	noContent(w, r, a.d.Entries.Remove(r.Context(), principal(r).OrgID, r.PathValue("id"), r.PathValue("recordId")))
}
