package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"

	"go.opentelemetry.io/otel/trace"

	"github.com/causeway/causeway/analytics"
	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/gateway/openai"
	"github.com/causeway/causeway/gateway/providers"
	"github.com/causeway/causeway/guardrails"
)

// Guardrails are a step of the pipeline at two hooks. Before the request (after budgets,
// before the cache): the guardrails the workspace attaches and those of the config's root
// run on the request, and those of a nested target when that target is first tried (a deny
// there moves a fallback on, as an unreachable target does). After the request: the
// workspace's, the root's and those of every node on the path to the target that served run
// on the answer, a stream's as it passes, in windows that overlap. A failing guardrail with
// actions.deny refuses with 446 naming it and its check; a rewriting check (a prefix, PII
// redaction, inlined images) changes what goes on. Results are answered as hook_results and
// stored in the log row's provenance. Async guardrails run after the answer, off the
// request's path, and go to the server's log.

// GuardrailDirectory finds a guardrail by id or slug (Index).
type GuardrailDirectory interface {
	Guardrail(orgID, ref string) (Versioned[domain.Guardrail], bool)
}

// Guardrails runs guardrails: it builds each stored version's checks once (Registry) and
// keeps them while the version lives.
type Guardrails struct {
	Registry  *guardrails.Registry
	Deps      guardrails.Deps
	Directory GuardrailDirectory
	Log       *slog.Logger

	mu    sync.Mutex
	built map[string]builtGuardrail // by guardrail id and version id
}

type builtGuardrail struct {
	g   guardrails.Guardrail
	err error
}

// maxBuiltGuardrails bounds the versions kept built; past it the cache starts again.
const maxBuiltGuardrails = 4096

// StatusGuardrailDenied is the status of a request or an answer a guardrail denied (the
// reference gateway's 446).
const StatusGuardrailDenied = 446

// build is a stored guardrail's current version, its checks built. A check that no longer
// builds (a parameter the engine now refuses, an egress rule that changed) fails the guardrail
// closed: it is refused as a denied request is.
func (g *Guardrails) build(v Versioned[domain.Guardrail]) (guardrails.Guardrail, error) {
	gr := &v.Value
	latest := gr.Latest()
	key := gr.ID + "@" + latest.ID
	g.mu.Lock()
	if b, ok := g.built[key]; ok {
		g.mu.Unlock()
		return b.g, b.err
	}
	g.mu.Unlock()
	a := latest.Actions
	out := guardrails.Guardrail{ID: gr.ID, Slug: gr.Slug, Version: v.Version, Actions: guardrails.Actions{
		Deny: a.Deny, Async: a.Async,
		OnSuccess: guardrails.OnOutcome{Feedback: &guardrails.Feedback{Value: a.OnSuccess.Feedback.Value,
			Weight: a.OnSuccess.Feedback.Weight, Metadata: a.OnSuccess.Feedback.Metadata}},
		OnFail: guardrails.OnOutcome{Feedback: &guardrails.Feedback{Value: a.OnFail.Feedback.Value,
			Weight: a.OnFail.Feedback.Weight, Metadata: a.OnFail.Feedback.Metadata}},
	}}
	var err error
	for i, c := range latest.Checks {
		if !c.IsEnabled {
			continue
		}
		conf, cerr := g.Registry.Configure(c.ID, c.Name, c.Parameters, g.Deps)
		if cerr != nil {
			err = fmt.Errorf("the guardrail %s's check %d (%s) cannot be built: %w", gr.Slug, i, c.ID, cerr)
			break
		}
		out.Checks = append(out.Checks, conf)
	}
	g.mu.Lock()
	if g.built == nil || len(g.built) >= maxBuiltGuardrails {
		g.built = map[string]builtGuardrail{}
	}
	g.built[key] = builtGuardrail{out, err}
	g.mu.Unlock()
	return out, err
}

// guardrailSet is what one request runs: the guardrails of each hook, by where they apply.
type guardrailSet struct {
	before []guardrails.Guardrail // the workspace's and the config root's
	after  []guardrails.Guardrail
	// nodes are the refs of the config's nested nodes, by plan path ("0.1"), for the leaves
	// tried below them and the answer of the one that served.
	nodes map[string]nodeGuardrails
	// leafProviders are the provider types of the leaves below guarded nodes, by path.
	leafProviders map[string]string
	// names and versions of the guardrails built for the request, by id.
	names    map[string]string
	versions map[string]uint64
}

