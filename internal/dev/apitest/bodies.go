package apitest

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/routers"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Response bodies are validated against schemas compiled once per
// response of the document. kin-openapi validates an OpenAPI 3.1 body
// with santhosh-tekuri/jsonschema too, but compiles the schema again for
// every body it checks: a quarter of the HTTP suite's CPU went to it.
// Here the strict document is one JSON Schema resource, each response's
// schema is compiled from its place in it (its $refs resolve in the same
// document), and formats are asserted as kin-openapi asserts them: with
// its string format validators (openapi3.SchemaStringFormats), a format
// it does not know passing.

// bodyDoc is the compiler over the strict document and the schemas
// compiled so far, by their place in it.
type bodyDoc struct {
	mu       sync.Mutex
	compiler *jsonschema.Compiler
	compiled map[string]*jsonschema.Schema
}

const bodyDocURL = "urn:sourcebase:openapi-strict"

func newBodyDoc(strict []byte) (*bodyDoc, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(strict))
	if err != nil {
		return nil, fmt.Errorf("the strict document: %w", err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	formats := map[string]bool{}
	collectFormats(doc, formats)
	for name := range formats {
		c.RegisterFormat(&jsonschema.Format{Name: name, Validate: func(v any) error {
			s, ok := v.(string)
			f, known := openapi3.SchemaStringFormats[name]
			if !ok || !known {
				return nil
			}
			return f.Validate(s)
		}})
	}
	c.AssertFormat()
	if err := c.AddResource(bodyDocURL, doc); err != nil {
		return nil, err
	}
	return &bodyDoc{compiler: c, compiled: map[string]*jsonschema.Schema{}}, nil
}

func collectFormats(node any, into map[string]bool) {
	switch n := node.(type) {
	case map[string]any:
		if f, ok := n["format"].(string); ok && f != "" {
			into[f] = true
		}
		for _, v := range n {
			collectFormats(v, into)
		}
	case []any:
		for _, v := range n {
			collectFormats(v, into)
		}
	}
}

// schema returns the compiled schema at pointer (a JSON pointer into the
// document, "" escaped), compiling it on first use.
func (d *bodyDoc) schema(pointer string) (*jsonschema.Schema, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if s, ok := d.compiled[pointer]; ok {
		return s, nil
	}
	s, err := d.compiler.Compile(bodyDocURL + "#" + pointer)
	if err != nil {
		return nil, fmt.Errorf("compile the schema at %s: %w", pointer, err)
	}
	d.compiled[pointer] = s
	return s, nil
}

// validateBody checks a response body as openapi3filter.ValidateResponse
// does after its headers (which the caller has it check with
// ExcludeResponseBody): the response of the status (or the default), its
// content of the answer's Content-Type, and the body, JSON, against its
// schema.
func (d *bodyDoc) validateBody(route *routers.Route, status int, header http.Header, body []byte) error {
	if route.Method == http.MethodHead {
		return nil
	}
	switch status {
	case http.StatusNotModified, http.StatusPermanentRedirect, http.StatusTemporaryRedirect, http.StatusMovedPermanently:
		return nil
	}
	responses := route.Operation.Responses
	if responses.Len() == 0 {
		return nil
	}
	key, ref := "", responses.Status(status)
	for k, r := range responses.Map() {
		if ref != nil && r == ref {
			key = k
		}
	}
	if ref == nil {
		if ref = responses.Default(); ref == nil {
			return nil // the headers' check answered that the status is not declared
		}
		key = "default"
	}
	base := "/paths/" + escapePointer(route.Path) + "/" + strings.ToLower(route.Method) + "/responses/" + escapePointer(key)
	if ref.Ref != "" {
		local, ok := strings.CutPrefix(ref.Ref, "#")
		if !ok {
			return fmt.Errorf("response %s: a reference outside the document: %s", key, ref.Ref)
		}
		base = local
	}
	content := ref.Value.Content
	if len(content) == 0 {
		return nil
	}
	mime := header.Get("Content-Type")
	media := content.Get(mime)
	if media == nil {
		return fmt.Errorf("response header Content-Type has unexpected value: %q", mime)
	}
	if media.Schema == nil {
		return nil
	}
	mediaKey := ""
	for k, m := range content {
		if m == media {
			mediaKey = k
		}
	}
	if !strings.HasSuffix(strings.TrimSpace(strings.Split(mediaKey, ";")[0]), "json") {
		// Every answer the document declares is JSON; one that is not
		// needs a decoder here before the check can pass it.
		return fmt.Errorf("the contract check reads JSON bodies only, and %s %s declares %s", route.Method, route.Path, mediaKey)
	}
	schema, err := d.schema(base + "/content/" + escapePointer(mediaKey) + "/schema")
	if err != nil {
		return err
	}
	value, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("failed to decode response body: %w", err)
	}
	if err := schema.Validate(value); err != nil {
		var verr *jsonschema.ValidationError
		if errors.As(err, &verr) {
			return fmt.Errorf("response body doesn't match schema: %v", verr)
		}
		return err
	}
	return nil
}

// escapePointer escapes a JSON pointer's reference token (RFC 6901).
func escapePointer(token string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(token)
}
