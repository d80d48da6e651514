package admin_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sourcebase/sourcebase/internal/admin"
	"github.com/sourcebase/sourcebase/internal/apikeys"
	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/blob"
	"github.com/sourcebase/sourcebase/internal/companies"
	"github.com/sourcebase/sourcebase/internal/dev/apitest"
	"github.com/sourcebase/sourcebase/internal/dev/testenv"
	"github.com/sourcebase/sourcebase/internal/jsonbody"
	"github.com/sourcebase/sourcebase/internal/store"
	"github.com/sourcebase/sourcebase/internal/usage"
)

func init() { admin.SettleWait = 50 * time.Millisecond }

// lifecycleEnv is the whole service with no key or status cache (a
// suspension takes effect at once), the change history and deliveries
// running, and an admin environment over its table and bulk files.
func lifecycleEnv(t *testing.T) (*apitest.Env, admin.Env) {
	t.Helper()
	e := apitest.NewWith(t, apitest.Options{NoCache: true})
	evs := e.StartEvents(t)
	caught[e] = func() { apitest.Caught(t, evs) }
	e.Deps.Endpoints.PausedWait = 50 * time.Millisecond
	dir, ok := e.Deps.Jobs.Files().(*blob.Dir)
	if !ok {
		t.Fatalf("the bulk files (%T) are not a directory", e.Deps.Jobs.Files())
	}
	return e, admin.Env{Files: blob.ListDir(dir), Local: true}
}

// caught waits, for an Env of lifecycleEnv, until the change history has
// every change written so far.
var caught = map[*apitest.Env]func(){}

func run(t *testing.T, st *store.Store, env admin.Env, req admin.Request) map[string]any {
	t.Helper()
	out, err := admin.RunIn(context.Background(), st, env, req)
	if err != nil {
		t.Fatalf("%s: %v", req.Action, err)
	}
	b, _ := json.Marshal(out)
	var m map[string]any
	json.Unmarshal(b, &m)
	return m
}

