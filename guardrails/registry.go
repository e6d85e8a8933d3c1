package guardrails

import (
	"fmt"
	"sort"
	"sync"
	"time"
)

// Registry maps check ids (default.<name>, <partner>.<name>) to their factories. It is a
// value the process builds once (NewRegistry, then the network checks' AddNetworkChecks) and
// hands to the control plane, which validates stored checks with it, and to the gateway,
// which builds them.
type Registry struct {
	mu        sync.RWMutex
	factories map[string]Factory
}

// NewRegistry returns a registry holding every check that runs in the process (see
// localChecks).
func NewRegistry() *Registry {
	r := &Registry{factories: map[string]Factory{}}
	for id, f := range localChecks() {
		r.Add(id, f)
	}
	return r
}

// Add registers a check. An empty id, a nil factory or an id already registered is a
// wiring mistake and panics, as http.ServeMux does.
func (r *Registry) Add(id string, f Factory) {
	if id == "" || f == nil {
		panic("guardrails: Add needs an id and a factory")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.factories[id]; dup {
		panic("guardrails: check " + id + " registered twice")
	}
	r.factories[id] = f
}

// Known reports whether id names a registered check.
func (r *Registry) Known(id string) bool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	_, ok := r.factories[id]
	return ok
}

// IDs lists the registered check ids, sorted.
func (r *Registry) IDs() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	ids := make([]string, 0, len(r.factories))
	for id := range r.factories {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// Build validates a check's parameters (decoded JSON: numbers are float64) and builds it. An
// unknown id is a *ParamError on "id"; parameter errors are *ParamError (several are joined
// with errors.Join; errors.As finds the first).
func (r *Registry) Build(id string, params map[string]any, deps Deps) (Check, error) {
	r.mu.RLock()
	f, ok := r.factories[id]
	r.mu.RUnlock()
	if !ok {
		return nil, &ParamError{Param: "id", Message: fmt.Sprintf("%q is not a known check", id)}
	}
	if params == nil {
		params = map[string]any{}
	}
	return f(params, deps)
}

// Configure builds a check as a guardrail holds it: the parameters failOnError (boolean,
// default false) and timeout (milliseconds, 1 to MaxCheckTimeout, default
// DefaultCheckTimeout), which the reference gateway reads on any check, set the runner's
// FailOnError and Timeout; the check's factory sees them too.
func (r *Registry) Configure(id, name string, params map[string]any, deps Deps) (Configured, error) {
	c, err := r.Build(id, params, deps)
	if err != nil {
		return Configured{}, err
	}
	cfg := Configured{ID: id, Name: name, Check: c}
	if b, ok := params["failOnError"].(bool); ok {
		cfg.FailOnError = b
	}
	if ms, ok := number(params["timeout"]); ok && ms > 0 {
		cfg.Timeout = min(time.Duration(ms*float64(time.Millisecond)), MaxCheckTimeout)
	}
	return cfg, nil
}

// localChecks are the checks that run in the process, by id. Their names and parameters are
// the reference gateway's default plugins' (plugins/default), so guardrails written for it
// work here; default.requiredMetadataKeyPairs and default.requestParametersCheck are the
// specification's, default.pii our own. default.isAllLowerCase is the reference API's other
// name for default.alllowercase.
func localChecks() map[string]Factory {
	return map[string]Factory{
		"default.regexMatch":               newRegexMatch,
		"default.regexReplace":             newRegexReplace,
		"default.sentenceCount":            newCounter("sentence", "minSentences", "maxSentences", 99999, countSentences),
		"default.wordCount":                newCounter("word", "minWords", "maxWords", 99999, countWords),
		"default.characterCount":           newCounter("character", "minCharacters", "maxCharacters", 9999999, countCharacters),
		"default.jsonSchema":               newJSONSchema,
		"default.jsonKeys":                 newJSONKeys,
		"default.contains":                 newContains,
		"default.validUrls":                newValidURLs,
		"default.containsCode":             newContainsCode,
		"default.endsWith":                 newEndsWith,
		"default.alluppercase":             newCase(true),
		"default.alllowercase":             newCase(false),
		"default.isAllLowerCase":           newCase(false),
		"default.notNull":                  newNotNull,
		"default.modelWhitelist":           newModelWhitelist,
		"default.modelRules":               newModelRules,
		"default.requiredMetadataKeys":     newRequiredMetadataKeys,
		"default.requiredMetadataKeyPairs": newRequiredMetadataKeyPairs,
		"default.requestParametersCheck":   newRequestParams,
		"default.allowedRequestTypes":      newAllowedRequestTypes,
		"default.addPrefix":                newAddPrefix,
		"default.pii":                      newPII,
	}
}
