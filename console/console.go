// Package console is Causeway's web console: static files embedded in the binary (an HTML
// shell, ES modules, a stylesheet, and the vendored Preact and htm), served at /console/.
//
// The console is a client of the admin REST API under /v1, run in the browser with the API key
// its user signs in with, so it has exactly the API's access rules: this package serves files
// and holds no logic of the product. It imports only the standard library (make lint checks
// it): never the HTTP layer, the application, or a store.
package console

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"time"
)

// Path is where the console lives; "/" and "/console" are sent here.
const Path = "/console/"

//go:embed assets
var embedded embed.FS

// Security headers of every answer of the console. The policy allows scripts, styles and
// connections to this origin only: no inline script or style, no eval, no framing, no
// plug-ins, and the API key the pages send never goes to another origin.
var securityHeaders = map[string]string{
	"Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
		"connect-src 'self'; font-src 'self'; manifest-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
	"X-Content-Type-Options":       "nosniff",
	"Referrer-Policy":              "no-referrer",
	"X-Frame-Options":              "DENY",
	"Cross-Origin-Opener-Policy":   "same-origin",
	"Cross-Origin-Resource-Policy": "same-origin",
	"Permissions-Policy":           "camera=(), microphone=(), geolocation=(), payment=(), usb=()",
}

// contentTypes are the types of the files the console ships; a file of another kind is not
// served (nosniff would refuse a script served as anything else anyway).
var contentTypes = map[string]string{
	".html": "text/html; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".mjs":  "text/javascript; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".svg":  "image/svg+xml",
	".png":  "image/png",
}

// file is one embedded file, read once at start with its validator.
type file struct {
	body        []byte
	contentType string
	etag        string
}

// handler serves the console from files read at start.
type handler struct {
	files map[string]file // by path under assets/, e.g. "js/main.js"
	index file
}

// Handler serves the console: the page shell for every path of the single-page application
// under /console/ (its router reads the path), the files under /console/assets/, and a
// redirect from / and /console to /console/.
func Handler() http.Handler {
	h, err := newHandler(embedded)
	if err != nil {
		// The files are compiled in: an unreadable one is a broken build, not a runtime state.
		panic("console: " + err.Error())
	}
	return h
}

func newHandler(fsys fs.FS) (*handler, error) {
	h := &handler{files: map[string]file{}}
	err := fs.WalkDir(fsys, "assets", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		ct, ok := contentTypes[path.Ext(p)]
		if !ok {
			return nil // licences and checksums of the vendored files: kept, not served
		}
		body, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(body)
		h.files[strings.TrimPrefix(p, "assets/")] = file{body: body, contentType: ct,
			etag: `"` + hex.EncodeToString(sum[:12]) + `"`}
		return nil
	})
	if err != nil {
		return nil, err
	}
	var ok bool
	if h.index, ok = h.files["index.html"]; !ok {
		return nil, fs.ErrNotExist
	}
	return h, nil
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	for k, v := range securityHeaders {
		w.Header().Set(k, v)
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed: the console is read with GET", http.StatusMethodNotAllowed)
		return
	}
	p := r.URL.Path
	if p == "/" || p == strings.TrimSuffix(Path, "/") {
		http.Redirect(w, r, Path, http.StatusFound)
		return
	}
	rest, ok := strings.CutPrefix(p, Path)
	if !ok {
		http.NotFound(w, r)
		return
	}
	if name, isAsset := strings.CutPrefix(rest, "assets/"); isAsset {
		f, found := h.files[name]
		if !found || name == "index.html" {
			http.NotFound(w, r)
			return
		}
		serve(w, r, f)
		return
	}
	// A page of the application: its router reads the path. A path that names a file
	// (favicon.ico, a mistyped asset) is not a page.
	if rest != "" && strings.Contains(path.Base(rest), ".") {
		http.NotFound(w, r)
		return
	}
	serve(w, r, h.index)
}

// serve answers a file, or 304 to a browser that has it (the ETag is its content's hash, so a
// new binary's files are fetched again while unchanged ones are not).
func serve(w http.ResponseWriter, r *http.Request, f file) {
	w.Header().Set("Content-Type", f.contentType)
	w.Header().Set("ETag", f.etag)
	w.Header().Set("Cache-Control", "no-cache")
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(f.body))
}
