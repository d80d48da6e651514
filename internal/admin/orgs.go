package admin

import (
	"bufio"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/sourcebase/sourcebase/internal/apikeys"
	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/auth"
	"github.com/sourcebase/sourcebase/internal/blob"
	"github.com/sourcebase/sourcebase/internal/store"
	"github.com/sourcebase/sourcebase/internal/usage"
)

// The tenant lifecycle: list-orgs, suspend-org, resume-org, export-org,
// restore-org and delete-org (docs/operations.md, "Tenant lifecycle" and
// "Backups and restore"). An organization's items are found by a Scan of
// the whole table (store.ScanItems, store.OwnerOf): an operator's command,
// billed for the whole table.

// Env is what the organization commands reach beside the table.
type Env struct {
	// Files are the bulk jobs' files (BULK_BUCKET, or BULK_DIR locally):
	// an organization's are exported, restored and deleted with it. nil:
	// none are reachable, and the commands that need them say so.
	Files blob.Lister
	// Local is the operator's CLI: export-org --dir and restore-org
	// --from <directory> read and write its directories. The Lambda has
	// none: it exports to, and restores from, the bulk bucket.
	Local bool
}

// DefaultSegments is how many parallel Scans read the table; MaxSegments
// the most an operator may ask for (each is a goroutine and a Scan at
// once).
const (
	DefaultSegments = 4
	MaxSegments     = 256
)

// DefaultPageItems is how many items delete-org deletes per page.
const DefaultPageItems = 500

// SettleWait is how long delete-org waits after marking an organization
// deleted before it deletes: the longest any process keeps its status
// cached (auth.MaxCacheTTL), so that no events function still takes its
// deletion's stream records for changes (tests shorten it).
var SettleWait = auth.MaxCacheTTL

// ExportFormat is the version of the export layout.
const ExportFormat = 1

// The files of an export (a directory, or a prefix of the bulk bucket).
const (
	manifestName = "manifest.json"
	itemsName    = "items.ndjson"
	filesDir     = "files/"
)

// filePrefixes are the blob folders of an organization's files.
func filePrefixes(org string) []string {
	return []string{"imports/" + org + "/", "exports/" + org + "/"}
}

// Manifest describes an export: what it holds and the checksums a
// restore verifies.
type Manifest struct {
	Format     int    `json:"format"`
	Org        string `json:"org"`
	Table      string `json:"table"`
	ExportedAt string `json:"exportedAt"`
	// Items: how many, their bytes (store.ItemSize), the SHA-256 of
	// items.ndjson (one store.MarshalItem line per item), and how many of
	// each type.
	Items       int64            `json:"items"`
	ItemBytes   int64            `json:"itemBytes"`
	ItemsSHA256 string           `json:"itemsSha256"`
	ItemTypes   map[string]int64 `json:"itemTypes"`
	Files       []FileEntry      `json:"files"`
	FileBytes   int64            `json:"fileBytes"`
}

