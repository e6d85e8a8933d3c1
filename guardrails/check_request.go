package guardrails

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
)

// The request checks judge (or, for addPrefix, rewrite) the request itself: its model, its
// metadata, its parameters and tools, its endpoint. They belong on the before-request hook.

// requestModel is the model a request asks for: the Input's, else the body's.
func requestModel(in Input) string {
	if in.Model != "" {
		return in.Model
	}
	var b struct {
		Model string `json:"model"`
	}
	_ = json.Unmarshal(in.Request, &b)
	return b.Model
}

var errNoModel = errors.New("the request names no model")

// --- default.modelWhitelist -----------------------------------------------------------------

type modelWhitelist struct {
	models []string
	not    bool
}

// newModelWhitelist: models (required), not (the models are blocked instead). A request
// without a model is an error.
func newModelWhitelist(params map[string]any, _ Deps) (Check, error) {
	p := readParams(params)
	models := p.strings("models", true, maxListItems, false)
	not := p.boolean("not", false)
	p.runner()
	if err := p.done(); err != nil {
		return nil, err
	}
	return &modelWhitelist{models: models, not: not}, nil
}

func (c *modelWhitelist) Run(_ context.Context, in Input) (Verdict, error) {
	model := requestModel(in)
	if model == "" {
		return Verdict{}, errNoModel
	}
	listed := inList(c.models, model)
	pass := inverted(listed, c.not)
	expl := fmt.Sprintf("Model %q is allowed.", model)
	if !pass {
		expl = fmt.Sprintf("Model %q is not allowed.", model)
	}
	return Verdict{Pass: pass, Explanation: expl, Data: map[string]any{
		"requestedModel": model, "allowedModels": c.models, "not": c.not, "verdict": pass,
	}}, nil
}

// --- default.modelRules ---------------------------------------------------------------------

type modelRules struct {
	defaults []string
	metadata map[string]map[string][]string // metadata key → value → models
	not      bool
}

// newModelRules: rules (required: {"defaults": [models], "metadata": {key: {value:
// [models]}}}), not. The models allowed are those of the rules the request's metadata
// matches, else the defaults.
func newModelRules(params map[string]any, _ Deps) (Check, error) {
	p := readParams(params)
	rules := p.sub("rules")
	if !p.has("rules") {
		p.fail("rules", "is required (an object)")
	}
	not := p.boolean("not", false)
	p.runner()
	c := &modelRules{not: not, metadata: map[string]map[string][]string{}}
	c.defaults = rules.strings("defaults", false, maxListItems, false)
	md := rules.sub("metadata")
	for key := range md.m {
		values := md.sub(key)
		c.metadata[key] = map[string][]string{}
		for val := range values.m {
			c.metadata[key][val] = values.strings(val, true, maxListItems, false)
		}
		if err := values.done(); err != nil {
			md.errs = append(md.errs, err)
		}
	}
	if err := p.done(rules, md); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *modelRules) Run(_ context.Context, in Input) (Verdict, error) {
	model := requestModel(in)
	if model == "" {
		return Verdict{}, errNoModel
	}
	var allowed, matched []string
	keys := make([]string, 0, len(c.metadata))
	for k := range c.metadata {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v, ok := in.Metadata[k]
		if !ok {
			continue
		}
		if models, ok := c.metadata[k][v]; ok {
			matched = append(matched, k+":"+v)
			allowed = append(allowed, models...)
		}
	}
	if len(matched) == 0 {
		allowed = c.defaults
	}
	if len(allowed) == 0 {
		return Verdict{}, errors.New("no allowed models resolved from the rules")
	}
	pass := inverted(inList(allowed, model), c.not)
	expl := fmt.Sprintf("Model %q is allowed by the rules.", model)
	if !pass {
		expl = fmt.Sprintf("Model %q is not allowed by the rules.", model)
	}
	return Verdict{Pass: pass, Explanation: expl, Data: map[string]any{
		"requestedModel": model, "allowedModels": allowed, "matchedRules": matched, "not": c.not,
	}}, nil
}

// --- default.requiredMetadataKeys, default.requiredMetadataKeyPairs --------------------------

type metadataKeys struct {
	keys     []string
	values   map[string]string // for pairs: the value each key must have
	operator string
}

