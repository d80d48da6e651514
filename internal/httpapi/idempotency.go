package httpapi

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"sync"
	"time"

	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/auth"
	"github.com/sourcebase/sourcebase/internal/store"
)

// Idempotency keys: a client sends Idempotency-Key on a POST so that
// sending it again (after a timeout, say) cannot do the work twice.
const (
	HeaderIdempotencyKey = "Idempotency-Key"
	// HeaderReplayed marks an answer that repeats an earlier one instead of
	// doing the work again (idempotency keys, webhook delivery ids).
	HeaderReplayed = "Idempotent-Replayed"

	// IdempotencyWindow is how long a key's first response is kept.
	IdempotencyWindow = 24 * time.Hour
	// MaxIdempotencyKey is the longest key, in characters.
	MaxIdempotencyKey = 255
)

// Timing of duplicates that arrive while the first request is in flight.
var (
	// idempotencyWait is how long a duplicate waits for the first request
	// to finish before answering 409.
	idempotencyWait = 10 * time.Second
	// idempotencyLease is how long a claim holds a key without an answer;
	// after it a duplicate takes the key over (the first request's process
	// died). Well above API Gateway's 30 s.
	idempotencyLease = 2 * time.Minute
	// releaseTimeout bounds one attempt to release a key whose request
	// answered 5xx: short, since the release runs before the answer goes
	// out and the table may be the reason for the 5xx.
	releaseTimeout = 2 * time.Second
	// releaseRetryMax is the longest pause between the further attempts
	// of a release that failed (retryRelease).
	releaseRetryMax = 2 * time.Second
)

// replayedHeaders are the response headers kept with a stored answer.
var replayedHeaders = []string{"Content-Type", "Location", "ETag", "Last-Modified", HeaderErrorCode, HeaderErrorParam}

// errInvalidIdempotencyKey answers an Idempotency-Key that is no key
// (400, invalid_header).
var errInvalidIdempotencyKey = apperr.InvalidHeader(HeaderIdempotencyKey, "must be 1 to 255 printable ASCII characters, sent once.")

// idempotencyRecord is the stored state of one key: claimed while the
// first request runs, then its answer.
type idempotencyRecord struct {
	State       string            `json:"state"`       // claimed | answered
	Fingerprint string            `json:"fingerprint"` // SHA-256 of the request body
	Method      string            `json:"method"`
	Path        string            `json:"path"`
	LeaseUntil  time.Time         `json:"leaseUntil"`
	ClaimedAt   time.Time         `json:"claimedAt"`
	Status      int               `json:"status,omitempty"`
	Header      map[string]string `json:"header,omitempty"`
	Body        []byte            `json:"body,omitempty"` // gzip
}

const (
	stateClaimed  = "claimed"
	stateAnswered = "answered"
)

var errKeyTaken = errors.New("idempotency key taken")

// Idempotency makes authenticated POSTs idempotent per Idempotency-Key. The
// first request with a key claims it (a conditional write) and runs; its
// answer (status, body, replayedHeaders) is kept for IdempotencyWindow,
// scoped to the organization, method and path. A repeat with the same body
// gets that answer again, marked Idempotent-Replayed, without running; a
// repeat with another body is 422; a repeat while the first still runs
// waits for it briefly, else is 409. Requests without the header pass
// through.
//
// A 5xx answer is not kept: the key is released at once, before the answer
// goes out, so that the request can be retried as soon as Retry-After says.
// The release may fail when the table is what failed (a stall): then this
// process remembers the claim as abandoned, a repeat that reaches it takes
// the key over at once, and it retries the release in the background until
// it succeeds or the claim's lease ends. A repeat that reaches another
// process finds the key free once that release succeeds; only when this
// process cannot retry (it is stopped, or frozen between Lambda
// invocations) does the key stay held until its lease ends.
func Idempotency(st *store.Store) func(http.Handler) http.Handler {
	abandoned := &abandonedClaims{claims: map[store.Key]abandonedClaim{}}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			values := r.Header.Values(HeaderIdempotencyKey)
			p, authenticated := auth.FromContext(r.Context())
			if len(values) == 0 || !authenticated {
				next.ServeHTTP(w, r)
				return
			}
			if len(values) > 1 || !validIdempotencyKey(values[0]) {
				Error(w, r, errInvalidIdempotencyKey)
				return
			}
			body, err := ReadBody(w, r)
			if err != nil {
				Error(w, r, err)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			k := idempotent{st: st, next: next, fingerprint: sha256Hex(body), abandoned: abandoned}
			k.key = store.IdempotencyKey(p.OrgID, r.Method, r.URL.Path, values[0])
			k.serve(w, r)
		})
	}
}