type nodeGuardrails struct{ before, after []string }

// guardrailRefs walks a config's tree: the root's refs, and each nested node's by its plan
// path (the root is "0", its targets "0.0", "0.1"...).
func guardrailRefs(t *domain.Target, path string, out map[string]nodeGuardrails) {
	if b, a := t.BeforeRequestGuardrails(), t.AfterRequestGuardrails(); len(b)+len(a) > 0 {
		out[path] = nodeGuardrails{before: b, after: a}
	}
	for i := range t.Targets {
		guardrailRefs(&t.Targets[i], path+"."+strconv.Itoa(i), out)
	}
}

// resolveGuardrails finds the request's guardrails: the workspace's (attached guardrails
// that no longer resolve are skipped, as the index reports them) and the config's (a ref that
// does not resolve, or names a guardrail the workspace may not use, is refused: a config's
// guardrail never fails open).
func (s *Service) resolveGuardrails(x *exchange, res *resolved) error {
	g := s.Guardrails
	if g == nil || len(x.route.InputGuardrails)+len(x.route.OutputGuardrails)+len(res.guardrailNodes) == 0 {
		return nil // the common case: nothing to build, nothing allocated
	}
	set := &guardrailSet{nodes: res.guardrailNodes}
	x.guards = set
	for _, list := range []struct {
		attached []AttachedGuardrail
		dst      *[]guardrails.Guardrail
	}{{x.route.InputGuardrails, &set.before}, {x.route.OutputGuardrails, &set.after}} {
		for _, a := range list.attached {
			if a.Guardrail == nil {
				continue
			}
			built, err := g.build(*a.Guardrail)
			if err != nil {
				return guardrailBroken(a.Guardrail, err)
			}
			set.note(built)
			*list.dst = append(*list.dst, built)
		}
	}
	if root, ok := set.nodes["0"]; ok {
		before, err := s.lookupGuardrails(x, root.before, "input_guardrails")
		if err != nil {
			return err
		}
		after, err := s.lookupGuardrails(x, root.after, "output_guardrails")
		if err != nil {
			return err
		}
		set.before, set.after = append(set.before, before...), append(set.after, after...)
	}
	if len(set.before)+len(set.after)+len(set.nodes) == 0 {
		x.guards = nil
	}
	return nil
}

// lookupGuardrails builds the guardrails refs names, for the request's workspace.
func (s *Service) lookupGuardrails(x *exchange, refs []string, field string) ([]guardrails.Guardrail, error) {
	var out []guardrails.Guardrail
	for _, ref := range refs {
		v, ok := s.Guardrails.Directory.Guardrail(x.route.Key.OrganisationID, ref)
		if !ok || !v.Value.Exists() || !v.Value.UsableBy(x.route.Key.WorkspaceID) {
			return nil, domain.Invalid(HeaderConfig, "the config's %s names %q: no guardrail of this workspace or organisation", field, ref)
		}
		built, err := s.Guardrails.build(v)
		if err != nil {
			return nil, guardrailBroken(&v, err)
		}
		if x.guards != nil {
			x.guards.note(built)
		}
		out = append(out, built)
	}
	return out, nil
}

func guardrailBroken(v *Versioned[domain.Guardrail], err error) error {
	by := analytics.Decider{Kind: "guardrail", ID: v.Value.ID, Version: v.Version}
	return &RefusalError{By: by, Err: &domain.Error{Code: domain.CodeGuardrailDenied, Detail: "guardrail_unavailable",
		Message: err.Error() + " (" + by.String() + ")"}}
}

// guardInput is what the checks see of the request.
func (x *exchange) guardInput(call providers.Call, provider string) guardrails.Input {
	return guardrails.Input{Endpoint: x.in.Endpoint, Provider: provider, Model: x.model, Metadata: x.metadata,
		Headers: x.in.Header, Request: call.Body, Final: true}
}