// newRequiredMetadataKeys: metadataKeys (required), operator all|any|none (default all).
func newRequiredMetadataKeys(params map[string]any, _ Deps) (Check, error) {
	p := readParams(params)
	keys := p.strings("metadataKeys", true, maxListItems, false)
	op := p.enum("operator", "all", "all", "any", "none")
	p.runner()
	if err := p.done(); err != nil {
		return nil, err
	}
	return &metadataKeys{keys: keys, operator: op}, nil
}

// newRequiredMetadataKeyPairs: metadataPairs (required, an object of key: string value; a
// pair is found when the request's metadata has the key with exactly that value), operator
// all|any|none (default all).
func newRequiredMetadataKeyPairs(params map[string]any, _ Deps) (Check, error) {
	p := readParams(params)
	pairs := p.object("metadataPairs", true)
	op := p.enum("operator", "all", "all", "any", "none")
	p.runner()
	c := &metadataKeys{values: map[string]string{}, operator: op}
	if p.has("metadataPairs") && len(pairs) == 0 {
		p.fail("metadataPairs", "must hold at least one pair")
	}
	if len(pairs) > maxListItems {
		p.fail("metadataPairs", "holds %d pairs, at most %d", len(pairs), maxListItems)
	}
	for k, v := range pairs {
		s, ok := v.(string)
		if !ok {
			p.fail("metadataPairs."+k, "must be a string, got %s", jsonKind(v))
			continue
		}
		c.keys = append(c.keys, k)
		c.values[k] = s
	}
	sort.Strings(c.keys)
	if err := p.done(); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *metadataKeys) Run(_ context.Context, in Input) (Verdict, error) {
	if in.Hook == AfterRequest {
		return Verdict{}, errors.New("this check runs only on the before-request hook")
	}
	found, missing := []string{}, []string{}
	for _, k := range c.keys {
		v, ok := in.Metadata[k]
		if ok && (c.values == nil || v == c.values[k]) {
			found = append(found, k)
		} else {
			missing = append(missing, k)
		}
	}
	pass := opVerdict(c.operator, len(found), len(missing))
	what := "metadata keys"
	if c.values != nil {
		what = "metadata pairs"
	}
	return Verdict{Pass: pass, Explanation: opExplanation(what, c.operator, pass), Data: map[string]any{
		"found_metadata_keys": found, "missing_metadata_keys": missing, "operator": c.operator,
	}}, nil
}

// --- default.allowedRequestTypes ------------------------------------------------------------

// requestTypes are the reference's request types (its endpoints).
var requestTypes = []string{"complete", "chatComplete", "embed", "rerank", "moderate", "stream-complete",
	"stream-chatComplete", "stream-messages", "proxy", "imageGenerate", "createSpeech", "createTranscription",
	"createTranslation", "realtime", "uploadFile", "listFiles", "retrieveFile", "deleteFile", "retrieveFileContent",
	"createBatch", "retrieveBatch", "cancelBatch", "listBatches", "getBatchOutput", "listFinetunes",
	"createFinetune", "retrieveFinetune", "cancelFinetune", "createModelResponse", "getModelResponse",
	"deleteModelResponse", "listResponseInputItems", "messages"}

type allowedRequestTypes struct {
	allowed, blocked []string
}

// newAllowedRequestTypes: allowedTypes, blockedTypes (arrays, or comma-separated strings, of
// request types; blocked wins; a type in both is refused). With neither, the request's
// metadata supported_endpoints and blocked_endpoints (comma-separated) decide, as in the
// reference, and with none of these every type passes. A request asking to stream is of its
// endpoint's type and of stream-<endpoint> too.
func newAllowedRequestTypes(params map[string]any, _ Deps) (Check, error) {
	p := readParams(params)
	allowed := p.enumStrings("allowedTypes", len(requestTypes), true, requestTypes)
	blocked := p.enumStrings("blockedTypes", len(requestTypes), true, requestTypes)
	p.runner()
	for _, t := range allowed {
		if inList(blocked, t) {
			p.fail("blockedTypes", "%q is in allowedTypes too", t)
		}
	}
	if err := p.done(); err != nil {
		return nil, err
	}
	return &allowedRequestTypes{allowed: allowed, blocked: blocked}, nil
}

func splitList(s string) []string {
	var out []string
	for _, x := range strings.Split(s, ",") {
		if x = strings.TrimSpace(x); x != "" {
			out = append(out, x)
		}
	}
	return out
}