// validIdempotencyKey: 1..MaxIdempotencyKey printable ASCII characters.
func validIdempotencyKey(k string) bool {
	if len(k) == 0 || len(k) > MaxIdempotencyKey {
		return false
	}
	for i := 0; i < len(k); i++ {
		if k[i] < 0x20 || k[i] > 0x7e {
			return false
		}
	}
	return true
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// idempotent is one request with a key.
type idempotent struct {
	st          *store.Store
	next        http.Handler
	key         store.Key
	fingerprint string
	abandoned   *abandonedClaims
}

func (k idempotent) serve(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	deadline := time.Now().Add(idempotencyWait)
	for {
		now := time.Now().UTC()
		claim := idempotencyRecord{State: stateClaimed, Fingerprint: k.fingerprint, Method: r.Method, Path: r.URL.Path,
			ClaimedAt: now, LeaseUntil: now.Add(idempotencyLease)}
		op, err := k.st.CreateExpiringOp(store.Item{PK: k.key.PK, SK: k.key.SK, Type: store.TypeIdempotency, Doc: claim}, now.Add(IdempotencyWindow))
		if err == nil {
			err = k.st.Transact(ctx, errKeyTaken, op)
		}
		if err == nil {
			k.run(w, r, claim, 1)
			return
		}
		if !errors.Is(err, errKeyTaken) {
			Error(w, r, err)
			return
		}
		var seen idempotencyRecord
		it, err := k.st.GetLive(ctx, k.key.PK, k.key.SK, &seen)
		switch {
		case errors.Is(err, apperr.ErrNotFound):
			// Released or expired since: claim it after the pause below.
		case err != nil:
			Error(w, r, err)
			return
		case seen.Fingerprint != k.fingerprint:
			Refuse(w, apperr.CodeIdempotencyKeyReused, "", "This Idempotency-Key was already used with a different request body; use a new key for a new request.")
			return
		case seen.State == stateAnswered:
			replay(w, r, seen)
			return
		case now.After(seen.LeaseUntil) || k.abandoned.holds(k.key, it.Version):
			// The first request's process stopped without answering, or
			// this process answered it 5xx and could not release the key:
			// take over.
			claim.ClaimedAt = seen.ClaimedAt
			op, err := k.st.ReplaceExpiringOp(store.Item{PK: k.key.PK, SK: k.key.SK, Type: store.TypeIdempotency, Doc: claim, Version: it.Version + 1},
				seen.ClaimedAt.Add(IdempotencyWindow))
			if err == nil {
				err = k.st.Transact(ctx, errKeyTaken, op)
			}
			if err == nil {
				k.abandoned.remove(k.key, it.Version)
				k.run(w, r, claim, it.Version+1)
				return
			}
			if !errors.Is(err, errKeyTaken) {
				Error(w, r, err)
				return
			}
		}
		if time.Now().After(deadline) {
			w.Header().Set("Retry-After", "1")
			Refuse(w, apperr.CodeIdempotencyInProgress, "", "A request with this Idempotency-Key is still in progress; try again shortly.")
			return
		}
		select {
		case <-ctx.Done():
			Error(w, r, ctx.Err())
			return
		case <-time.After(time.Duration(20+rand.IntN(30)) * time.Millisecond):
		}
	}
}

// run serves the request that holds the claim (at version) and keeps its
// answer, or releases the key when there is none to keep.
func (k idempotent) run(w http.ResponseWriter, r *http.Request, claim idempotencyRecord, version int64) {
	rec := &statusWriter{ResponseWriter: w, copy: &bytes.Buffer{}}
	done := false
	defer func() {
		if !done { // the handler panicked: free the key, then let Observe answer
			k.release(r.Context(), version)
		}
	}()
	k.next.ServeHTTP(rec, r)
	done = true
	status := rec.status
	if status == 0 {
		status = http.StatusOK
	}
	if status >= 500 {
		k.release(r.Context(), version)
		return
	}
	answer := claim
	answer.State, answer.Status, answer.Header = stateAnswered, status, map[string]string{}
	for _, h := range replayedHeaders {
		if v := rec.Header().Get(h); v != "" {
			answer.Header[h] = v
		}
	}
	var zipped bytes.Buffer
	zw := gzip.NewWriter(&zipped)
	zw.Write(rec.copy.Bytes())
	zw.Close()
	answer.Body = zipped.Bytes()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), 10*time.Second)
	defer cancel()
	op, err := k.st.ReplaceExpiringOp(store.Item{PK: k.key.PK, SK: k.key.SK, Type: store.TypeIdempotency, Doc: answer, Version: version + 1},
		claim.ClaimedAt.Add(IdempotencyWindow))
	if err == nil {
		err = k.st.Transact(ctx, errKeyTaken, op)
	}
	if err != nil {
		slog.WarnContext(ctx, "could not keep the answer of an idempotent request; its key is released", "err", err)
		k.release(ctx, version)
	}
}

