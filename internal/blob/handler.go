package blob

import (
	"crypto/hmac"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Error codes of Handler's JSON error bodies, the service's codes (package
// apperr) for these statuses.
const (
	codeInvalidPath      = "invalid_path"
	codeInvalidRequest   = "invalid_request"
	codeForbidden        = "forbidden"
	codeConflict         = "conflict"
	codeNotFound         = "not_found"
	codeMethodNotAllowed = "method_not_allowed"
	codePayloadTooLarge  = "payload_too_large"
	codeInternal         = "internal"
)

// Handler serves the URLs of UploadURL and DownloadURL under PathPrefix:
// PUT stores the body as the key's file (200 with an empty body and an
// ETag, the quoted hex MD5 of the file, as S3 answers), then calls
// OnUpload; a PUT to a key that holds a file already is a 409 (an upload
// URL takes one file); GET and HEAD serve the file with the Content-Type and
// Content-Disposition the URL names, and Range requests. A URL whose
// signature is missing or wrong, that has expired or is for the other
// operation is answered 403; other methods 405; a GET of a missing file
// 404; an upload over MaxUpload 413, keeping nothing. Errors have a JSON
// body {"error":{"code":"...","message":"..."}} and the code in
// X-Error-Code. The handler logs nothing (so never a signature).
func (d *Dir) Handler() http.Handler { return http.HandlerFunc(d.serve) }

func (d *Dir) serve(w http.ResponseWriter, r *http.Request) {
	key, ok := strings.CutPrefix(r.URL.Path, PathPrefix)
	if !ok {
		writeError(w, http.StatusNotFound, codeNotFound, "no file is served at this path")
		return
	}
	var op string
	switch r.Method {
	case http.MethodPut:
		op = opPut
	case http.MethodGet, http.MethodHead:
		op = opGet
	default:
		w.Header().Set("Allow", "GET, HEAD, PUT")
		writeError(w, http.StatusMethodNotAllowed, codeMethodNotAllowed, "method "+r.Method+" is not allowed: PUT uploads, GET and HEAD download")
		return
	}
	if err := ValidateKey(key); err != nil {
		writeError(w, http.StatusBadRequest, codeInvalidPath, err.Error())
		return
	}
	q := r.URL.Query()
	if msg := d.authorize(key, op, r.Method, q); msg != "" {
		writeError(w, http.StatusForbidden, codeForbidden, msg)
		return
	}
	if op == opPut {
		d.servePut(w, r, key)
	} else {
		d.serveGet(w, r, key, q)
	}
}

// authorize checks the signature, expiry and operation of a request for
// key; it returns why the request is refused, "" when it is allowed.
func (d *Dir) authorize(key, op, method string, q url.Values) string {
	if len(d.Secret) == 0 {
		return "this server accepts no signed URLs (it has no secret)"
	}
	sig := q.Get(paramSig)
	if sig == "" {
		return "the URL has no signature (sig); ask the API for a new URL"
	}
	got, err := hex.DecodeString(sig)
	if err != nil || len(q[paramSig]) != 1 || !hmac.Equal(got, d.sign(key, q)) {
		return "the URL's signature is not valid for this file; ask the API for a new URL"
	}
	// The parameters below are signed: only this server made them.
	expires, err := strconv.ParseInt(q.Get(paramExpires), 10, 64)
	if err != nil {
		return "the URL has no valid expiry; ask the API for a new URL"
	}
	if d.now().Unix() > expires {
		return "the URL expired at " + time.Unix(expires, 0).UTC().Format(time.RFC3339) + "; ask the API for a new URL"
	}
	if q.Get(paramOp) != op {
		if op == opPut {
			return "this URL is for downloading (GET), not for " + method
		}
		return "this URL is for uploading (PUT), not for " + method
	}
	return ""
}

// servePut stores an authorized upload.
func (d *Dir) servePut(w http.ResponseWriter, r *http.Request, key string) {
	limit := d.maxUpload()
	tooLarge := fmt.Sprintf("the file is larger than the limit of %d bytes", limit)
	if r.ContentLength > limit {
		writeError(w, http.StatusRequestEntityTooLarge, codePayloadTooLarge, tooLarge)
		return
	}
	body := &readErr{r: r.Body}
	n, sum, err := d.write(r.Context(), key, body, limit, true)
	switch {
	case errors.Is(err, ErrExists):
		writeError(w, http.StatusConflict, codeConflict, "this URL took its file already: an upload URL takes one file (create a new import for another)")
		return
	case errors.Is(err, errTooLarge):
		writeError(w, http.StatusRequestEntityTooLarge, codePayloadTooLarge, tooLarge)
		return
	case err != nil && body.err != nil:
		writeError(w, http.StatusBadRequest, codeInvalidRequest, "the upload was interrupted: "+body.err.Error())
		return
	case err != nil:
		writeError(w, http.StatusInternalServerError, codeInternal, "the file could not be stored: "+err.Error())
		return
	}
	if d.OnUpload != nil {
		d.OnUpload(key, n)
	}
	w.Header().Set("ETag", `"`+sum+`"`)
	w.WriteHeader(http.StatusOK)
}

// serveGet serves an authorized download.
func (d *Dir) serveGet(w http.ResponseWriter, r *http.Request, key string, q url.Values) {
	disposition, ctype, err := DownloadHeaders(q.Get(paramFilename), q.Get(paramType))
	if err != nil {
		writeError(w, http.StatusBadRequest, codeInvalidRequest, err.Error())
		return
	}
	path, err := d.path(key)
	if err != nil {
		writeError(w, http.StatusInternalServerError, codeInternal, err.Error())
		return
	}
	f, fi, err := openFile(path)
	if errors.Is(err, ErrNotFound) {
		writeError(w, http.StatusNotFound, codeNotFound, "there is no file at this URL")
		return
	}
	if err != nil {
		writeError(w, http.StatusInternalServerError, codeInternal, "the file could not be read: "+err.Error())
		return
	}
	defer f.Close()
	h := w.Header()
	h.Set("Content-Type", ctype)
	h.Set("Content-Disposition", disposition)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "private, no-store")
	http.ServeContent(w, r, "", fi.ModTime(), f)
}

// errorBody is the JSON body of Handler's errors.
type errorBody struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func writeError(w http.ResponseWriter, status int, code, msg string) {
	var body errorBody
	body.Error.Code, body.Error.Message = code, msg
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("X-Error-Code", code)
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(body)
}

// readErr remembers the error, other than io.EOF, of reading r.
type readErr struct {
	r   io.Reader
	err error
}

func (e *readErr) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil && err != io.EOF {
		e.err = err
	}
	return n, err
}
