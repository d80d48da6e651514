package blob

import (
	"context"
	"crypto/hmac"
	"crypto/md5"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// PathPrefix is the path under which Dir's Handler serves the files: a
// URL's path is PathPrefix followed by the key.
const PathPrefix = "/files/"

// DefaultMaxUpload is Dir's MaxUpload when it is zero: 1 GiB.
const DefaultMaxUpload int64 = 1 << 30

// tempPrefix starts the names of the temporary files that Write fills
// before renaming them into place; ValidateKey refuses segments starting
// with '.', so no key names one.
const tempPrefix = ".blob-"

// URL query parameters of Dir's URLs.
const (
	paramExpires  = "expires"
	paramOp       = "op"
	paramSig      = "sig"
	paramFilename = "filename"
	paramType     = "type"
)

// Operations a URL of Dir allows.
const (
	opPut = "put"
	opGet = "get"
)

// Dir is a Store over a local directory, for local development and tests:
// a key is a file under Root (its slashes are subdirectories). Its
// upload and download URLs point at BaseURL, where Handler must be served;
// they are signed with HMAC-SHA256 under Secret and carry their expiry.
//
// Writes go to a temporary file in the destination's directory, renamed
// into place once complete: a reader never sees half a file and a failed
// write leaves nothing. A Dir is safe for concurrent use once its fields
// are set; it must not be changed afterwards.
type Dir struct {
	// Root is the directory holding the files.
	Root string
	// BaseURL is where Handler is served, such as "http://localhost:8080".
	// A URL is BaseURL + PathPrefix + key + "?expires=<unix seconds>&op=put"
	// (or "op=get&filename=...&type=...") + "&sig=<hex HMAC-SHA256>", the
	// signature covering the key and every other parameter.
	BaseURL string
	// Secret is the HMAC key of the URLs; NewDir makes a random one. A Dir
	// with no Secret makes no URLs and its Handler refuses every request.
	Secret []byte
	// MaxUpload is the largest upload Handler accepts, in bytes
	// (DefaultMaxUpload when zero); a larger one is answered 413 and
	// nothing of it is kept.
	MaxUpload int64
	// OnUpload, when non-nil, is called by Handler once an upload is
	// complete and its file is in place, with the key and the size in
	// bytes, before the client gets its answer; it should be quick (start
	// a job, say).
	OnUpload func(key string, size int64)
	// Now is the clock of the URLs' expiry (time.Now when nil).
	Now func() time.Time
}

var _ Store = (*Dir)(nil)

// NewDir returns a Dir over root, created if absent, whose URLs start with
// baseURL, with a random 32-byte Secret, the default MaxUpload and the
// system clock.
func NewDir(root, baseURL string) (*Dir, error) {
	if root == "" {
		return nil, errors.New("blob: NewDir: empty root directory")
	}
	u, err := url.Parse(baseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("blob: NewDir: base URL %q is not an http(s) URL with a host", baseURL)
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, fmt.Errorf("blob: NewDir: %w", err)
	}
	secret := make([]byte, 32)
	// crypto/rand.Read never returns an error (it aborts the program
	// instead, since Go 1.24).
	_, _ = rand.Read(secret)
	return &Dir{
		Root:      root,
		BaseURL:   strings.TrimRight(baseURL, "/"),
		Secret:    secret,
		MaxUpload: DefaultMaxUpload,
		Now:       time.Now,
	}, nil
}

// Write stores key from r through a temporary file renamed into place.
func (d *Dir) Write(ctx context.Context, key string, r io.Reader) (int64, error) {
	n, _, err := d.write(ctx, key, r, -1, false)
	return n, err
}

// errTooLarge is write's error when the data exceeds its limit.
var errTooLarge = errors.New("larger than the upload limit")

// write is Write refusing (with errTooLarge) more than limit bytes when
// limit >= 0, and (once, with ErrExists) a key that holds a file already;
// it returns the size and the hex MD5 of what it stored.
func (d *Dir) write(ctx context.Context, key string, r io.Reader, limit int64, once bool) (n int64, md5hex string, err error) {
	path, err := d.path(key)
	if err != nil {
		return 0, "", err
	}
	fail := func(err error) (int64, string, error) {
		return 0, "", fmt.Errorf("blob: write %q: %w", key, err)
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fail(err)
	}
	f, err := os.CreateTemp(dir, tempPrefix+"*")
	if err != nil {
		return fail(err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	src := io.Reader(ctxReader{ctx, r})
	if limit >= 0 {
		src = io.LimitReader(src, limit+1)
	}
	h := md5.New()
	n, err = io.Copy(io.MultiWriter(f, h), src)
	if err != nil {
		return fail(err)
	}
	if limit >= 0 && n > limit {
		return fail(fmt.Errorf("%w of %d bytes", errTooLarge, limit))
	}
	if err = f.Sync(); err != nil {
		return fail(err)
	}
	if err = f.Close(); err != nil {
		return fail(err)
	}
	if once {
		// A link fails when path exists: two uploads at once store one.
		if err = os.Link(f.Name(), path); errors.Is(err, fs.ErrExist) {
			err = ErrExists
		}
		if err != nil {
			return fail(err)
		}
		os.Remove(f.Name())
		return n, hex.EncodeToString(h.Sum(nil)), nil
	}
	if err = os.Rename(f.Name(), path); err != nil {
		return fail(err)
	}
	return n, hex.EncodeToString(h.Sum(nil)), nil
}

// Open opens key's file and positions it at offset; an offset equal to the
// size reads nothing, a larger one is an error.
func (d *Dir) Open(ctx context.Context, key string, offset int64) (io.ReadCloser, error) {
	return d.OpenVersion(ctx, key, offset, "")
}

// OpenVersion is Open of the file Stat named version ("": any).
func (d *Dir) OpenVersion(ctx context.Context, key string, offset int64, version string) (io.ReadCloser, error) {
	path, err := d.path(key)
	if err != nil {
		return nil, err
	}
	if offset < 0 {
		return nil, fmt.Errorf("blob: open %q: negative offset %d", key, offset)
	}
	f, fi, err := openFile(path)
	if err != nil {
		return nil, fmt.Errorf("blob: open %q: %w", key, err)
	}
	if version != "" && fileVersion(fi) != version {
		f.Close()
		return nil, fmt.Errorf("blob: open %q: %w", key, ErrReplaced)
	}
	if offset > fi.Size() {
		f.Close()
		return nil, fmt.Errorf("blob: open %q: offset %d is beyond the size %d", key, offset, fi.Size())
	}
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		f.Close()
		return nil, fmt.Errorf("blob: open %q: %w", key, err)
	}
	return f, nil
}

// Stat returns the size of key's file.
func (d *Dir) Stat(ctx context.Context, key string) (Info, error) {
	path, err := d.path(key)
	if err != nil {
		return Info{}, err
	}
	fi, err := os.Stat(path)
	if err == nil && !fi.Mode().IsRegular() {
		err = fs.ErrNotExist
	}
	if err != nil {
		return Info{}, fmt.Errorf("blob: stat %q: %w", key, notFound(err))
	}
	return Info{Size: fi.Size(), Version: fileVersion(fi)}, nil
}

// fileVersion names a stored file: every write puts a new file in place
// (renamed or linked), with its own inode, at its own time.
func fileVersion(fi fs.FileInfo) string {
	v := fmt.Sprintf("%d-%d", fi.Size(), fi.ModTime().UnixNano())
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		v = fmt.Sprintf("%d-%s", st.Ino, v)
	}
	return v
}

// Delete removes key's file.
func (d *Dir) Delete(ctx context.Context, key string) error {
	path, err := d.path(key)
	if err != nil {
		return err
	}
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) || (err == nil && fi.IsDir()) {
		return nil
	}
	if err == nil {
		err = os.Remove(path)
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("blob: delete %q: %w", key, err)
	}
	return nil
}

