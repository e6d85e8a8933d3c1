package console

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"path"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func get(t *testing.T, h http.Handler, method, target string, header http.Header) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(method, target, nil)
	for k, v := range header {
		req.Header[k] = v
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// Every answer carries the security headers: a policy with no inline script or style, no
// connection or framing beyond this origin, no sniffing, no referrer.
func TestSecurityHeaders(t *testing.T) {
	h := Handler()
	for _, target := range []string{"/console/", "/console/api-keys", "/console/assets/js/main.js", "/console/assets/nope.js", "/"} {
		rec := get(t, h, http.MethodGet, target, nil)
		csp := rec.Header().Get("Content-Security-Policy")
		for _, want := range []string{"default-src 'none'", "script-src 'self'", "connect-src 'self'", "frame-ancestors 'none'", "base-uri 'none'"} {
			assert.Contains(t, csp, want, target)
		}
		assert.NotContains(t, csp, "unsafe-inline", target)
		assert.NotContains(t, csp, "unsafe-eval", target)
		assert.Equal(t, "nosniff", rec.Header().Get("X-Content-Type-Options"), target)
		assert.Equal(t, "no-referrer", rec.Header().Get("Referrer-Policy"), target)
		assert.Equal(t, "DENY", rec.Header().Get("X-Frame-Options"), target)
	}
}

func TestRoutes(t *testing.T) {
	h := Handler()
	for _, tc := range []struct {
		name, method, target string
		status               int
		contentType          string
	}{
		{"the root goes to the console", http.MethodGet, "/", http.StatusFound, ""},
		{"without its slash too", http.MethodGet, "/console", http.StatusFound, ""},
		{"the shell", http.MethodGet, "/console/", http.StatusOK, "text/html; charset=utf-8"},
		{"a page of the application is the shell", http.MethodGet, "/console/audit/4a595606-c985-43b3-9546-8a90e678113e", http.StatusOK, "text/html; charset=utf-8"},
		{"a module", http.MethodGet, "/console/assets/js/main.js", http.StatusOK, "text/javascript; charset=utf-8"},
		{"a vendored module", http.MethodGet, "/console/assets/vendor/preact.mjs", http.StatusOK, "text/javascript; charset=utf-8"},
		{"the stylesheet", http.MethodGet, "/console/assets/app.css", http.StatusOK, "text/css; charset=utf-8"},
		{"HEAD", http.MethodHead, "/console/assets/app.css", http.StatusOK, "text/css; charset=utf-8"},
		{"a missing file", http.MethodGet, "/console/assets/js/nope.js", http.StatusNotFound, ""},
		{"a file outside assets is no page", http.MethodGet, "/console/favicon.ico", http.StatusNotFound, ""},
		{"the checksums are kept, not served", http.MethodGet, "/console/assets/vendor/SHA256SUMS", http.StatusNotFound, ""},
		{"the shell only at its pages", http.MethodGet, "/console/assets/index.html", http.StatusNotFound, ""},
		{"no writes", http.MethodPost, "/console/", http.StatusMethodNotAllowed, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := get(t, h, tc.method, tc.target, nil)
			assert.Equal(t, tc.status, rec.Code)
			if tc.contentType != "" {
				assert.Equal(t, tc.contentType, rec.Header().Get("Content-Type"))
			}
			if tc.status == http.StatusFound {
				assert.Equal(t, Path, rec.Header().Get("Location"))
			}
			if tc.status == http.StatusMethodNotAllowed {
				assert.Equal(t, "GET, HEAD", rec.Header().Get("Allow"))
			}
		})
	}
}

// A browser that has a file revalidates it and gets 304 while it is unchanged.
func TestRevalidation(t *testing.T) {
	h := Handler()
	first := get(t, h, http.MethodGet, "/console/assets/js/main.js", nil)
	require.Equal(t, http.StatusOK, first.Code)
	etag := first.Header().Get("ETag")
	require.NotEmpty(t, etag)
	assert.Equal(t, "no-cache", first.Header().Get("Cache-Control"))
	again := get(t, h, http.MethodGet, "/console/assets/js/main.js", http.Header{"If-None-Match": {etag}})
	assert.Equal(t, http.StatusNotModified, again.Code)
	other := get(t, h, http.MethodGet, "/console/assets/app.css", nil)
	assert.NotEqual(t, etag, other.Header().Get("ETag"))
}

// The shell has no inline script, style or event handler: the policy would refuse them.
func TestShellHasNothingInline(t *testing.T) {
	raw, err := fs.ReadFile(embedded, "assets/index.html")
	require.NoError(t, err)
	page := string(raw)
	for _, tag := range regexp.MustCompile(`(?is)<script[^>]*>`).FindAllString(page, -1) {
		assert.Contains(t, tag, `src="/console/assets/`, "a script with no src is inline: %s", tag)
	}
	assert.NotRegexp(t, `(?i)<style`, page)
	assert.NotRegexp(t, `(?i)\sstyle=`, page)
	assert.NotRegexp(t, `(?i)\son[a-z]+=`, page)
}

// The vendored libraries are the ones scripts/vendor-console.sh fetched and checked: each file
// matches its line of SHA256SUMS.
func TestVendoredFilesMatchTheirChecksums(t *testing.T) {
	sums, err := embedded.Open("assets/vendor/SHA256SUMS")
	require.NoError(t, err)
	defer sums.Close()
	listed := map[string]bool{}
	sc := bufio.NewScanner(sums)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || strings.TrimSpace(line) == "" {
			continue
		}
		want, name, ok := strings.Cut(line, "  ")
		require.True(t, ok, "a line of SHA256SUMS: %q", line)
		body, err := fs.ReadFile(embedded, "assets/vendor/"+name)
		require.NoError(t, err)
		got := sha256.Sum256(body)
		assert.Equal(t, want, hex.EncodeToString(got[:]), name)
		listed[name] = true
	}
	require.NoError(t, sc.Err())
	files, err := fs.Glob(embedded, "assets/vendor/*.mjs")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		assert.True(t, listed[path.Base(f)], "%s is not in SHA256SUMS", f)
	}
}

// Every module's relative imports name files that are there: a typo fails here, without a
// browser.
func TestModulesImportFilesThatExist(t *testing.T) {
	imports := regexp.MustCompile(`(?m)(?:^|;)\s*import\s*[^"'();]*?from\s*["']([^"']+)["']`)
	n := 0
	err := fs.WalkDir(embedded, "assets", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || (path.Ext(p) != ".js" && path.Ext(p) != ".mjs") {
			return err
		}
		body, err := fs.ReadFile(embedded, p)
		if err != nil {
			return err
		}
		for _, m := range imports.FindAllStringSubmatch(string(body), -1) {
			spec := m[1]
			if !strings.HasPrefix(spec, ".") {
				t.Errorf("%s imports %q: a bare name needs an import map, which the policy would refuse", p, spec)
				continue
			}
			_, err := fs.Stat(embedded, path.Join(path.Dir(p), spec))
			assert.NoError(t, err, "%s imports %s", p, spec)
			n++
		}
		return nil
	})
	require.NoError(t, err)
	assert.Greater(t, n, 20)
}
