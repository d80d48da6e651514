// Package listsapi serves the records on a saved list: adding, paging and
// removing them (resources.Entries).
package listsapi

import (
	"net/http"
	"reflect"

	"github.com/sourcebase/sourcebase/internal/service"

	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/httpapi"
	"github.com/sourcebase/sourcebase/internal/jsonbody"
	"github.com/sourcebase/sourcebase/internal/lambdas"
	"github.com/sourcebase/sourcebase/internal/openapi"
	"github.com/sourcebase/sourcebase/internal/operation"
	"github.com/sourcebase/sourcebase/internal/resources"
	"github.com/sourcebase/sourcebase/internal/routes"
)

// API serves the feature's routes.
type API struct {
	entries *resources.Entries
}

// New returns the API over its services.
func New(entries *resources.Entries) *API {
	return &API{entries: entries}
}

// Feature is the lists and their entries, served over a process's services (the registry of
// package api collects it; apitest serves it alone).
var Feature = operation.NewFeature("lists", Operations, Schemas, func(d service.Deps) *API { return New(d.Entries) })

// Operations are the records on a saved list: add, page, remove.
func Operations() []operation.Operation {
	const entries = "/v1/lists/{id}/entries"
	lists := resources.Lists.Name
	return []operation.Operation{
		operation.Declare(lambdas.Documents, http.MethodPost, entries, (*API).addListEntry).Answers(routes.AnswerRecord).Of(lists).Doc(func(op *openapi.Operation) {
			op.Summary, op.Status, op.AlsoStatus = "Add a record to a list", http.StatusCreated, http.StatusOK
			op.Description = "201 with the new entry, or 200 with the existing one when the record is on the list already."
			op.Body = openapi.Schema{"type": "object", "additionalProperties": false, "required": []any{"recordId"},
				"properties": openapi.Schema{"recordId": openapi.Schema{"type": "string", "minLength": 1, "maxLength": 256,
					"description": "the id of a record of the list's resourceType"}}}
			op.Data = openapi.Ref("ListEntry")
			op.ResponseHeaders = nil
		}),
		operation.Declare(lambdas.Documents, http.MethodGet, entries, (*API).listEntries).Answers(routes.AnswerPaged).Of(lists).Doc(func(op *openapi.Operation) {
			op.Summary = "List a list's entries"
			op.Description = "A page of the records on a list, each with the record itself."
			op.Query, op.Data, op.Paged = operation.ListQuery(resources.EntrySortFields(), nil), operation.ArrayOf("ListEntry"), true
		}),
		operation.Declare(lambdas.Documents, http.MethodDelete, entries+"/{recordId}", (*API).removeListEntry).Of(lists).Doc(func(op *openapi.Operation) {
			op.Summary, op.Preconditioned = "Remove a record from a list", false
			op.Description = "Takes the record off the list (204); the record itself stays."
		}),
	}
}

// decodeEntry reads {"recordId": "..."}.
func decodeEntry(body []byte) (string, error) {
	o, err := jsonbody.ParseObject(body, "recordId")
	if err != nil {
		return "", err
	}
	id, err := o.String("recordId", jsonbody.Text{Min: 1, Max: 256, Trim: true})
	if err == nil && (!id.Set || id.Null) {
		err = apperr.Invalid("recordId", "is required: the id of a record of the list's resourceType")
	}
	return id.Value, err
}

// addListEntry puts a record on a list: 201 with the entry, or 200 with
// the existing entry when the record is on the list already.
func (a *API) addListEntry(w http.ResponseWriter, r *http.Request) {
	recordID, ok := httpapi.DecodeBody(w, r, decodeEntry)
	if !ok {
		return
	}
	e, created, err := a.entries.Add(r.Context(), httpapi.Caller(r).OrgID, r.PathValue("id"), recordID)
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	httpapi.Reply(w, r, status)(e, err)
}

func (a *API) listEntries(w http.ResponseWriter, r *http.Request) {
	if q, ok := httpapi.PageQuery(w, r); ok {
		httpapi.ReplyPage[resources.Entry](w, r)(a.entries.Page(r.Context(), httpapi.Caller(r).OrgID, r.PathValue("id"), q))
	}
}

func (a *API) removeListEntry(w http.ResponseWriter, r *http.Request) {
	httpapi.NoContent(w, r, a.entries.Remove(r.Context(), httpapi.Caller(r).OrgID, r.PathValue("id"), r.PathValue("recordId")))
}

// Schemas adds the list entries' component schemas to out.
func Schemas(out map[string]openapi.Schema) {
	entry := openapi.TypeOf(reflect.TypeFor[resources.Entry]())
	entry["properties"].(openapi.Schema)["record"] = openapi.Schema{"type": []any{"object", "null"}, "additionalProperties": true,
		"description": "the record as GET answers it; null when it no longer exists"}
	out["ListEntry"] = entry
}