// ListDir is d as a Lister (the operator's commands list a directory's
// files through it).
func ListDir(d *Dir) Lister { return dirLister{d} }

// dirLister lists a Dir. Listing is its method, not Dir's: an exported
// method of a type held in an interface is linked into every binary that
// reflects on methods, which every function does.
type dirLister struct{ *Dir }

// List walks the directory of prefix; temporary files (names starting
// with '.') are not objects.
func (l dirLister) List(ctx context.Context, prefix string) ([]Object, error) {
	d := l.Dir
	if err := ValidatePrefix(prefix); err != nil {
		return nil, err
	}
	root, err := d.path(strings.TrimSuffix(prefix, "/"))
	if err != nil {
		return nil, err
	}
	var out []Object
	err = filepath.WalkDir(root, func(path string, e fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) && path == root {
			return filepath.SkipDir
		}
		if err != nil {
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if strings.HasPrefix(e.Name(), ".") {
			if e.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if e.IsDir() || !e.Type().IsRegular() {
			return nil
		}
		fi, err := e.Info()
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(d.Root, path)
		if err != nil {
			return err
		}
		out = append(out, Object{Key: filepath.ToSlash(rel), Size: fi.Size()})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("blob: list %q: %w", prefix, err)
	}
	slices.SortFunc(out, func(a, b Object) int { return strings.Compare(a.Key, b.Key) })
	return out, nil
}

// UploadURL returns a URL of Handler that accepts one PUT of key's file
// until ttl has passed (ttl at most MaxURLTTL).
func (d *Dir) UploadURL(ctx context.Context, key string, ttl time.Duration) (string, error) {
	return d.signedURL(key, ttl, url.Values{paramOp: {opPut}})
}

// DownloadURL returns a URL of Handler that serves key's file until ttl
// has passed (ttl at most MaxURLTTL), as an attachment named filename of
// type contentType.
func (d *Dir) DownloadURL(ctx context.Context, key string, ttl time.Duration, filename, contentType string) (string, error) {
	if _, _, err := DownloadHeaders(filename, contentType); err != nil {
		return "", fmt.Errorf("blob: download URL of %q: %w", key, err)
	}
	q := url.Values{paramOp: {opGet}}
	if filename != "" {
		q.Set(paramFilename, filename)
	}
	if contentType != "" {
		q.Set(paramType, contentType)
	}
	return d.signedURL(key, ttl, q)
}

// signedURL adds the expiry and the signature to q and returns key's URL.
func (d *Dir) signedURL(key string, ttl time.Duration, q url.Values) (string, error) {
	if err := ValidateKey(key); err != nil {
		return "", err
	}
	if err := ValidateTTL(ttl, MaxURLTTL); err != nil {
		return "", fmt.Errorf("blob: URL of %q: %w", key, err)
	}
	if len(d.Secret) == 0 {
		return "", fmt.Errorf("blob: URL of %q: the Dir has no Secret (make it with NewDir)", key)
	}
	// Round up, so that the URL lives at least ttl.
	expires := d.now().Add(ttl + time.Second - 1).Unix()
	q.Set(paramExpires, strconv.FormatInt(expires, 10))
	q.Set(paramSig, hex.EncodeToString(d.sign(key, q)))
	// Encode sorts the parameters, so sig comes last but one at worst; the
	// order does not matter to the signature (see sign).
	return d.BaseURL + PathPrefix + key + "?" + q.Encode(), nil
}

// sign is the HMAC-SHA256, under Secret, of key and the parameters of q
// other than the signature, in url.Values.Encode's canonical (sorted,
// escaped) form: key + "?" + encoded parameters. A key has no '?', so the
// message is unambiguous.
func (d *Dir) sign(key string, q url.Values) []byte {
	signed := url.Values{}
	for name, vs := range q {
		if name != paramSig {
			signed[name] = vs
		}
	}
	mac := hmac.New(sha256.New, d.Secret)
	io.WriteString(mac, key+"?"+signed.Encode())
	return mac.Sum(nil)
}

// path is key's file, after checking key.
func (d *Dir) path(key string) (string, error) {
	if err := ValidateKey(key); err != nil {
		return "", err
	}
	if d.Root == "" {
		return "", fmt.Errorf("blob: %q: the Dir has no Root", key)
	}
	return filepath.Join(d.Root, filepath.FromSlash(key)), nil
}

func (d *Dir) now() time.Time {
	if d.Now != nil {
		return d.Now()
	}
	return time.Now()
}

func (d *Dir) maxUpload() int64 {
	if d.MaxUpload > 0 {
		return d.MaxUpload
	}
	return DefaultMaxUpload
}

// openFile opens the regular file at path; the error is ErrNotFound when
// there is none.
func openFile(path string) (*os.File, fs.FileInfo, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, notFound(err)
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = ErrNotFound
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}

// notFound is err, or ErrNotFound when err says the file does not exist
// (or a directory on its path is a file).
func notFound(err error) error {
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, errNotDir) {
		return ErrNotFound
	}
	return err
}

// errNotDir is the error of opening a path through a file as if it were a
// directory ("a/b/c" when "a/b" is a file).
var errNotDir error = syscall.ENOTDIR

// ctxReader stops reading once its context is done.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
