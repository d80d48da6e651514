package resources

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/clock"
	"github.com/sourcebase/sourcebase/internal/resource"
	"github.com/sourcebase/sourcebase/internal/store"
)

// Entry is one record on a list. Its record is read when the list's
// entries are paged; a record deleted since shows as null.
type Entry struct {
	store.Versioned
	ID       string     `json:"id"`
	ListID   string     `json:"listId"`
	RecordID string     `json:"recordId"`
	AddedAt  clock.Time `json:"addedAt"`
	Record   any        `json:"record"`
}

// entryKey is what makes an entry unique: a record is on a list once.
func entryKey(listID, recordID string) string { return listID + "/" + recordID }

// EntrySortFields are the fields a list's entries can be sorted by:
// addedAt is the id order (entry ids are time-ordered), as Page reads it.
func EntrySortFields() []string { return []string{"id", "addedAt"} }

var entrySpec = store.Spec[Entry]{
	Type: "LISTENTRY",
	ID:   func(e *Entry) string { return e.ID },
	Lookups: []store.Lookup[Entry]{
		{Name: "listId", Index: store.GSI3, Key: func(e *Entry) string { return e.ListID }},
		{Name: "entry", Index: store.GSI4, Key: func(e *Entry) string { return entryKey(e.ListID, e.RecordID) }},
	},
	Unique: []store.Unique[Entry]{{Field: "recordId", Key: func(e *Entry) string { return entryKey(e.ListID, e.RecordID) }}},
}

// RecordReader reads records of one type by id, for a list's entries: the
// records found, by id.
type RecordReader func(ctx context.Context, org string, ids []string) (map[string]any, error)

// Entries manages the records on lists: added once each, removed, paged
// newest first with the records themselves.
type Entries struct {
	coll    *store.Collection[Entry]
	lists   *resource.Service
	readers map[string]RecordReader // by list resourceType
	exists  map[string]resource.ExistsFunc
}

// NewEntries returns the entries of lists in reg; companies reads companies.
func NewEntries(st *store.Store, reg *resource.Registry, companies RecordReader, companyExists resource.ExistsFunc) *Entries {
	lists, _ := reg.Service(Lists.Name)
	e := &Entries{coll: store.NewCollection(st, entrySpec), lists: lists,
		readers: map[string]RecordReader{companySingular: companies}, exists: map[string]resource.ExistsFunc{companySingular: companyExists}}
	for _, d := range onLists() {
		svc, _ := reg.Service(d.Name)
		e.exists[d.Singular] = svc.Exists
		e.readers[d.Singular] = func(ctx context.Context, org string, ids []string) (map[string]any, error) {
			recs, err := svc.GetMany(ctx, org, ids)
			out := make(map[string]any, len(recs))
			for i := range recs {
				out[recs[i].ID()] = &recs[i]
			}
			return out, err
		}
	}
	reg.AfterDelete(Lists.Name, e.DeleteAll)
	return e
}

// list reads a list of org and its resourceType.
func (e *Entries) list(ctx context.Context, org, listID string) (string, error) {
	l, err := e.lists.Get(ctx, org, listID)
	if err != nil {
		return "", err
	}
	typ, _ := l.Fields["resourceType"].(string)
	return typ, nil
}