// beforeHook runs the request's before-request guardrails; a rewrite replaces the call's
// body (and what was read from it).
func (s *Service) beforeHook(ctx context.Context, x *exchange, call *providers.Call, provider string) error {
	if x.guards == nil || len(x.guards.before) == 0 {
		return nil
	}
	in := x.guardInput(*call, provider)
	in.Text = guardrails.ExtractText(guardrails.BeforeRequest, call.Body)
	hctx, span := s.guardSpan(ctx, x, guardrails.BeforeRequest, "")
	res := guardrails.Run(hctx, guardrails.BeforeRequest, x.guards.before, in)
	endGuardSpan(span, res)
	x.hooks = append(x.hooks, res)
	s.runAsync(x, guardrails.BeforeRequest, x.guards.before, in)
	if res.Denied {
		return x.denied(res, "request")
	}
	if res.Transformed != nil {
		return reparse(call, res.Transformed)
	}
	return nil
}

// planProvider is the provider type the plan tries first: what the request-side checks that
// depend on the provider (inline images) judge by.
func planProvider(p *Plan) string {
	if t := firstLeaf(p); t != nil {
		return t.Provider
	}
	return ""
}

// reparse reads a body a guardrail rewrote into the call.
func reparse(call *providers.Call, body []byte) error {
	call.Body = body
	var err error
	switch call.Endpoint {
	case providers.EndpointChat:
		call.Chat, err = openai.ParseChat(body)
	case providers.EndpointCompletion:
		call.Completion, err = openai.ParseCompletion(body)
	case providers.EndpointEmbed:
		call.Embedding, err = openai.ParseEmbedding(body)
	case providers.EndpointRerank:
		call.Rerank, err = openai.ParseRerank(body)
	}
	if err != nil {
		return domain.Errorf(domain.CodeInternal, "a guardrail rewrote the request into one that is not valid: %v", err)
	}
	return nil
}

// nestedBefore is the admission of a leaf by the before-request guardrails of the nested
// nodes on its path: they judge the request (a rewrite there is not applied: the root's
// guardrails rewrite). A deny refuses the leaf, so a fallback moves on.
func (s *Service) nestedBefore(ctx context.Context, x *exchange, call providers.Call, leafPath string) error {
	refs := x.guards.path(leafPath, func(n nodeGuardrails) []string { return n.before })
	if len(refs) == 0 {
		return nil
	}
	gs, err := s.lookupGuardrails(x, refs, "input_guardrails")
	if err != nil {
		return err
	}
	in := x.guardInput(call, x.leafProvider(leafPath))
	in.Text = guardrails.ExtractText(guardrails.BeforeRequest, call.Body)
	hctx, span := s.guardSpan(ctx, x, guardrails.BeforeRequest, leafPath)
	res := guardrails.Run(hctx, guardrails.BeforeRequest, gs, in)
	endGuardSpan(span, res)
	x.hooks = append(x.hooks, res)
	s.runAsync(x, guardrails.BeforeRequest, gs, in)
	if res.Denied {
		return x.denied(res, "request")
	}
	return nil
}

// leafProvider is the provider type of the leaf at path, when the plan was walked for it.
func (x *exchange) leafProvider(path string) string {
	if x.guards != nil {
		return x.guards.leafProviders[path]
	}
	return ""
}

// path gathers the refs of the nested nodes from the root (excluded) down to leaf.
func (set *guardrailSet) path(leaf string, pick func(nodeGuardrails) []string) []string {
	if set == nil {
		return nil
	}
	var refs []string
	parts := strings.Split(leaf, ".")
	for i := 2; i <= len(parts); i++ {
		if n, ok := set.nodes[strings.Join(parts[:i], ".")]; ok {
			refs = append(refs, pick(n)...)
		}
	}
	return refs
}

// afterGuardrails are the guardrails that judge the answer of the leaf that served.
func (s *Service) afterGuardrails(x *exchange) ([]guardrails.Guardrail, error) {
	if x.guards == nil {
		return nil, nil
	}
	gs := x.guards.after
	if refs := x.guards.path(x.served, func(n nodeGuardrails) []string { return n.after }); len(refs) > 0 {
		nested, err := s.lookupGuardrails(x, refs, "output_guardrails")
		if err != nil {
			return nil, err
		}
		gs = append(append([]guardrails.Guardrail(nil), gs...), nested...)
	}
	return gs, nil
}