func (c *allowedRequestTypes) Run(_ context.Context, in Input) (Verdict, error) {
	if in.Endpoint == "" {
		return Verdict{}, errors.New("the request's type is unknown")
	}
	allowed, blocked, source := c.allowed, c.blocked, "parameters"
	if len(allowed) == 0 && len(blocked) == 0 {
		allowed, blocked, source = splitList(in.Metadata["supported_endpoints"]), splitList(in.Metadata["blocked_endpoints"]), "metadata"
		if len(allowed) == 0 && len(blocked) == 0 {
			source = "default"
		}
	}
	types := []string{in.Endpoint}
	if streamType := "stream-" + in.Endpoint; (inList(allowed, streamType) || inList(blocked, streamType)) && asksToStream(in.Request) {
		types = append(types, streamType)
	}
	isBlocked, isAllowed := false, len(allowed) == 0
	for _, t := range types {
		isBlocked = isBlocked || inList(blocked, t)
		isAllowed = isAllowed || inList(allowed, t)
	}
	pass := !isBlocked && isAllowed
	expl := fmt.Sprintf("Request type %q is allowed.", in.Endpoint)
	switch {
	case isBlocked:
		expl = fmt.Sprintf("Request type %q is blocked.", in.Endpoint)
	case !isAllowed:
		expl = fmt.Sprintf("Request type %q is not allowed. Allowed types are: %s", in.Endpoint, strings.Join(allowed, ", "))
	}
	return Verdict{Pass: pass, Explanation: expl, Data: map[string]any{
		"currentRequestType": in.Endpoint, "allowedTypes": allowed, "blockedTypes": blocked, "source": source, "verdict": pass,
	}}, nil
}

func asksToStream(body json.RawMessage) bool {
	var b struct {
		Stream bool `json:"stream"`
	}
	return json.Unmarshal(body, &b) == nil && b.Stream
}

// --- default.requestParametersCheck ---------------------------------------------------------

type valueRule struct{ blocked, allowed []string } // canonical JSON of the values

type requestParams struct {
	blockedTypes, allowedTypes, blockedFns, allowedFns []string
	blockedKeys, allowedKeys                           []string
	values                                             map[string]valueRule
}

// contentKeys are always allowed by params.allowedKeys: without them there is no request.
var contentKeys = []string{"model", "messages", "prompt", "input"}

// newRequestParams: the specification's request-params guardrail.
//
//	tools:  blockedTypes, allowedTypes (tool types: function, web_search, ...),
//	        blockedFunctionNames, allowedFunctionNames
//	params: blockedKeys, allowedKeys (top-level body keys; model, messages, prompt and input
//	        are always allowed), values: {<key>: {blockedValues, allowedValues}} (JSON
//	        values compared exactly; an array value is judged item by item)
//
// Every list is optional; a blocked item wins; an allow list, when given, must hold
// everything the request has of its kind. A value in both lists of a pair is refused.
func newRequestParams(params map[string]any, _ Deps) (Check, error) {
	p := readParams(params)
	tools := p.sub("tools")
	prm := p.sub("params")
	p.runner()
	c := &requestParams{values: map[string]valueRule{}}
	c.blockedTypes = tools.strings("blockedTypes", false, maxListItems, false)
	c.allowedTypes = tools.strings("allowedTypes", false, maxListItems, false)
	c.blockedFns = tools.strings("blockedFunctionNames", false, maxListItems, false)
	c.allowedFns = tools.strings("allowedFunctionNames", false, maxListItems, false)
	c.blockedKeys = prm.strings("blockedKeys", false, maxListItems, false)
	c.allowedKeys = prm.strings("allowedKeys", false, maxListItems, false)
	overlap(tools, "blockedTypes", c.blockedTypes, c.allowedTypes)
	overlap(tools, "blockedFunctionNames", c.blockedFns, c.allowedFns)
	overlap(prm, "blockedKeys", c.blockedKeys, c.allowedKeys)
	vals := prm.sub("values")
	var keyReaders []*paramReader
	for key := range vals.m {
		kr := vals.sub(key)
		rule := valueRule{blocked: jsonValues(kr, "blockedValues"), allowed: jsonValues(kr, "allowedValues")}
		overlap(kr, "blockedValues", rule.blocked, rule.allowed)
		c.values[key] = rule
		keyReaders = append(keyReaders, kr)
	}
	if err := p.done(append([]*paramReader{tools, prm, vals}, keyReaders...)...); err != nil {
		return nil, err
	}
	return c, nil
}