// Add puts a record on a list: created reports whether it was not there
// yet; adding it again answers the existing entry.
func (e *Entries) Add(ctx context.Context, org, listID, recordID string) (entry *Entry, created bool, err error) {
	typ, err := e.list(ctx, org, listID)
	if err != nil {
		return nil, false, err
	}
	if recordID == "" || len(recordID) > store.MaxIDLength {
		return nil, false, apperr.Invalid("recordId", "is required: the id of a %s of your organization", typ)
	}
	found, err := e.exists[typ](ctx, org, recordID)
	if err != nil {
		return nil, false, err
	}
	if !found {
		return nil, false, apperr.Invalid("recordId", "must be the id of a %s of your organization; %q is not", typ, recordID)
	}
	id, err := e.coll.NewID(ctx, org, "ent")
	if err != nil {
		return nil, false, err
	}
	entry = &Entry{ID: id, ListID: listID, RecordID: recordID, AddedAt: clock.Now()}
	created = true
	err = e.coll.Create(ctx, org, entry)
	var ue *store.UniqueError
	if errors.As(err, &ue) {
		entry, created = nil, false
		entry, err = e.coll.Get(ctx, org, ue.OwnerID)
	}
	if err != nil {
		return nil, false, err
	}
	recs, err := e.readers[typ](ctx, org, []string{recordID})
	entry.Record = recs[recordID]
	return entry, created, err
}

// Remove takes a record off a list; not found when it is not on it.
func (e *Entries) Remove(ctx context.Context, org, listID, recordID string) error {
	if _, err := e.list(ctx, org, listID); err != nil {
		return err
	}
	found, err := e.coll.FindBy(ctx, org, "entry", entryKey(listID, recordID), 1)
	if err != nil {
		return err
	}
	if len(found) == 0 {
		return apperr.ErrNotFound
	}
	return e.coll.Delete(ctx, org, found[0].ID)
}

// Page returns a page of a list's entries, newest first by default, each
// with its record (null when the record has been deleted since). The page
// holds up to q.Limit entries (1 to 1000, as every list); their records are
// read MaxBatch at a time, and no further once the entries read fill
// q.MaxBytes, the page's byte budget: the page then ends there and its
// cursor continues after the last entry read, so a page of large records
// reads about what its answer can carry.
func (e *Entries) Page(ctx context.Context, org, listID string, q store.Query) (store.Page[Entry], error) {
	typ, err := e.list(ctx, org, listID)
	if err != nil {
		return store.Page[Entry]{Items: []Entry{}}, err
	}
	if q.Sort != "" && q.Sort != "id" && q.Sort != "addedAt" {
		return store.Page[Entry]{Items: []Entry{}}, apperr.InvalidQuery("sort", "%q is not available on list entries; sort by addedAt", q.Sort)
	}
	q.Sort = ""
	q.Where = &store.Where{Lookup: "listId", Value: listID}
	p, err := e.coll.List(ctx, org, q)
	if err != nil || len(p.Items) == 0 {
		return p, err
	}
	size := 0
	for start := 0; start < len(p.Items); start += store.MaxBatch {
		if q.MaxBytes > 0 && size > q.MaxBytes {
			return p.Cut(start), nil
		}
		batch := p.Items[start:min(start+store.MaxBatch, len(p.Items))]
		recordIDs := make([]string, len(batch))
		for i, ent := range batch {
			recordIDs[i] = ent.RecordID
		}
		byID, err := e.readers[typ](ctx, org, recordIDs)
		if err != nil {
			return p, fmt.Errorf("read the records of list %s: %w", listID, err)
		}
		last := start+len(batch) == len(p.Items)
		for i := range batch {
			batch[i].Record = byID[batch[i].RecordID]
			if q.MaxBytes > 0 && !last {
				b, err := json.Marshal(&batch[i])
				if err != nil {
					return p, err
				}
				size += store.WireSize(b) + 1
			}
		}
	}
	return p, nil
}

// DeleteAll removes every entry of a list (after the list is deleted).
func (e *Entries) DeleteAll(ctx context.Context, org, listID string) error {
	q := store.Query{Limit: 100, Desc: true, Where: &store.Where{Lookup: "listId", Value: listID}}
	for {
		p, err := e.coll.List(ctx, org, q)
		if err != nil {
			return err
		}
		for _, ent := range p.Items {
			if err := e.coll.Delete(ctx, org, ent.ID); err != nil && !errors.Is(err, apperr.ErrNotFound) {
				return err
			}
		}
		if p.Next == "" {
			return nil
		}
		q.Cursor = p.Next
	}
}