// afterHook runs the after-request guardrails on a whole answer, and answers the body to send
// (rewritten or not).
func (s *Service) afterHook(ctx context.Context, x *exchange, call providers.Call, provider string, answer []byte) ([]byte, error) {
	gs, err := s.afterGuardrails(x)
	if err != nil || len(gs) == 0 {
		return answer, err
	}
	in := x.guardInput(call, provider)
	in.Response = answer
	in.Text = guardrails.ExtractText(guardrails.AfterRequest, answer)
	hctx, span := s.guardSpan(ctx, x, guardrails.AfterRequest, x.served)
	res := guardrails.Run(hctx, guardrails.AfterRequest, gs, in)
	endGuardSpan(span, res)
	x.hooks = append(x.hooks, res)
	s.runAsync(x, guardrails.AfterRequest, gs, in)
	if res.Denied {
		return nil, x.denied(res, "answer")
	}
	if res.Transformed != nil {
		return res.Transformed, nil
	}
	return answer, nil
}

// streamGuard scans a streamed answer's text as it passes.
type streamGuard struct {
	scanner *guardrails.StreamScanner
	span    trace.Span // the hook's, from the stream's start to its verdict; nil: not traced
}

// startStreamGuard readies the after-request guardrails of a stream, or nil when none apply.
func (s *Service) startStreamGuard(ctx context.Context, x *exchange, call providers.Call, provider string) (*streamGuard, error) {
	gs, err := s.afterGuardrails(x)
	if err != nil || len(gs) == 0 {
		return nil, err
	}
	in := x.guardInput(call, provider)
	in.Stream = true
	_, span := s.guardSpan(ctx, x, guardrails.AfterRequest, x.served)
	return &streamGuard{scanner: guardrails.NewStreamScanner(gs, in, guardrails.StreamOptions{}), span: span}, nil
}

// verdict ends the hook's span with its results.
func (g *streamGuard) verdict(res guardrails.HookResult) {
	endGuardSpan(g.span, res)
	g.span = nil
}

// close ends the hook's span of a stream that ended before a verdict (a client that left, a
// provider that failed).
func (g *streamGuard) close() {
	if g.span != nil {
		g.span.End()
		g.span = nil
	}
}

// chunk judges a chunk's text before it is sent: a deny stops the stream.
func (g *streamGuard) chunk(ctx context.Context, x *exchange, data []byte) error {
	text := chunkText(data)
	if text == "" {
		return nil
	}
	if res, stop := g.scanner.Write(ctx, text); stop {
		g.verdict(res)
		x.hooks = append(x.hooks, res)
		return x.denied(res, "answer")
	}
	return nil
}

// finish runs the checks that need the whole answer, before [DONE].
func (g *streamGuard) finish(ctx context.Context, x *exchange) error {
	res := g.scanner.Finish(ctx)
	g.verdict(res)
	x.hooks = append(x.hooks, res)
	if res.Denied {
		return x.denied(res, "answer")
	}
	return nil
}

// chunkText is the text a chat or completion chunk carries.
func chunkText(data []byte) string {
	var c struct {
		Choices []struct {
			Delta struct {
				Content string `json:"content"`
			} `json:"delta"`
			Text string `json:"text"`
		} `json:"choices"`
	}
	if json.Unmarshal(data, &c) != nil {
		return ""
	}
	var b strings.Builder
	for _, ch := range c.Choices {
		b.WriteString(ch.Delta.Content)
		b.WriteString(ch.Text)
	}
	return b.String()
}

// GuardrailDeniedError is a request or an answer a guardrail denied, with the hook results
// to answer.
type GuardrailDeniedError struct {
	RefusalError
	HookResults json.RawMessage
}