func overlap(p *paramReader, name string, blocked, allowed []string) {
	for _, b := range blocked {
		if inList(allowed, b) {
			p.fail(name, "%s is in the allowed list too", b)
		}
	}
}

// jsonValues reads a list of JSON values as their canonical encodings.
func jsonValues(p *paramReader, name string) []string {
	v, ok := p.lookup(name)
	if !ok {
		return nil
	}
	list, isList := v.([]any)
	if !isList {
		p.fail(name, "must be an array, got %s", jsonKind(v))
		return nil
	}
	if len(list) > maxListItems {
		p.fail(name, "holds %d items, at most %d", len(list), maxListItems)
		return nil
	}
	out := make([]string, 0, len(list))
	for _, it := range list {
		out = append(out, canonical(it))
	}
	return out
}

// canonical encodes a decoded JSON value so that equal values compare equal whether their
// numbers came as float64 or json.Number.
func canonical(v any) string {
	if n, ok := v.(json.Number); ok {
		if f, err := n.Float64(); err == nil {
			v = f
		}
	}
	b, _ := json.Marshal(v)
	return string(b)
}

type toolDesc struct{ typ, name string }

func (c *requestParams) Run(_ context.Context, in Input) (Verdict, error) {
	doc, err := decodeBody(in.Request)
	if err != nil {
		return Verdict{}, fmt.Errorf("reading the request: %w", err)
	}
	var problems []string
	for _, t := range requestTools(doc) {
		switch {
		case inList(c.blockedTypes, t.typ):
			problems = append(problems, fmt.Sprintf("tool type %q is blocked", t.typ))
		case len(c.allowedTypes) > 0 && !inList(c.allowedTypes, t.typ):
			problems = append(problems, fmt.Sprintf("tool type %q is not allowed", t.typ))
		}
		if t.name == "" {
			continue
		}
		switch {
		case inList(c.blockedFns, t.name):
			problems = append(problems, fmt.Sprintf("function %q is blocked", t.name))
		case len(c.allowedFns) > 0 && !inList(c.allowedFns, t.name):
			problems = append(problems, fmt.Sprintf("function %q is not allowed", t.name))
		}
	}
	keys := make([]string, 0, len(doc))
	for k := range doc {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		switch {
		case inList(c.blockedKeys, k):
			problems = append(problems, fmt.Sprintf("parameter %q is blocked", k))
		case len(c.allowedKeys) > 0 && !inList(c.allowedKeys, k) && !inList(contentKeys, k):
			problems = append(problems, fmt.Sprintf("parameter %q is not allowed", k))
		}
		rule, ok := c.values[k]
		if !ok {
			continue
		}
		items := []any{doc[k]}
		if list, isList := doc[k].([]any); isList {
			items = list
		}
		for _, it := range items {
			val := canonical(it)
			switch {
			case inList(rule.blocked, val):
				problems = append(problems, fmt.Sprintf("value %s of parameter %q is blocked", val, k))
			case len(rule.allowed) > 0 && !inList(rule.allowed, val):
				problems = append(problems, fmt.Sprintf("value %s of parameter %q is not allowed", val, k))
			}
		}
	}
	pass := len(problems) == 0
	expl := "The request's tools and parameters are allowed."
	if !pass {
		expl = "The request breaks the parameter rules: " + strings.Join(problems, "; ") + "."
	}
	return Verdict{Pass: pass, Explanation: expl, Data: map[string]any{"violations": problems}}, nil
}

// requestTools lists a request's tools: OpenAI's {"type":"function","function":{"name"}},
// the Responses API's and Anthropic's {"type", "name"} (a tool without a type, as Anthropic's
// custom tools, counts as a function), and the legacy "functions" list.
func requestTools(doc map[string]any) []toolDesc {
	var out []toolDesc
	if tools, ok := doc["tools"].([]any); ok {
		for _, t := range tools {
			tool, ok := t.(map[string]any)
			if !ok {
				continue
			}
			d := toolDesc{}
			d.typ, _ = tool["type"].(string)
			if fn, ok := tool["function"].(map[string]any); ok {
				d.name, _ = fn["name"].(string)
			} else {
				d.name, _ = tool["name"].(string)
			}
			if d.typ == "" {
				d.typ = "function"
			}
			out = append(out, d)
		}
	}
	if fns, ok := doc["functions"].([]any); ok {
		for _, f := range fns {
			if fn, ok := f.(map[string]any); ok {
				name, _ := fn["name"].(string)
				out = append(out, toolDesc{typ: "function", name: name})
			}
		}
	}
	return out
}