// orgItems is every item of org in st's table, by key, as DynamoDB JSON.
func orgItems(t *testing.T, st *store.Store, org string) map[store.Key]string {
	t.Helper()
	out := map[store.Key]string{}
	var mu = make(chan struct{}, 1)
	err := st.ScanItems(context.Background(), 2, true, func(it store.Image) error {
		if store.OwnerOf(it) != org {
			return nil
		}
		b, err := store.MarshalItem(it)
		mu <- struct{}{}
		out[store.KeyOf(it)] = string(b)
		<-mu
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// files is every file of org in files, by key.
func files(t *testing.T, fs blob.Lister, org string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, p := range []string{"imports/" + org + "/", "exports/" + org + "/"} {
		objs, err := fs.List(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range objs {
			r, err := fs.Open(context.Background(), o.Key, 0)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(r)
			r.Close()
			out[o.Key] = string(b)
		}
	}
	return out
}

// populate gives c's organization a bit of everything, through the API:
// companies, deals, people, candidates, a workflow and its runs (one by
// its webhook), a bulk import (its uploaded file) and export, an
// endpoint and its deliveries, the change history of it all.
func populate(t *testing.T, e *apitest.Env, c *apitest.Client) {
	t.Helper()
	acme := apitest.IDOf(t, apitest.CreateCompany(t, c, map[string]any{"canonicalName": "Acme", "website": "acme.example", "externalId": "crm-1"}))
	apitest.CreateCompany(t, c, map[string]any{"canonicalName": "Globex"})
	c.Do("POST", "/v1/deals", map[string]any{"name": "Series A"}).Want(t, 201)
	c.Do("POST", "/v1/people", map[string]any{"firstName": "Ada", "companyIds": []string{acme}}).Want(t, 201)
	c.Do("POST", "/v1/enrichments/resources/companies/"+acme, map[string]any{"values": []any{
		map[string]any{"property": "description", "value": "Robots", "source": "provider", "provider": "p", "confidence": 80}}}).Want(t, 201)
	recv := apitest.NewReceiver(t, nil)
	c.Do("POST", "/v1/webhook-endpoints", map[string]any{"url": recv.URL + "/hook"}).Want(t, 201)
	h := apitest.NewHook(t, c, nil, apitest.UpsertStep("canonicalName"))
	apitest.RunToEnd(t, c, h.WorkflowID, map[string]any{"input": map[string]any{"canonicalName": "Initech"}})
	body := []byte(`{"canonicalName":"Hooli"}`)
	apitest.AwaitRun(t, c, apitest.IDOf(t, apitest.Deliver(t, e, h.Slug, "", body, "X-Service-Webhook-Secret", h.Secret).Want(t, 202).Object(t)))
	apitest.RunImport(t, c, map[string]any{"resource": "companies", "format": "csv", "mapping": apitest.ImportMapping()}, apitest.CompanyCSV(3))
	exp := c.Do("POST", "/v1/exports", map[string]any{"resource": "companies", "format": "ndjson"}).Want(t, 201).Object(t)
	apitest.WaitJob(t, c, "/v1/exports/"+apitest.IDOf(t, exp))
	recv.Wait(t, 1)
}

// The test: an organization populated through the service,
// exported, deleted, and restored into a fresh table, comes back item
// for item and file for file; another organization is untouched.
func TestExportDeleteRestoreIntoAFreshTableGivesBackEveryItemAndFile(t *testing.T) {
	e, env := lifecycleEnv(t)
	c, other := e.Org(t), e.Org(t)
	populate(t, e, c)
	apitest.CreateCompany(t, other, map[string]any{"canonicalName": "Other's"})
	// Wait until the stream's events and deliveries are written: the
	// export takes what is there.
	apitest.WaitFor(t, "the change history", func() bool {
		return len(c.Do("GET", "/v1/events?limit=100", nil).Want(t, 200).List(t)) >= 8
	})
	time.Sleep(testenv.Scaled(time.Second))
	st := e.Store
	before := orgItems(t, st, c.Org)
	beforeFiles := files(t, env.Files, c.Org)
	otherBefore := orgItems(t, st, other.Org)
	types := map[string]bool{}
	for _, it := range before {
		im, _ := store.UnmarshalItem([]byte(it))
		types[store.ItemType(im)] = true
	}
	for _, want := range []string{store.TypeOrg, store.TypeAPIKey, store.TypeCompany, store.TypeWorkflow, store.TypeRun, store.TypeTriggerRoute, "EVENT", "DEAL", "PERSON", store.TypeEnrichment, "JOB", "WHENDPOINT", "WHDELIVERY"} {
		if !types[want] {
			t.Errorf("the populated organization has no item of type %s (types: %v)", want, types)
		}
	}
	if len(beforeFiles) < 2 {
		t.Errorf("the organization's files: %v, want its import's upload and its export", beforeFiles)
	}
	// The events function is stopped now: what the deletion leaves in the
	// stream would make no events anyway (the organization is marked
	// deleted first), but the comparison wants no write of it at all.
	dir := filepath.Join(t.TempDir(), "export")
	exported := run(t, st, env, admin.Request{Action: "export-org", Org: c.Org, Dir: dir})
	m := exported["manifest"].(map[string]any)
	if int(m["items"].(float64)) != len(before) || len(m["files"].([]any)) != len(beforeFiles) || m["itemsSha256"] == "" {
		t.Fatalf("export manifest %v, want %d items and %d files", m, len(before), len(beforeFiles))
	}

	dry := run(t, st, env, admin.Request{Action: "delete-org", Org: c.Org, DryRun: true})
	if int(dry["items"].(float64)) != len(before) || int(dry["files"].(float64)) != len(beforeFiles) || dry["itemBytes"].(float64) <= 0 {
		t.Errorf("delete-org --dry-run counted %v, want %d items and %d files", dry, len(before), len(beforeFiles))
	}
	if got := orgItems(t, st, c.Org); len(got) != len(before) {
		t.Fatalf("the dry run deleted: %d items left of %d", len(got), len(before))
	}
	c.Do("GET", "/v1/companies", nil).Want(t, 200)

	if _, err := admin.RunIn(context.Background(), st, env, admin.Request{Action: "delete-org", Org: c.Org}); err == nil || !strings.Contains(err.Error(), "confirm") {
		t.Errorf("delete-org without --confirm: %v", err)
	}
	deleted := run(t, st, env, admin.Request{Action: "delete-org", Org: c.Org, Confirm: c.Org})
	if deleted["done"] != true {
		t.Fatalf("delete-org: %v", deleted)
	}
	time.Sleep(testenv.Scaled(2 * time.Second)) // the stream's records of the deletion are read
	left := orgItems(t, st, c.Org)
	if len(left) != 1 {
		t.Errorf("after delete-org, items of the organization left: %v, want its tombstone alone", left)
	}
	for k, v := range left {
		if k != store.OrgKey(c.Org) || !strings.Contains(v, "deletedAt") {
			t.Errorf("left %v: %s", k, v)
		}
	}
	if f := files(t, env.Files, c.Org); len(f) != 0 {
		t.Errorf("files left: %v", f)
	}
	apitest.WantError(t, c.Do("GET", "/v1/companies", nil), 401)
	if got := orgItems(t, st, other.Org); len(got) != len(otherBefore) {
		t.Errorf("the other organization has %d items, had %d", len(got), len(otherBefore))
	}
	if _, err := apikeys.New(st).GetOrg(context.Background(), c.Org); !errors.Is(err, apperr.ErrNotFound) {
		t.Errorf("the deleted organization is found: %v", err)
	}

	// Restored into a fresh table of the same DynamoDB, and into a fresh
	// file store.
	fresh := testenv.StoreOn(t, st.DB)
	freshFiles, err := blob.NewDir(t.TempDir(), "http://127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	fenv := admin.Env{Files: blob.ListDir(freshFiles), Local: true}
	restored := run(t, fresh, fenv, admin.Request{Action: "restore-org", Org: c.Org, From: dir})
	if int(restored["written"].(float64)) != len(before) {
		t.Errorf("restore-org: %v, want %d items written", restored, len(before))
	}
	after := orgItems(t, fresh, c.Org)
	if len(after) != len(before) {
		t.Errorf("restored %d items, exported %d", len(after), len(before))
	}
	for k, v := range before {
		if after[k] != v {
			t.Errorf("item %v:\n restored %s\n exported %s", k, after[k], v)
		}
	}
	if got := files(t, blob.ListDir(freshFiles), c.Org); !equalMaps(got, beforeFiles) {
		t.Errorf("restored files %v, want %v", keysOf(got), keysOf(beforeFiles))
	}
	// Run again: nothing to write, nothing overwritten.
	again := run(t, fresh, fenv, admin.Request{Action: "restore-org", Org: c.Org, From: dir})
	if again["written"].(float64) != 0 || int(again["alreadyPresent"].(float64)) != len(before) || again["filesWritten"].(float64) != 0 {
		t.Errorf("restore-org again: %v", again)
	}
	// Into the table it was deleted from: its tombstone gives way.
	back := run(t, st, env, admin.Request{Action: "restore-org", Org: c.Org, From: dir})
	if int(back["written"].(float64)) != len(before) {
		t.Errorf("restore-org into the table it was deleted from: %v", back)
	}
	c.Do("GET", "/v1/companies/"+apitest.IDOf(t, apitest.Companies(t, c)[0]), nil).Want(t, 200)
}

// A restore never overwrites another item, and refuses an export whose
// items do not match its manifest.
func TestRestoreRefusesToOverwriteAndChecksTheManifest(t *testing.T) {
	t.Parallel()
	st := testenv.Store(t)
	h := admin.Handler(st)
	org, _ := call(t, h, admin.Request{Action: "create-org", Name: "Acme"})
	orgID := org["id"].(string)
	dir := filepath.Join(t.TempDir(), "x")
	env := admin.Env{Local: true}
	run(t, st, env, admin.Request{Action: "export-org", Org: orgID, Dir: dir})
	if _, err := admin.RunIn(context.Background(), st, env, admin.Request{Action: "export-org", Org: orgID, Dir: dir}); err == nil {
		t.Error("an export into a directory that is not empty was made")
	}
	// The table holds the organization, changed: refused, nothing written.
	if err := apikeys.New(st).SetEventRetention(context.Background(), orgID, 5); err != nil {
		t.Fatal(err)
	}
	_, err := admin.RunIn(context.Background(), st, env, admin.Request{Action: "restore-org", Org: orgID, From: dir})
	if err == nil || !strings.Contains(err.Error(), "nothing was overwritten") {
		t.Errorf("restore over a changed item: %v", err)
	}
	if d, _ := apikeys.New(st).EventRetention(context.Background(), orgID); d != 5*24*time.Hour {
		t.Errorf("the restore overwrote the organization's item")
	}
	// A damaged export is refused before anything is written.
	items := filepath.Join(dir, "items.ndjson")
	b, _ := os.ReadFile(items)
	os.WriteFile(items, append(b, b...), 0o644)
	fresh := testenv.StoreOn(t, st.DB)
	if _, err := admin.RunIn(context.Background(), fresh, env, admin.Request{Action: "restore-org", Org: orgID, From: dir}); err == nil || !strings.Contains(err.Error(), "do not match its manifest") {
		t.Errorf("a damaged export: %v", err)
	}
	if _, err := admin.RunIn(context.Background(), fresh, env, admin.Request{Action: "restore-org", Org: "org_other", From: dir}); err == nil {
		t.Error("an export restored as another organization")
	}
}

// delete-org interrupted (a page limit, a cancelled context) and run
// again finishes.
func TestDeleteOrgInterruptedAndRunAgainFinishes(t *testing.T) {
	e, env := lifecycleEnv(t)
	c := e.Org(t)
	for i := range 12 {
		apitest.CreateCompany(t, c, map[string]any{"canonicalName": "Co " + string(rune('A'+i))})
	}
	st := e.Store
	caught[e]()
	total := len(orgItems(t, st, c.Org))
	first := run(t, st, env, admin.Request{Action: "delete-org", Org: c.Org, Confirm: c.Org, PageItems: 5, MaxPages: 2})
	if first["done"] != false || first["deletedItems"].(float64) != 10 {
		t.Fatalf("delete-org of 2 pages of 5: %v", first)
	}
	if got := len(orgItems(t, st, c.Org)); got != total-10 {
		t.Errorf("after 2 pages, %d items left of %d", got, total)
	}
	// Meanwhile the organization is suspended and its keys are gone.
	if s, err := apikeys.New(st).Status(context.Background(), c.Org); err != nil || !s.Suspended || !s.Deleting {
		t.Errorf("an organization being deleted: %+v %v", s, err)
	}
	apitest.WantError(t, c.Do("GET", "/v1/companies", nil), 401)
	if _, err := admin.RunIn(context.Background(), st, env, admin.Request{Action: "resume-org", Org: c.Org}); err == nil {
		t.Error("an organization being deleted was resumed")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := admin.RunIn(ctx, st, env, admin.Request{Action: "delete-org", Org: c.Org, Confirm: c.Org}); err == nil {
		t.Error("delete-org under a cancelled context succeeded")
	}
	done := run(t, st, env, admin.Request{Action: "delete-org", Org: c.Org, Confirm: c.Org})
	if done["done"] != true || int(done["deletedItems"].(float64)) != total-11 {
		t.Errorf("delete-org run again: %v (of %d items)", done, total)
	}
	if got := orgItems(t, st, c.Org); len(got) != 1 {
		t.Errorf("left: %v", got)
	}
	// And again: nothing left to do.
	if again := run(t, st, env, admin.Request{Action: "delete-org", Org: c.Org, Confirm: c.Org}); again["done"] != true || again["deletedItems"].(float64) != 0 {
		t.Errorf("delete-org of a deleted organization: %v", again)
	}
}

// A suspended organization's keys get 403 organization_suspended, its
// webhook triggers 403, its deliveries wait (not attempted, not failed)
// and go out once it is resumed; its data is kept.
func TestASuspendedOrganizationIsRefusedAndItsDeliveriesWaitUntilResumed(t *testing.T) {
	e, env := lifecycleEnv(t)
	c, other := e.Org(t), e.Org(t)
	st := e.Store
	recv := apitest.NewReceiver(t, nil)
	c.Do("POST", "/v1/webhook-endpoints", map[string]any{"url": recv.URL + "/hook", "eventTypes": []string{"company.created"}}).Want(t, 201)
	h := apitest.NewHook(t, c, nil)
	id := apitest.IDOf(t, apitest.CreateCompany(t, c, map[string]any{"canonicalName": "Before"}))
	recv.Wait(t, 1)

	out := run(t, st, env, admin.Request{Action: "suspend-org", Org: c.Org})
	if s := out["status"].(map[string]any); s["suspended"] != true {
		t.Fatalf("suspend-org: %v", out)
	}
	for _, r := range []*apitest.Response{c.Do("GET", "/v1/companies/"+id, nil), c.Do("POST", "/v1/companies", map[string]any{"canonicalName": "During"})} {
		apitest.WantError(t, r, http.StatusForbidden, "suspended")
		if got := r.Header.Get("X-Error-Code"); got != "organization_suspended" {
			t.Errorf("X-Error-Code %q", got)
		}
	}
	r := apitest.Deliver(t, e, h.Slug, "", map[string]any{}, "X-Service-Webhook-Secret", h.Secret)
	apitest.WantError(t, r, http.StatusForbidden, "suspended")
	if r.Header.Get("X-Error-Code") != "organization_suspended" {
		t.Errorf("webhook: %s", r.Header.Get("X-Error-Code"))
	}
	// A wrong secret is still the plain 401: suspension is told only to
	// the trigger's sender.
	apitest.WantInvalidSignature(t, apitest.Deliver(t, e, h.Slug, "", map[string]any{}, "X-Service-Webhook-Secret", "wrong"))
	other.Do("GET", "/v1/companies", nil).Want(t, 200)

	// A change made while suspended (by the operator's tools, or a run
	// already under way) is delivered only after the resume.
	if _, err := e.Deps.Companies.Create(context.Background(), c.Org, companyNamed("Written while suspended"), ""); err != nil {
		t.Skipf("cannot write as the service: %v", err)
	}
	time.Sleep(testenv.Scaled(2 * time.Second))
	if n := len(recv.All()); n != 1 {
		t.Errorf("%d deliveries while suspended, want none beyond the first", n-1)
	}
	run(t, st, env, admin.Request{Action: "resume-org", Org: c.Org})
	recv.Wait(t, 2)
	c.Do("GET", "/v1/companies/"+id, nil).Want(t, 200)
	apitest.WantAccepted(t, c, h, apitest.Deliver(t, e, h.Slug, "", map[string]any{}, "X-Service-Webhook-Secret", h.Secret))
}

// list-orgs counts each organization's records, items, bytes, files and
// last 30 days' usage.
func TestListOrgsCountsEachOrganization(t *testing.T) {
	e, env := lifecycleEnv(t)
	c, other := e.Org(t), e.Org(t)
	for range 3 {
		apitest.CreateCompany(t, c, map[string]any{"canonicalName": "Co"})
	}
	c.Do("POST", "/v1/deals", map[string]any{"name": "Deal"}).Want(t, 201)
	apitest.RunImport(t, c, map[string]any{"resource": "companies", "format": "csv", "mapping": apitest.ImportMapping()}, apitest.CompanyCSV(2))
	rec := usage.NewRecorder(e.Store)
	rec.Add(context.Background(), c.Org, usage.Units{Requests: 7, ReadUnits: 3.5, WriteUnits: 9})
	if err := rec.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	out := run(t, e.Store, env, admin.Request{Action: "list-orgs", Segments: 3})
	var found map[string]any
	ids := []string{}
	for _, o := range out["organizations"].([]any) {
		o := o.(map[string]any)
		ids = append(ids, o["id"].(string))
		if o["id"] == c.Org {
			found = o
		}
	}
	if !slices.Contains(ids, other.Org) || found == nil {
		t.Fatalf("list-orgs listed %v, want both organizations", ids)
	}
	recs := found["records"].(map[string]any)
	if recs["COMPANY"] != 5.0 || recs["DEAL"] != 1.0 {
		t.Errorf("records %v, want 5 companies and a deal", recs)
	}
	if found["itemBytes"].(float64) <= 0 || found["storageBytes"].(float64) <= found["itemBytes"].(float64) || found["files"].(float64) < 1 || found["fileBytes"].(float64) <= 0 {
		t.Errorf("sizes: %v", found)
	}
	if u := found["last30Days"].(map[string]any); u["requests"] != 7.0 || u["readUnits"] != 3.5 || u["writeUnits"] != 9.0 {
		t.Errorf("last 30 days: %v", u)
	}
	if found["name"] == "" || found["status"].(map[string]any)["exists"] != true {
		t.Errorf("name and status: %v", found)
	}
	if scan := out["scan"].(map[string]any); scan["items"].(float64) < found["items"].(float64) || scan["readUnits"].(float64) <= 0 {
		t.Errorf("scan: %v", scan)
	}
}

// A deleted organization's deliveries still queued are dropped by the
// deliver function: neither attempted nor failed.
func TestDeliveriesOfADeletedOrganizationAreDropped(t *testing.T) {
	e, env := lifecycleEnv(t)
	c := e.Org(t)
	recv := apitest.NewReceiver(t, nil)
	c.Do("POST", "/v1/webhook-endpoints", map[string]any{"url": recv.URL + "/hook", "eventTypes": []string{"company.created"}}).Want(t, 201)
	apitest.CreateCompany(t, c, map[string]any{"canonicalName": "First"})
	recv.Wait(t, 1)
	run(t, e.Store, env, admin.Request{Action: "suspend-org", Org: c.Org})
	if _, err := e.Deps.Companies.Create(context.Background(), c.Org, companyNamed("Queued"), ""); err != nil {
		t.Skipf("cannot write as the service: %v", err)
	}
	time.Sleep(testenv.Scaled(time.Second)) // queued, and paused
	run(t, e.Store, env, admin.Request{Action: "delete-org", Org: c.Org, Confirm: c.Org})
	time.Sleep(testenv.Scaled(2 * time.Second))
	if n := len(recv.All()); n != 1 {
		t.Errorf("%d deliveries, want the first alone", n)
	}
	if got := orgItems(t, e.Store, c.Org); len(got) != 1 {
		t.Errorf("items left after the deletion: %d (the queued delivery wrote?)", len(got))
	}
}

func companyNamed(name string) companies.Fields {
	return companies.Fields{CanonicalName: jsonbody.Field[string]{Set: true, Value: name}}
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func keysOf(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