// release deletes the claim at version, so a later request with the key
// runs: at once, on a context the client cannot cancel, within
// releaseTimeout. When that fails the claim is remembered as abandoned and
// released in the background (abandonedClaims).
func (k idempotent) release(ctx context.Context, version int64) {
	ctx = context.WithoutCancel(ctx)
	err := k.releaseOnce(ctx, version)
	if err == nil {
		return
	}
	slog.WarnContext(ctx, "could not release an idempotency key; a repeat reaching this process takes it over, "+
		"and the release is retried until the key's lease ends", "err", err)
	until := time.Now().Add(idempotencyLease)
	if k.abandoned.add(k.key, version, until) {
		go k.retryRelease(ctx, version, until)
	}
}

// releaseOnce tries to delete the claim at version once; nil when it is
// deleted or no longer at version (taken over or expired since).
func (k idempotent) releaseOnce(ctx context.Context, version int64) error {
	ctx, cancel := context.WithTimeout(ctx, releaseTimeout)
	defer cancel()
	err := k.st.Transact(ctx, errKeyTaken, k.st.DeleteVersionOp(k.key.PK, k.key.SK, version))
	if err == nil || errors.Is(err, errKeyTaken) {
		return nil
	}
	return err
}

// retryRelease retries the release of an abandoned claim, pausing longer
// each time up to releaseRetryMax, until it succeeds or the lease ends.
func (k idempotent) retryRelease(ctx context.Context, version int64, until time.Time) {
	defer k.abandoned.remove(k.key, version)
	pause := 100 * time.Millisecond
	for time.Now().Before(until) {
		time.Sleep(pause)
		if !k.abandoned.holds(k.key, version) {
			return // taken over by a repeat
		}
		if k.releaseOnce(ctx, version) == nil {
			return
		}
		pause = min(2*pause, releaseRetryMax)
	}
	slog.WarnContext(ctx, "could not release an idempotency key before its lease ended; a repeat takes it over now")
}

// abandonedClaims are the claims of this process whose request answered
// (5xx) but whose release failed: their requests run no more, so a repeat
// may take the key over at once. An entry lasts until the release succeeds,
// a repeat takes the key over, or the lease ends.
type abandonedClaims struct {
	mu     sync.Mutex
	claims map[store.Key]abandonedClaim
}

type abandonedClaim struct {
	version int64
	until   time.Time
}

// maxAbandoned bounds the claims remembered; beyond it a claim is held
// until its lease ends.
const maxAbandoned = 10000

// add remembers the claim of key at version; false when it is remembered
// already or too many are.
func (a *abandonedClaims) add(key store.Key, version int64, until time.Time) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if c, ok := a.claims[key]; ok && c.version == version || len(a.claims) >= maxAbandoned {
		return false
	}
	a.claims[key] = abandonedClaim{version: version, until: until}
	return true
}

// holds reports whether the claim of key at version is abandoned.
func (a *abandonedClaims) holds(key store.Key, version int64) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	c, ok := a.claims[key]
	return ok && c.version == version && time.Now().Before(c.until)
}

// remove forgets the claim of key at version.
func (a *abandonedClaims) remove(key store.Key, version int64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if c, ok := a.claims[key]; ok && c.version == version {
		delete(a.claims, key)
	}
}

// replay writes a kept answer again.
func replay(w http.ResponseWriter, r *http.Request, rec idempotencyRecord) {
	zr, err := gzip.NewReader(bytes.NewReader(rec.Body))
	var body []byte
	if err == nil {
		body, err = io.ReadAll(zr)
	}
	if err != nil {
		Error(w, r, err)
		return
	}
	for h, v := range rec.Header {
		w.Header().Set(h, v)
	}
	if rec.Status >= 400 && rec.Header[HeaderErrorCode] == "" {
		// Kept before answers carried their code.
		SetErrorCode(w.Header(), apperr.StatusCode(rec.Status), "")
	}
	w.Header().Set(HeaderReplayed, "true")
	w.WriteHeader(rec.Status)
	w.Write(body)
}
