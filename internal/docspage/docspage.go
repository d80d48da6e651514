// Package docspage serves the browsable API reference of the dev server:
// GET /docs renders the OpenAPI document (GET /v1/openapi.json) with
// Redoc's standalone bundle from the npm package pinned in
// package-lock.json, served by the service itself from
// /docs/redoc.standalone.js. Nothing is loaded from anywhere else: no CDN,
// no fonts, no telemetry.
package docspage

import (
	"errors"
	"fmt"
	"html/template"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
)

// BundleEnv names the variable that points at redoc.standalone.js when
// the dev server does not run from the repository (make run does).
const BundleEnv = "REDOC_BUNDLE"

// bundleInRepo is where npm ci puts the bundle, from the repository root.
const bundleInRepo = "node_modules/redoc/bundles/redoc.standalone.js"

// FindBundle is the path of Redoc's standalone bundle: $REDOC_BUNDLE, or
// node_modules/redoc/bundles/redoc.standalone.js in the working directory
// or the nearest parent that has it. An error says how to get it.
func FindBundle() (string, error) {
	if p := os.Getenv(BundleEnv); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("%s=%s: %w", BundleEnv, p, err)
		}
		return p, nil
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		p := filepath.Join(dir, bundleInRepo)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("redoc's standalone bundle is not installed: make run installs it (npm ci --omit=dev in the repository root), or set " + BundleEnv)
		}
		dir = parent
	}
}

// Handler serves GET /docs (the page) and GET /docs/redoc.standalone.js
// (the bundle at bundle) for the document at specURL. Without a bundle
// (bundleErr), /docs answers 503 with bundleErr's advice.
func Handler(bundle string, bundleErr error, specURL string) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /docs", func(w http.ResponseWriter, r *http.Request) {
		if bundleErr != nil {
			http.Error(w, "The API reference page is unavailable: "+bundleErr.Error(), http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Content-Security-Policy", csp)
		if err := page.Execute(w, struct{ Spec, Bundle string }{specURL, BundlePath}); err != nil {
			slog.ErrorContext(r.Context(), "docs page", "err", err)
		}
	})
	mux.HandleFunc("GET "+BundlePath, func(w http.ResponseWriter, r *http.Request) {
		if bundleErr != nil {
			http.Error(w, bundleErr.Error(), http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
		w.Header().Set("Cache-Control", "public, max-age=3600")
		http.ServeFile(w, r, bundle)
	})
	mux.HandleFunc("/docs/", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/docs", http.StatusFound)
	})
	return mux
}

// BundlePath is where the page loads the bundle from.
const BundlePath = "/docs/redoc.standalone.js"

// Paths reports whether path is served by Handler.
func Paths(path string) bool { return path == "/docs" || strings.HasPrefix(path, "/docs/") }

// csp keeps the page to its own origin: the bundle, the document, and the
// inline styles and workers Redoc makes from blobs.
const csp = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; " +
	"font-src 'self' data:; worker-src 'self' blob:; connect-src 'self'; frame-ancestors 'none'"

var page = template.Must(template.New("docs").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Sourcebase API reference</title>
<style>body { margin: 0; padding: 0; }</style>
</head>
<body>
<redoc spec-url="{{.Spec}}" hide-hostname="true" expand-responses="200,201,202" required-props-first="true"></redoc>
<script src="{{.Bundle}}"></script>
</body>
</html>
`))
