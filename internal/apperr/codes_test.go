package apperr_test

import (
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/sourcebase/sourcebase/internal/apperr"
)

var update = flag.Bool("update", false, "rewrite the generated table of docs/errors.md (apperr.Markdown)")

func TestTheErrorsPageListsExactlyTheCodes(t *testing.T) {
	const path, open, end = "../../docs/errors.md", "<!-- codes -->\n", "<!-- /codes -->"
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	i, j := strings.Index(doc, open), strings.Index(doc, end)
	if i < 0 || j < i {
		t.Fatalf("%s has no %q ... %q block", path, open, end)
	}
	want := doc[:i+len(open)] + apperr.Markdown() + doc[j:]
	if *update {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if doc != want {
		t.Errorf("%s is out of date: make generate", path)
	}
	// Whatever the rendering: the page names exactly the codes, nowhere
	// else in a table's first column.
	row := regexp.MustCompile("(?m)^\\| `([a-z_]+)` \\| `(\\d+)` \\|")
	var listed []string
	for _, m := range row.FindAllStringSubmatch(doc, -1) {
		listed = append(listed, m[1]+" "+m[2])
	}
	var codes []string
	for _, c := range apperr.Codes {
		codes = append(codes, fmt.Sprintf("%s %d", c.Code, c.Status))
	}
	if strings.Join(listed, ", ") != strings.Join(codes, ", ") {
		t.Errorf("%s lists the codes\n%v\nthe service has\n%v", path, listed, codes)
	}
}

var codeName = regexp.MustCompile(`^[a-z]+(_[a-z]+)*$`)

func TestTheCodesAreAClosedSetOfNamesEachWithOneErrorStatus(t *testing.T) {
	seen := map[apperr.Code]bool{}
	generic := map[int]apperr.Code{}
	for _, c := range apperr.Codes {
		if seen[c.Code] {
			t.Errorf("%s is listed twice", c.Code)
		}
		seen[c.Code] = true
		if !codeName.MatchString(string(c.Code)) {
			t.Errorf("%q is not a snake_case name", c.Code)
		}
		if c.Status < 400 || c.Status > 599 || http.StatusText(c.Status) == "" {
			t.Errorf("%s has status %d, not an error status", c.Code, c.Status)
		}
		if c.When == "" {
			t.Errorf("%s does not say when it is answered", c.Code)
		}
		if info, ok := apperr.Lookup(c.Code); !ok || info != c || c.Code.Status() != c.Status {
			t.Errorf("Lookup(%s) = %v, %v", c.Code, info, ok)
		}
		if _, ok := generic[c.Status]; !ok {
			generic[c.Status] = c.Code
		}
	}
	for status, code := range generic {
		if got := apperr.StatusCode(status); got != code {
			t.Errorf("StatusCode(%d) = %s, want %s, the first code of the status", status, got, code)
		}
	}
	for _, tc := range []struct {
		status int
		want   apperr.Code
	}{{http.StatusNotAcceptable, apperr.CodeInvalidRequest}, {http.StatusGatewayTimeout, apperr.CodeInternal}} {
		if got := apperr.StatusCode(tc.status); got != tc.want {
			t.Errorf("StatusCode(%d) = %s, want %s", tc.status, got, tc.want)
		}
	}
	if _, ok := apperr.Lookup("gone"); ok || apperr.Code("gone").Status() != http.StatusInternalServerError {
		t.Error("a code none of Codes is found")
	}
}

func TestEveryErrorOfThePackageCarriesItsCode(t *testing.T) {
	for _, tc := range []struct {
		err         error
		code        apperr.Code
		param       string
		kind        error
		message     string
		invalidKind string
	}{
		{apperr.Invalid("location.city", "must be a string"), apperr.CodeInvalidBody, "location.city", nil, "location.city must be a string", apperr.InBody},
		{apperr.Invalid("", "must be a JSON object"), apperr.CodeInvalidBody, "", nil, "must be a JSON object", apperr.InBody},
		{apperr.InvalidQuery("page", "must be an integer"), apperr.CodeInvalidQuery, "page", nil, "page must be an integer", apperr.InQuery},
		{apperr.InvalidPath("ids", "names 101 ids"), apperr.CodeInvalidPath, "ids", nil, "ids names 101 ids", apperr.InPath},
		{apperr.InvalidHeader("Idempotency-Key", "must be short"), apperr.CodeInvalidHeader, "Idempotency-Key", nil, "Idempotency-Key must be short", apperr.InHeader},
		{apperr.Conflict("run %s was retried", "run_1"), apperr.CodeConflict, "", apperr.ErrConflict, "run run_1 was retried", ""},
		{apperr.ConcurrentWrite("try again"), apperr.CodeConcurrentWrite, "", apperr.ErrConflict, "try again", ""},
		{apperr.Referenced("in use"), apperr.CodeReferenced, "", apperr.ErrConflict, "in use", ""},
		{apperr.Forbidden("admins only"), apperr.CodeForbidden, "", apperr.ErrForbidden, "admins only", ""},
		{apperr.OrganizationSuspended("suspended"), apperr.CodeOrganizationSuspended, "", apperr.ErrForbidden, "suspended", ""},
		{apperr.TooLarge("over 1 MiB"), apperr.CodePayloadTooLarge, "", apperr.ErrTooLarge, "over 1 MiB", ""},
		{apperr.RecordTooLarge("over 400 KB"), apperr.CodeRecordTooLarge, "", apperr.ErrTooLarge, "over 400 KB", ""},
		{apperr.PreconditionFailed("changed"), apperr.CodePreconditionFailed, "", apperr.ErrPreconditionFailed, "changed", ""},
		{apperr.Unavailable(errors.New("timeout"), "down"), apperr.CodeUnavailable, "", apperr.ErrUnavailable, "down", ""},
		// The kinds alone, and wrapped.
		{apperr.ErrNotFound, apperr.CodeNotFound, "", apperr.ErrNotFound, "not found", ""},
		{fmt.Errorf("get: %w", apperr.ErrNotFound), apperr.CodeNotFound, "", apperr.ErrNotFound, "get: not found", ""},
		{apperr.ErrConflict, apperr.CodeConflict, "", apperr.ErrConflict, "conflict", ""},
		{apperr.ErrForbidden, apperr.CodeForbidden, "", apperr.ErrForbidden, "forbidden", ""},
		{apperr.ErrTooLarge, apperr.CodePayloadTooLarge, "", apperr.ErrTooLarge, "too large", ""},
		{apperr.ErrPreconditionFailed, apperr.CodePreconditionFailed, "", apperr.ErrPreconditionFailed, "precondition failed", ""},
		{apperr.ErrUnavailable, apperr.CodeUnavailable, "", apperr.ErrUnavailable, "unavailable", ""},
		{fmt.Errorf("write: %w", apperr.ConcurrentWrite("again")), apperr.CodeConcurrentWrite, "", apperr.ErrConflict, "write: again", ""},
		{uniqueError{"externalId"}, apperr.CodeUniqueViolation, "externalId", apperr.ErrConflict, "externalId is taken", ""},
		// No kind: an internal failure.
		{errors.New("boom"), "", "", nil, "boom", ""},
	} {
		t.Run(tc.err.Error(), func(t *testing.T) {
			code, param := apperr.CodeOf(tc.err)
			if code != tc.code || param != tc.param {
				t.Errorf("CodeOf = %q, %q; want %q, %q", code, param, tc.code, tc.param)
			}
			if tc.kind != nil && !errors.Is(tc.err, tc.kind) {
				t.Errorf("not errors.Is %v", tc.kind)
			}
			if tc.err.Error() != tc.message {
				t.Errorf("message %q, want %q", tc.err.Error(), tc.message)
			}
			var inv *apperr.InvalidError
			if errors.As(tc.err, &inv) && inv.In != tc.invalidKind {
				t.Errorf("In %q, want %q", inv.In, tc.invalidKind)
			}
		})
	}
}

// uniqueError is a code of another package (as store.UniqueError).
type uniqueError struct{ field string }

func (e uniqueError) Error() string          { return e.field + " is taken" }
func (e uniqueError) Unwrap() error          { return apperr.ErrConflict }
func (e uniqueError) ErrorCode() apperr.Code { return apperr.CodeUniqueViolation }
func (e uniqueError) ErrorParam() string     { return e.field }
