package httpapi

import (
	"log/slog"
	"net/http"
	"sort"
	"strings"

	"github.com/gorilla/mux"

	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/gateway"
)

// misses answers requests that no route matched: a path that answers another method gets 405;
// a path under /v1 that names a provider is the gateway's pass-through; anything else is a
// route that does not exist, answered 404 with the nearest route when one is close.
type misses struct {
	log         *slog.Logger
	root        *mux.Router
	passThrough http.Handler // nil: no data plane
	templates   []routeTemplate
}

// routeTemplate is a registered path template and the methods it answers.
type routeTemplate struct {
	path     string
	segments []string
	methods  map[string]bool
}

// aliasPrefix is where the reference's spelling of the admin routes lives (/v1/admin/...).
const aliasPrefix = BasePath + "/admin"

// collect walks the router for the path templates of every route that answers methods.
func (m *misses) collect() {
	byPath := map[string]*routeTemplate{}
	_ = m.root.Walk(func(route *mux.Route, _ *mux.Router, _ []*mux.Route) error {
		tpl, err := route.GetPathTemplate()
		if err != nil {
			return nil
		}
		methods, err := route.GetMethods()
		if err != nil {
			return nil // a prefix (the /v1 subrouter, the /v1/admin alias), not an endpoint
		}
		t := byPath[tpl]
		if t == nil {
			t = &routeTemplate{path: tpl, segments: splitPath(tpl), methods: map[string]bool{}}
			byPath[tpl] = t
		}
		for _, meth := range methods {
			t.methods[meth] = true
		}
		return nil
	})
	for _, t := range byPath {
		m.templates = append(m.templates, *t)
	}
	sort.Slice(m.templates, func(i, j int) bool { return m.templates[i].path < m.templates[j].path })
}

// ServeHTTP answers a request no route matched.
func (m *misses) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := r.URL.Path
	canonical, aliased := strings.CutPrefix(path, aliasPrefix+"/")
	if aliased {
		canonical = BasePath + "/" + canonical
	} else {
		canonical = path
	}
	// mux v1.8.1 loses "wrong method" behind some later routes, so a miss is checked here:
	// if the path answers another method, the answer is 405, not 404.
	if m.answersOtherMethod(r, canonical) {
		m.notAllowed(w, r)
		return
	}
	if m.passThrough != nil && !aliased && strings.HasPrefix(path, BasePath+"/") && gateway.NamesProvider(r.Header) {
		m.passThrough.ServeHTTP(w, r)
		return
	}
	msg := "no such route: " + r.Method + " " + path
	if near := m.nearest(r.Method, canonical); near != "" {
		if aliased {
			near = aliasPrefix + strings.TrimPrefix(near, BasePath)
		}
		msg += "; did you mean " + near + "?"
	} else if m.passThrough != nil && !aliased && strings.HasPrefix(path, BasePath+"/") {
		msg += "; a request for a provider's own API must name the provider (" + gateway.HeaderProvider +
			" or " + gateway.HeaderConfig + ")"
	}
	WriteError(w, r, m.log, domain.Errorf(domain.CodeNotFound, "%s", msg))
}

func (m *misses) notAllowed(w http.ResponseWriter, r *http.Request) {
	WriteError(w, r, m.log, domain.Errorf(domain.CodeNotAllowed, "method %s is not allowed on %s", r.Method, r.URL.Path))
}

func (m *misses) answersOtherMethod(r *http.Request, path string) bool {
	for _, meth := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodPatch} {
		if meth == r.Method {
			continue
		}
		probe := r.Clone(r.Context())
		probe.Method = meth
		probe.URL.Path, probe.URL.RawPath = path, ""
		var match mux.RouteMatch
		if m.root.Match(probe, &match) && match.MatchErr == nil {
			return true
		}
	}
	return false
}

// alias serves the reference's /v1/admin/... paths (prefix stripped) with the specification's
// routes; a path that has no such route is a miss like any other.
func (m *misses) alias(v1 *mux.Router) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r2 := r.Clone(r.Context())
		r2.URL.Path, r2.URL.RawPath = BasePath+r.URL.Path, ""
		var match mux.RouteMatch
		if v1.Match(r2, &match) && match.MatchErr == nil {
			v1.ServeHTTP(w, r2)
			return
		}
		orig := r.Clone(r.Context())
		orig.URL.Path, orig.URL.RawPath = aliasPrefix+r.URL.Path, ""
		m.ServeHTTP(w, orig)
	})
}

// maxSuggestDistance bounds how far a suggestion may be from what was asked, in edits.
const maxSuggestDistance = 3

// nearest returns the route template closest to path, or "" when none is reasonably close:
// at most maxSuggestDistance edits, and at most a third of the characters the path spells.
// A template's {variables} match any one segment.
func (m *misses) nearest(method, path string) string {
	segs := splitPath(path)
	spelled := 0
	for _, s := range segs {
		spelled += len(s)
	}
	limit := min(maxSuggestDistance, spelled/3)
	best, bestDist, bestMethod := "", limit+1, false
	for _, t := range m.templates {
		d := pathDistance(segs, t.segments, limit+1)
		if d > limit {
			continue
		}
		ok := t.methods[method]
		if d < bestDist || (d == bestDist && ok && !bestMethod) {
			best, bestDist, bestMethod = t.path, d, ok
		}
	}
	return best
}

func splitPath(p string) []string {
	var out []string
	for _, s := range strings.Split(p, "/") {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// pathDistance is the edit distance between a path's segments and a template's: a segment
// inserted or deleted costs its length plus one (its slash), a segment changed costs the edit
// distance of its characters, and a {variable} matches any segment for nothing. It stops
// counting at cap.
func pathDistance(path, tpl []string, cap int) int {
	prev := make([]int, len(tpl)+1)
	cur := make([]int, len(tpl)+1)
	for j := 1; j <= len(tpl); j++ {
		prev[j] = prev[j-1] + len(tpl[j-1]) + 1
	}
	for i := 1; i <= len(path); i++ {
		cur[0] = prev[0] + len(path[i-1]) + 1
		for j := 1; j <= len(tpl); j++ {
			sub := prev[j-1]
			if !isVariable(tpl[j-1]) {
				sub += editDistance(path[i-1], tpl[j-1], cap)
			}
			cur[j] = min(sub, prev[j]+len(path[i-1])+1, cur[j-1]+len(tpl[j-1])+1)
		}
		prev, cur = cur, prev
	}
	return min(prev[len(tpl)], cap)
}

func isVariable(seg string) bool { return strings.HasPrefix(seg, "{") && strings.HasSuffix(seg, "}") }

// editDistance is the Levenshtein distance between a and b, capped at cap.
func editDistance(a, b string, cap int) int {
	if a == b {
		return 0
	}
	if d := len(a) - len(b); d >= cap || -d >= cap {
		return cap
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j-1]+cost, prev[j]+1, cur[j-1]+1)
		}
		prev, cur = cur, prev
	}
	return min(prev[len(b)], cap)
}
