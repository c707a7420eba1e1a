// Package web is Quarry's browser UI: a few static files (HTML, one
// stylesheet and JavaScript modules — dom, api, events, router, one per
// page — that the browser loads as they are) embedded in the binary and
// served by quarry serve. The pages use only the public HTTP API under /v1 and its
// event streams, so anything the UI does a client can do too. There is
// nothing to build: the files are the source.
package web

import (
	"embed"
	"io/fs"
	"net/http"
	"path"
	"strings"
)

//go:embed static
var static embed.FS

// Files is the UI's file tree.
func Files() fs.FS {
	sub, err := fs.Sub(static, "static")
	if err != nil {
		panic(err) // the embedded tree is fixed at build time
	}
	return sub
}

// csp lets the pages load their own script and styles and talk to their
// own origin only; reports arrive as sanitised HTML and no inline script
// runs.
const csp = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// Handler serves the UI: / is the app's page, /ui/NAME its files.
func Handler() http.Handler {
	files := http.FileServerFS(Files())
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", csp)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		name := strings.TrimPrefix(r.URL.Path, "/ui")
		if r.URL.Path == "/" || name == "/" || path.Ext(name) == "" {
			h.Set("Cache-Control", "no-cache")
			http.ServeFileFS(w, r, Files(), "index.html")
			return
		}
		h.Set("Cache-Control", "no-cache")
		r2 := r.Clone(r.Context())
		r2.URL.Path = name
		files.ServeHTTP(w, r2)
	})
}