// denied is the refusal a denying hook result makes, naming the guardrail and its check.
func (x *exchange) denied(res guardrails.HookResult, what string) error {
	by := analytics.Decider{Kind: "guardrail"}
	check := ""
	if d := res.DeniedBy; d != nil {
		by.ID, check = d.Guardrail, d.Check
		for _, g := range res.Guardrails {
			if g.ID == d.Guardrail {
				for _, c := range g.Checks {
					if c.ID == d.Check && c.Explanation != "" {
						check += ": " + c.Explanation
						break
					}
				}
			}
		}
	}
	if x.guards != nil {
		by.Version = x.guards.version(by.ID)
	}
	name := by.ID
	if x.guards != nil {
		if n, ok := x.guards.names[by.ID]; ok {
			name = n
		}
	}
	msg := fmt.Sprintf("the guardrail %s denied the %s: its check %s failed (%s)", name, what, check, by.String())
	return &GuardrailDeniedError{RefusalError: RefusalError{By: by,
		Err: &domain.Error{Code: domain.CodeGuardrailDenied, Detail: "guardrail_denied", Message: msg}},
		HookResults: x.hookResults()}
}

func (set *guardrailSet) version(id string) uint64 { return set.versions[id] }

// note remembers a guardrail's slug and version, for the refusals that name it.
func (set *guardrailSet) note(g guardrails.Guardrail) {
	if set.names == nil {
		set.names, set.versions = map[string]string{}, map[string]uint64{}
	}
	set.names[g.ID], set.versions[g.ID] = g.Slug, g.Version
}

// hookResults is the reference's hook_results object of what ran so far, or nil. It is
// encoded once for what ran (the answer and the log row share it) and again only when a hook
// ran since.
func (x *exchange) hookResults() json.RawMessage {
	if len(x.hooks) == 0 {
		return nil
	}
	if x.hooksJSON == nil || x.hooksEncoded != len(x.hooks) {
		x.hooksJSON, _ = json.Marshal(guardrails.NewHookResults(x.hooks...))
		x.hooksEncoded = len(x.hooks)
	}
	return x.hooksJSON
}

// runAsync runs a hook's async guardrails after the request, off its path; their verdicts go
// to the server's log (the request's row is written before they end).
func (s *Service) runAsync(x *exchange, hook guardrails.Hook, gs []guardrails.Guardrail, in guardrails.Input) {
	async := false
	for _, g := range gs {
		async = async || g.Actions.Async
	}
	if !async {
		return
	}
	id := x.rec.ID
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), guardrails.MaxCheckTimeout)
		defer cancel()
		res := guardrails.RunAsync(ctx, hook, gs, in)
		if s.Guardrails.Log != nil {
			raw, _ := json.Marshal(res.Guardrails)
			s.Guardrails.Log.Info("async guardrails", "request_id", id, "hook", string(hook), "results", json.RawMessage(raw))
		}
	}()
}

// withHookResults adds hook_results to a JSON answer, as the reference does.
func withHookResults(body []byte, hooks json.RawMessage) []byte {
	if len(hooks) == 0 {
		return body
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(body, &fields) != nil || fields == nil {
		return body
	}
	fields["hook_results"] = hooks
	out, err := json.Marshal(fields)
	if err != nil {
		return body
	}
	return out
}

// guardLeaves makes the before-request guardrails of nested nodes part of each leaf's
// admission below them (Plan.Admit), so they run when that leaf is first tried.
func (s *Service) guardLeaves(ctx context.Context, x *exchange, p *Plan, call providers.Call, path string) {
	if x.guards == nil || len(x.guards.nodes) == 0 {
		return
	}
	if p.Target != nil {
		if len(x.guards.path(path, func(n nodeGuardrails) []string { return n.before })) == 0 {
			return
		}
		if x.guards.leafProviders == nil {
			x.guards.leafProviders = map[string]string{}
		}
		x.guards.leafProviders[path] = p.Target.Provider
		admit := p.Admit
		p.Admit = func(leafCtx context.Context, leaf string) error {
			// The request's context, not the leaf's (its deadline is the provider call's), with
			// the leaf's span, which the hook's span goes beneath.
			hookCtx := ctx
			if x.span != nil {
				hookCtx = trace.ContextWithSpan(ctx, trace.SpanFromContext(leafCtx))
			}
			if err := s.nestedBefore(hookCtx, x, call, leaf); err != nil {
				return err
			}
			if admit != nil {
				return admit(leafCtx, leaf)
			}
			return nil
		}
		return
	}
	for i := range p.Targets {
		s.guardLeaves(ctx, x, &p.Targets[i], call, path+"."+strconv.Itoa(i))
	}
}