// FileEntry is a file of an export: its blob key, size and SHA-256 (kept
// under files/<key>).
type FileEntry struct {
	Key    string `json:"key"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// OrgSummary is one organization as list-orgs shows it.
type OrgSummary struct {
	ID        string         `json:"id"`
	Name      string         `json:"name,omitempty"`
	Status    apikeys.Status `json:"status"`
	Records   map[string]int `json:"records"`
	Items     int            `json:"items"`
	ItemTypes map[string]int `json:"itemTypes"`
	// ItemBytes is the items' size; StorageBytes what DynamoDB bills as
	// storage: with the 100 bytes per item and every index's copy.
	ItemBytes    int64 `json:"itemBytes"`
	StorageBytes int64 `json:"storageBytes"`
	Files        int   `json:"files"`
	FileBytes    int64 `json:"fileBytes"`
	// Last30Days is its requests and units of the last 30 UTC days
	// (package usage).
	Last30Days usage.Units `json:"last30Days"`
}

func segmentsOf(req Request) int { return cmp.Or(req.Segments, DefaultSegments) }

// listOrgs scans the table once (eventually consistent: half the units)
// and sums each organization's items.
func listOrgs(ctx context.Context, st *store.Store, env Env, req Request) (any, error) {
	var mu sync.Mutex
	orgs := map[string]*OrgSummary{}
	var scanned, scannedBytes int64
	err := st.ScanItems(ctx, segmentsOf(req), false, func(it store.Image) error {
		size := int64(store.ItemSize(it))
		mu.Lock()
		defer mu.Unlock()
		scanned++
		scannedBytes += size
		org := store.OwnerOf(it)
		if org == "" {
			return nil
		}
		o := orgs[org]
		if o == nil {
			o = &OrgSummary{ID: org, Records: map[string]int{}, ItemTypes: map[string]int{}}
			orgs[org] = o
		}
		o.Items++
		o.ItemTypes[store.ItemType(it)]++
		o.ItemBytes += size
		o.StorageBytes += store.StoredSize(it)
		k := store.KeyOf(it)
		if _, typ, _, ok := store.ParseRecordKey(k.PK, k.SK); ok && store.ImageString(it, store.AttrType) == typ {
			o.Records[typ]++
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	keys := apikeys.New(st)
	now := time.Now()
	out := make([]*OrgSummary, 0, len(orgs))
	for _, o := range orgs {
		if org, err := keys.GetOrg(ctx, o.ID); err == nil {
			o.Name = org.Name
		}
		var err error
		if o.Status, err = keys.Status(ctx, o.ID); err != nil {
			return nil, err
		}
		if env.Files != nil {
			files, err := orgFiles(ctx, env.Files, o.ID)
			if err != nil {
				return nil, err
			}
			for _, f := range files {
				o.Files++
				o.FileBytes += f.Size
			}
		}
		if o.Last30Days, err = usage.Read(ctx, st, o.ID, now.AddDate(0, 0, -29), now); err != nil {
			return nil, err
		}
		out = append(out, o)
	}
	slices.SortFunc(out, func(a, b *OrgSummary) int { return strings.Compare(a.ID, b.ID) })
	return map[string]any{
		"organizations": out,
		"scan": map[string]any{"segments": segmentsOf(req), "items": scanned, "itemBytes": scannedBytes,
			// An eventually consistent Scan: half a read unit per 4 KB.
			"readUnits": float64((scannedBytes+4095)/4096) / 2},
		"filesCounted": env.Files != nil,
	}, nil
}

// orgFiles lists org's files.
func orgFiles(ctx context.Context, files blob.Lister, org string) ([]blob.Object, error) {
	var out []blob.Object
	for _, p := range filePrefixes(org) {
		objs, err := files.List(ctx, p)
		if err != nil {
			return nil, err
		}
		out = append(out, objs...)
	}
	return out, nil
}

// suspend suspends or resumes org.
func suspend(ctx context.Context, st *store.Store, req Request, on bool) (any, error) {
	k := apikeys.New(st)
	if err := orgExists(ctx, k, req.Org); err != nil {
		return nil, err
	}
	var err error
	if on {
		err = k.Suspend(ctx, req.Org)
	} else {
		err = k.Resume(ctx, req.Org)
	}
	if err != nil {
		return nil, err
	}
	status, err := k.Status(ctx, req.Org)
	return map[string]any{"org": req.Org, "status": status,
		"takesEffect": "within " + auth.MaxCacheTTL.String() + " (API_KEY_CACHE_TTL) on every instance"}, err
}

// sink is where an export is written: a directory or a bucket prefix.
type sink interface {
	write(ctx context.Context, name string, r io.Reader) (int64, error)
	location() string
}

type dirSink string

func (d dirSink) write(_ context.Context, name string, r io.Reader) (int64, error) {
	path := filepath.Join(string(d), filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return 0, err
	}
	f, err := os.Create(path)
	if err != nil {
		return 0, err
	}
	n, err := io.Copy(f, r)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return n, err
}

func (d dirSink) location() string { return string(d) }

type blobSink struct {
	files  blob.Store
	prefix string
}

func (b blobSink) write(ctx context.Context, name string, r io.Reader) (int64, error) {
	return b.files.Write(ctx, b.prefix+name, r)
}

func (b blobSink) location() string { return b.prefix }

// source is where a restore reads an export from.
type source interface {
	open(ctx context.Context, name string) (io.ReadCloser, error)
}

type dirSource string

func (d dirSource) open(_ context.Context, name string) (io.ReadCloser, error) {
	return os.Open(filepath.Join(string(d), filepath.FromSlash(name)))
}

type blobSource struct {
	files  blob.Store
	prefix string
}

func (b blobSource) open(ctx context.Context, name string) (io.ReadCloser, error) {
	return b.files.Open(ctx, b.prefix+name, 0)
}

// ExportPrefix is the bulk bucket's folder of an export of org made at t.
func ExportPrefix(org string, t time.Time) string {
	return "orgs/" + org + "/export-" + t.UTC().Format("20060102T150405Z") + "/"
}

// exportOrg writes every item and file of org to a directory or the bulk
// bucket, with a manifest.
func exportOrg(ctx context.Context, st *store.Store, env Env, req Request) (any, error) {
	if req.Org == "" {
		return nil, apperr.Invalid("org", "is required")
	}
	now := time.Now().UTC()
	var out sink
	switch {
	case req.Dir != "" && req.Bucket:
		return nil, apperr.Invalid("dir", "and bucket are exclusive: export to a directory or to the bulk bucket")
	case req.Dir != "":
		if !env.Local {
			return nil, apperr.Invalid("dir", "is the CLI's: the admin function exports to the bulk bucket (BULK_BUCKET)")
		}
		if entries, err := os.ReadDir(req.Dir); err == nil && len(entries) > 0 {
			return nil, apperr.Invalid("dir", "%s is not empty: export into a new directory", req.Dir)
		}
		out = dirSink(req.Dir)
	default:
		if env.Local && !req.Bucket {
			return nil, apperr.Invalid("dir", "is required (or bucket, to export to the bulk bucket)")
		}
		if env.Files == nil {
			return nil, errors.New("no bulk bucket: set BULK_BUCKET")
		}
		out = blobSink{env.Files, ExportPrefix(req.Org, now)}
	}
	m := Manifest{Format: ExportFormat, Org: req.Org, Table: st.Table, ExportedAt: now.Format(time.RFC3339Nano), ItemTypes: map[string]int64{}}

	// The items: streamed from the scan into items.ndjson, hashed on
	// the way.
	pr, pw := io.Pipe()
	h := sha256.New()
	var mu sync.Mutex
	bw := bufio.NewWriterSize(io.MultiWriter(pw, h), 1<<16)
	scanErr := make(chan error, 1)
	go func() {
		err := st.ScanItems(ctx, segmentsOf(req), true, func(it store.Image) error {
			if store.OwnerOf(it) != req.Org {
				return nil
			}
			line, err := store.MarshalItem(it)
			if err != nil {
				return err
			}
			mu.Lock()
			defer mu.Unlock()
			m.Items++
			m.ItemBytes += int64(store.ItemSize(it))
			m.ItemTypes[store.ItemType(it)]++
			bw.Write(line)
			_, err = bw.Write([]byte{'\n'})
			return err
		})
		if err == nil {
			err = bw.Flush()
		}
		pw.CloseWithError(err)
		scanErr <- err
	}()
	if _, err := out.write(ctx, itemsName, pr); err != nil {
		pr.CloseWithError(err)
		<-scanErr
		return nil, fmt.Errorf("write the items: %w", err)
	}
	if err := <-scanErr; err != nil {
		return nil, fmt.Errorf("read the items: %w", err)
	}
	if m.Items == 0 {
		return nil, fmt.Errorf("no such organization: %s (no item of it)", req.Org)
	}
	m.ItemsSHA256 = hex.EncodeToString(h.Sum(nil))

	// The files.
	if env.Files != nil {
		files, err := orgFiles(ctx, env.Files, req.Org)
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			r, err := env.Files.Open(ctx, f.Key, 0)
			if err != nil {
				return nil, err
			}
			fh := sha256.New()
			n, err := out.write(ctx, filesDir+f.Key, io.TeeReader(r, fh))
			r.Close()
			if err != nil {
				return nil, fmt.Errorf("copy file %s: %w", f.Key, err)
			}
			m.Files = append(m.Files, FileEntry{Key: f.Key, Size: n, SHA256: hex.EncodeToString(fh.Sum(nil))})
			m.FileBytes += n
		}
	}
	if m.Files == nil {
		m.Files = []FileEntry{}
	}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, err
	}
	if _, err := out.write(ctx, manifestName, strings.NewReader(string(b)+"\n")); err != nil {
		return nil, fmt.Errorf("write the manifest: %w", err)
	}
	return map[string]any{"org": req.Org, "location": out.location(), "manifest": m, "filesExported": env.Files != nil}, nil
}

// restoreOrg writes an export back into the table (and its files into
// the bulk files), refusing to overwrite anything else; run again, it
// writes what it did not.
func restoreOrg(ctx context.Context, st *store.Store, env Env, req Request) (any, error) {
	if req.Org == "" {
		return nil, apperr.Invalid("org", "is required")
	}
	if req.From == "" {
		return nil, apperr.Invalid("from", "is required: the export's directory, or its folder in the bulk bucket (orgs/<org>/export-<time>/)")
	}
	var src source
	if prefix, ok := strings.CutPrefix(req.From, "orgs/"); ok || !env.Local {
		if env.Files == nil {
			return nil, errors.New("no bulk bucket: set BULK_BUCKET")
		}
		if !strings.HasPrefix(prefix, req.Org+"/") || !strings.HasSuffix(req.From, "/") {
			return nil, apperr.Invalid("from", "must be a folder of the organization's exports in the bulk bucket: orgs/%s/export-<time>/", req.Org)
		}
		src = blobSource{env.Files, req.From}
	} else {
		src = dirSource(req.From)
	}
	m, err := readManifest(ctx, src)
	if err != nil {
		return nil, err
	}
	if m.Org != req.Org {
		return nil, apperr.Invalid("org", "the export is of organization %s, not %s", m.Org, req.Org)
	}
	// Verified whole before anything is written.
	if err := eachItem(ctx, src, m, nil); err != nil {
		return nil, err
	}
	for _, f := range m.Files {
		if err := checkFile(ctx, src, f); err != nil {
			return nil, err
		}
	}
	if len(m.Files) > 0 && env.Files == nil {
		return nil, errors.New("the export holds files and no bulk files are reachable: set BULK_BUCKET")
	}
	keys := apikeys.New(st)
	if err := dropTombstone(ctx, st, keys, req.Org); err != nil {
		return nil, err
	}
	var mu sync.Mutex
	written, present := 0, 0
	var differs []string
	items := make(chan store.Image)
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for it := range items {
				ok, err := st.RestoreItem(wctx, it)
				mu.Lock()
				switch {
				case errors.Is(err, store.ErrItemDiffers):
					differs = append(differs, err.Error())
				case err != nil:
					mu.Unlock()
					errs <- err
					cancel()
					return
				case ok:
					written++
				default:
					present++
				}
				mu.Unlock()
			}
		}()
	}
	feedErr := eachItem(wctx, src, m, func(it store.Image) error {
		select {
		case items <- it:
			return nil
		case <-wctx.Done():
			return wctx.Err()
		}
	})
	close(items)
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return nil, err
	}
	if feedErr != nil {
		return nil, feedErr
	}
	filesWritten, filesPresent := 0, 0
	for _, f := range m.Files {
		ok, err := restoreFile(ctx, src, env.Files, f)
		if err != nil {
			return nil, err
		}
		if ok {
			filesWritten++
		} else {
			filesPresent++
		}
	}
	out := map[string]any{"org": req.Org, "table": st.Table, "items": m.Items, "written": written, "alreadyPresent": present,
		"files": len(m.Files), "filesWritten": filesWritten, "filesAlreadyPresent": filesPresent}
	if len(differs) > 0 {
		slices.Sort(differs)
		return out, fmt.Errorf("%d items of the export were not restored: the table holds other items under their keys (nothing was overwritten): %s",
			len(differs), strings.Join(differs[:min(len(differs), 5)], "; "))
	}
	return out, nil
}

// dropTombstone deletes org's tombstone (its deletion's last trace), so
// that its restored item takes its place.
func dropTombstone(ctx context.Context, st *store.Store, keys *apikeys.Service, org string) error {
	status, err := keys.Status(ctx, org)
	if err != nil || status.Exists || !status.Deleting {
		return err
	}
	ok := store.OrgKey(org)
	return st.DeleteKeys(ctx, []store.Key{ok})
}

func readManifest(ctx context.Context, src source) (Manifest, error) {
	var m Manifest
	r, err := src.open(ctx, manifestName)
	if err != nil {
		return m, fmt.Errorf("read the export's manifest: %w", err)
	}
	defer r.Close()
	if err := json.NewDecoder(r).Decode(&m); err != nil {
		return m, fmt.Errorf("read the export's manifest: %w", err)
	}
	if m.Format != ExportFormat {
		return m, fmt.Errorf("the export's format is %d; this release reads %d", m.Format, ExportFormat)
	}
	return m, nil
}

// eachItem reads items.ndjson, checking it against the manifest, and
// hands each item to fn (nil: only check).
func eachItem(ctx context.Context, src source, m Manifest, fn func(store.Image) error) error {
	r, err := src.open(ctx, itemsName)
	if err != nil {
		return fmt.Errorf("read the export's items: %w", err)
	}
	defer r.Close()
	h := sha256.New()
	sc := bufio.NewScanner(io.TeeReader(r, h))
	sc.Buffer(make([]byte, 0, 1<<20), 8<<20)
	var n int64
	for sc.Scan() {
		n++
		it, err := store.UnmarshalItem(sc.Bytes())
		if err != nil {
			return fmt.Errorf("the export's item %d: %w", n, err)
		}
		if owner := store.OwnerOf(it); owner != m.Org {
			return fmt.Errorf("the export's item %d is of organization %q, not %s", n, owner, m.Org)
		}
		if fn != nil {
			if err := fn(it); err != nil {
				return err
			}
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("read the export's items: %w", err)
	}
	if sum := hex.EncodeToString(h.Sum(nil)); n != m.Items || sum != m.ItemsSHA256 {
		return fmt.Errorf("the export's items do not match its manifest: %d items of SHA-256 %s, the manifest says %d of %s", n, sum, m.Items, m.ItemsSHA256)
	}
	return nil
}

func checkFile(ctx context.Context, src source, f FileEntry) error {
	r, err := src.open(ctx, filesDir+f.Key)
	if err != nil {
		return fmt.Errorf("the export's file %s: %w", f.Key, err)
	}
	defer r.Close()
	h := sha256.New()
	n, err := io.Copy(h, r)
	if err != nil {
		return err
	}
	if sum := hex.EncodeToString(h.Sum(nil)); n != f.Size || sum != f.SHA256 {
		return fmt.Errorf("the export's file %s does not match its manifest", f.Key)
	}
	return nil
}

// restoreFile writes f back unless its key holds a file: written false
// when it holds this very file, an error when another.
func restoreFile(ctx context.Context, src source, files blob.Store, f FileEntry) (bool, error) {
	if _, err := files.Stat(ctx, f.Key); err == nil {
		r, err := files.Open(ctx, f.Key, 0)
		if err != nil {
			return false, err
		}
		h := sha256.New()
		_, err = io.Copy(h, r)
		r.Close()
		if err != nil {
			return false, err
		}
		if hex.EncodeToString(h.Sum(nil)) != f.SHA256 {
			return false, fmt.Errorf("file %s: another file is stored under its key (not overwritten)", f.Key)
		}
		return false, nil
	} else if !errors.Is(err, blob.ErrNotFound) {
		return false, err
	}
	r, err := src.open(ctx, filesDir+f.Key)
	if err != nil {
		return false, err
	}
	defer r.Close()
	_, err = files.Write(ctx, f.Key, r)
	return err == nil, err
}

// deleteOrg deletes every item and file of org: first it marks the
// organization deleted (suspended; its stream records make no events),
// then deletes its items in pages and its files, and last replaces its
// item with a tombstone. Interrupted (a cancelled context, MaxPages),
// it is run again to finish; a dry run counts and deletes nothing.
func deleteOrg(ctx context.Context, st *store.Store, env Env, req Request) (any, error) {
	if req.Org == "" {
		return nil, apperr.Invalid("org", "is required")
	}
	if !req.DryRun && req.Confirm != req.Org {
		return nil, apperr.Invalid("confirm", "must repeat the organization's id (%s) to delete it; --dry-run counts what would be deleted", req.Org)
	}
	keys := apikeys.New(st)
	status, err := keys.Status(ctx, req.Org)
	if err != nil {
		return nil, err
	}
	if !req.DryRun && status.Exists {
		if err := keys.MarkDeleting(ctx, req.Org); err != nil {
			return nil, err
		}
		if status, err = keys.Status(ctx, req.Org); err != nil {
			return nil, err
		}
		// Every cached status of the organization is its deletion's
		// before its first item goes.
		if began, err := time.Parse(time.RFC3339Nano, status.DeletingAt); err == nil {
			if wait := SettleWait - time.Since(began); wait > 0 {
				select {
				case <-ctx.Done():
					return nil, ctx.Err()
				case <-time.After(wait):
				}
			}
		}
	}
	// The items, but the organization's own item (its tombstone at the end).
	orgKey := store.OrgKey(req.Org)
	var mu sync.Mutex
	var found []store.Key
	types := map[string]int{}
	var itemBytes int64
	err = st.ScanItems(ctx, segmentsOf(req), true, func(it store.Image) error {
		if store.OwnerOf(it) != req.Org {
			return nil
		}
		k := store.KeyOf(it)
		mu.Lock()
		defer mu.Unlock()
		if k == orgKey && apikeys.IsTombstone(it) {
			return nil
		}
		types[store.ItemType(it)]++
		itemBytes += int64(store.ItemSize(it))
		if k != orgKey {
			found = append(found, k)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	var files []blob.Object
	var fileBytes int64
	if env.Files != nil {
		if files, err = orgFiles(ctx, env.Files, req.Org); err != nil {
			return nil, err
		}
		for _, f := range files {
			fileBytes += f.Size
		}
	}
	out := map[string]any{"org": req.Org, "dryRun": req.DryRun, "items": len(found) + btoi(status.Exists), "itemTypes": types,
		"itemBytes": itemBytes, "files": len(files), "fileBytes": fileBytes, "filesReachable": env.Files != nil}
	if req.DryRun {
		return out, nil
	}
	// Pages of the items, in key order (a re-run deletes what is left).
	slices.SortFunc(found, func(a, b store.Key) int { return cmp.Or(strings.Compare(a.PK, b.PK), strings.Compare(a.SK, b.SK)) })
	page := cmp.Or(req.PageItems, DefaultPageItems)
	deleted, pages := 0, 0
	for len(found) > 0 {
		if req.MaxPages > 0 && pages == req.MaxPages {
			out["deletedItems"], out["done"] = deleted, false
			out["next"] = "run delete-org again to delete the rest"
			return out, nil
		}
		n := min(page, len(found))
		if err := deletePage(ctx, st, found[:n]); err != nil {
			return nil, fmt.Errorf("deleted %d items of %s; run delete-org again to finish: %w", deleted, req.Org, err)
		}
		deleted += n
		pages++
		found = found[n:]
	}
	for _, f := range files {
		if err := env.Files.Delete(ctx, f.Key); err != nil {
			return nil, fmt.Errorf("deleted the items of %s, not file %s; run delete-org again to finish: %w", req.Org, f.Key, err)
		}
	}
	if status.Exists {
		if err := keys.Tombstone(ctx, req.Org); err != nil {
			return nil, err
		}
	}
	out["deletedItems"], out["deletedFiles"], out["done"] = deleted, len(files), true
	return out, nil
}

// deletePage deletes keys with 4 batch writers at once.
func deletePage(ctx context.Context, st *store.Store, keys []store.Key) error {
	const writers = 4
	chunk := (len(keys) + writers - 1) / writers
	chunk = ((chunk + 24) / 25) * 25
	var wg sync.WaitGroup
	errs := make([]error, writers)
	for i := range writers {
		lo := min(i*chunk, len(keys))
		hi := min(lo+chunk, len(keys))
		if lo == hi {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = st.DeleteKeys(ctx, keys[lo:hi])
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