// --- default.addPrefix ----------------------------------------------------------------------

type addPrefix struct {
	prefix        string
	role          string
	addToExisting bool
	onlyIfEmpty   bool
}

// newAddPrefix: prefix (required), applyToRole user|system|assistant (default user),
// addToExisting (default true: prefix the role's first message; false: insert a message of
// the prefix before it), onlyIfEmpty (default false: with true, only a missing or empty
// message of the role gets it). With no message of the role, one is added (a system message
// first, others last). Completions get the prefix on their prompt. As in the reference it is
// the role's first message that gets the prefix. It always passes.
func newAddPrefix(params map[string]any, _ Deps) (Check, error) {
	p := readParams(params)
	c := &addPrefix{
		prefix:        p.nonEmptyStr("prefix", true, "", 64<<10),
		role:          p.enum("applyToRole", "user", "user", "system", "assistant"),
		addToExisting: p.boolean("addToExisting", true),
		onlyIfEmpty:   p.boolean("onlyIfEmpty", false),
	}
	p.runner()
	if err := p.done(); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *addPrefix) Transforms() bool { return true }

func (c *addPrefix) Run(_ context.Context, in Input) (Verdict, error) {
	data := map[string]any{"prefix": c.prefix, "applyToRole": c.role, "addToExisting": c.addToExisting, "onlyIfEmpty": c.onlyIfEmpty}
	if in.Hook == AfterRequest || len(in.Request) == 0 {
		return Verdict{Pass: true, Explanation: "Nothing to prefix on this hook.", Data: data}, nil
	}
	doc, err := decodeBody(in.Request)
	if err != nil {
		return Verdict{}, fmt.Errorf("reading the request: %w", err)
	}
	changed := false
	if msgs, ok := doc["messages"].([]any); ok {
		doc["messages"], changed = c.prefixMessages(msgs)
	} else if _, ok := doc["prompt"]; ok {
		changed = prefixPrompt(doc, c.prefix)
	}
	if !changed {
		return Verdict{Pass: true, Explanation: "The request was left as it was.", Data: data}, nil
	}
	body, err := encodeBody(doc)
	if err != nil {
		return Verdict{}, err
	}
	return Verdict{Pass: true, Explanation: fmt.Sprintf("Added the prefix to the %s message.", c.role), Data: data, Transformed: body}, nil
}

func (c *addPrefix) prefixMessages(msgs []any) ([]any, bool) {
	target := -1
	for i, m := range msgs {
		if msg, ok := m.(map[string]any); ok && msg["role"] == c.role {
			target = i
			break
		}
	}
	fresh := map[string]any{"role": c.role, "content": c.prefix}
	if target < 0 {
		if c.role == "system" {
			return append([]any{fresh}, msgs...), true
		}
		return append(msgs, fresh), true
	}
	msg := msgs[target].(map[string]any)
	if c.onlyIfEmpty && !emptyContent(msg["content"]) {
		return msgs, false
	}
	if !c.addToExisting {
		out := append([]any{}, msgs[:target]...)
		out = append(out, fresh)
		return append(out, msgs[target:]...), true
	}
	switch content := msg["content"].(type) {
	case nil:
		msg["content"] = c.prefix
	case string:
		msg["content"] = c.prefix + content
	case []any:
		if len(content) > 0 {
			if part, ok := content[0].(map[string]any); ok && part["type"] == "text" {
				text, _ := part["text"].(string)
				part["text"] = c.prefix + text
				return msgs, true
			}
		}
		msg["content"] = append([]any{map[string]any{"type": "text", "text": c.prefix}}, content...)
	default:
		return msgs, false
	}
	return msgs, true
}

func emptyContent(v any) bool {
	switch c := v.(type) {
	case nil:
		return true
	case string:
		return strings.TrimSpace(c) == ""
	case []any:
		return len(c) == 0
	}
	return false
}

func prefixPrompt(doc map[string]any, prefix string) bool {
	switch p := doc["prompt"].(type) {
	case string:
		doc["prompt"] = prefix + p
	case []any:
		if len(p) == 0 {
			return false
		}
		s, ok := p[0].(string)
		if !ok {
			return false
		}
		p[0] = prefix + s
	default:
		return false
	}
	return true
}
