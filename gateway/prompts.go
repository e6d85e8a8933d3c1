package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"strings"

	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/gateway/openai"
	"github.com/causeway/causeway/templates"
)

// Prompts on the data plane. POST /prompts/{id}/completions is a chat completion whose body
// the gateway makes: Serve renders the prompt (renderPromptCall) right after the key is
// authenticated and the body read, and from there the request is any chat completion's,
// through the one pipeline (limits, budgets, guardrails, cache, configs, streaming, log).
// POST /prompts/{id}/render answers the body it would send, and calls no model.
//
// The body of both is the prompt's: the version's parameters, model, functions, tools and
// tool_choice, its messages rendered with the request's variables (package templates), then
// every other field of the request over them (stream, temperature, max_completion_tokens,
// model...); messages the request sends follow the prompt's. The version is the prompt's
// default, or the one the path names after '@' (a number, latest, default, or a label's
// name); a partial is included in its default version, or the one its tag names
// ({{> slug@label}}), or, for a prompt served by a label, its version of the same label when
// it has one. The model and provider: the request's own headers (x-gateway-config,
// x-gateway-provider, x-gateway-virtual-key) when it sends any, else the version's
// virtual_key as @slug. The log row names the prompt, its version and the label it was
// served by.

// PromptDirectory is what rendering a prompt reads: prompts, partials and labels of an
// organisation, and its security settings. Index implements it; a Directory that does not
// (a test's) serves no prompt.
type PromptDirectory interface {
	Prompt(orgID, ref string) (Versioned[domain.Prompt], bool)
	PromptPartial(orgID, ref string) (Versioned[domain.PromptPartial], bool)
	PromptLabelByName(orgID, name string) (domain.PromptLabel, bool)
	PromptSecurity(orgID string) domain.SecuritySettings
	// PromptTemplate and PreparedPartial are a version's template and a partial version's
	// text parsed ahead of the request; false: parse it now.
	PromptTemplate(versionID string) (*templates.Template, bool)
	PreparedPartial(versionID string) (*templates.Partial, bool)
}

var _ PromptDirectory = (*Index)(nil)

// RenderedPrompt is a prompt made into a chat completion's body, and what made it.
type RenderedPrompt struct {
	Body    map[string]any
	Prompt  domain.Prompt
	Version domain.PromptVersion
	// Label is the name of the label that chose the version ("": none did).
	Label string
	// VirtualKey is the version's managed provider, as @slug ("": none).
	VirtualKey string
}

func (s *Service) promptDirectory() (PromptDirectory, error) {
	dir, ok := s.Directory.(PromptDirectory)
	if !ok {
		return nil, domain.Errorf(domain.CodeUnsupported, "prompts are not served here")
	}
	return dir, nil
}

// renderPromptCall makes a prompt completion's chat body: the prompt the request names,
// rendered with its variables and overrides. It says in the log row which prompt, version and
// label served, and, when the request names no provider, routes it to the version's.
func (s *Service) renderPromptCall(x *exchange, body []byte) ([]byte, error) {
	dir, err := s.promptDirectory()
	if err != nil {
		return nil, err
	}
	rendered, err := renderPrompt(dir, x.actor, x.in.Prompt, body)
	if rendered.Prompt.ID != "" {
		x.rec.PromptID, x.rec.PromptVersion, x.rec.PromptLabel = rendered.Prompt.ID, rendered.Version.Number, rendered.Label
	}
	if err != nil {
		return nil, err
	}
	h := x.in.Header
	if rendered.VirtualKey != "" && header(h, HeaderConfig) == "" && header(h, HeaderProvider) == "" && header(h, HeaderVirtualKey) == "" {
		// The request's headers are the transport's: a copy carries the version's provider.
		h = h.Clone()
		h.Set(HeaderProvider, rendered.VirtualKey)
		x.in.Header = h
	}
	return json.Marshal(rendered.Body)
}

// RenderPrompt answers POST /prompts/{id}/render: the chat completion's body the prompt makes
// with the request's variables and overrides. The key needs the scope prompts.render, and the
// security settings of the prompt's workspace must let its role see prompts
// (membersViewPrompts, managersViewPrompts): the answer holds the template's text.
func (s *Service) RenderPrompt(_ context.Context, in Request) (RenderedPrompt, error) {
	route, _, err := s.keyRoute(in.Header)
	if err != nil {
		return RenderedPrompt{}, err
	}
	if route.ActorErr != nil {
		return RenderedPrompt{}, route.ActorErr
	}
	actor := route.Actor
	if !actor.HasScope("prompts.render") {
		return RenderedPrompt{}, domain.Errorf(domain.CodeForbidden, "this API key lacks the scope prompts.render")
	}
	dir, err := s.promptDirectory()
	if err != nil {
		return RenderedPrompt{}, err
	}
	body, err := openai.ReadBody(in.Body, in.ContentLength, s.MaxBody)
	if err != nil {
		return RenderedPrompt{}, err
	}
	rendered, err := renderPrompt(dir, actor, in.Prompt, body)
	if err != nil {
		return rendered, err
	}
	sec := dir.PromptSecurity(actor.OrganisationID)
	if ws := route.Workspace; ws != nil && ws.ID == rendered.Prompt.WorkspaceID {
		sec = ws.Security.Over(sec)
	}
	if err := domain.PromptAccess(actor, rendered.Prompt.WorkspaceID, sec, false); err != nil {
		return RenderedPrompt{}, err
	}
	return rendered, nil
}

// promptRequest is a prompt request's body: its variables, and the rest, which goes over the
// prompt's parameters.
type promptRequest struct {
	variables map[string]any
	messages  []any
	overrides map[string]any
}

// readPromptRequest reads a prompt request's body (empty: no variables, no overrides).
func readPromptRequest(body []byte) (promptRequest, error) {
	out := promptRequest{variables: map[string]any{}, overrides: map[string]any{}}
	if len(bytes.TrimSpace(body)) == 0 {
		return out, nil
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var top map[string]any
	if err := dec.Decode(&top); err != nil || top == nil {
		return out, domain.Invalid("", "the request body must be a JSON object of variables and parameters")
	}
	if err := dec.Decode(&struct{}{}); !errors.Is(err, io.EOF) {
		return out, domain.Invalid("", "the request body holds more than one JSON value")
	}
	for k, v := range top {
		switch k {
		case "variables":
			if v == nil {
				continue
			}
			vars, ok := v.(map[string]any)
			if !ok {
				return out, domain.Invalid("variables", "variables must be an object of the template's variables")
			}
			out.variables = vars
		case "messages":
			msgs, ok := v.([]any)
			if !ok {
				return out, domain.Invalid("messages", "messages must be an array of messages, sent after the prompt's")
			}
			out.messages = msgs
		case "hyperparameters":
			return out, domain.Invalid("hyperparameters", "send the parameters at the body's root, beside variables, not under hyperparameters")
		default:
			out.overrides[k] = v
		}
	}
	return out, nil
}

// renderPrompt finds the prompt ref names (with its version selector) that actor may use,
// and renders it with the request body.
func renderPrompt(dir PromptDirectory, actor domain.Actor, raw string, body []byte) (RenderedPrompt, error) {
	var out RenderedPrompt
	ref, sel, err := domain.ParseVersionRef("promptId", raw)
	if err != nil {
		return out, err
	}
	found, ok := dir.Prompt(actor.OrganisationID, ref)
	p := found.Value
	if !ok || !p.Exists() || !canUseWorkspace(actor, p.WorkspaceID) {
		return out, &domain.Error{Code: domain.CodeNotFound, Param: "promptId", Message: "prompt " + ref + " not found"}
	}
	out.Prompt = p
	labelID := ""
	if sel.Kind == domain.SelectLabel {
		if l, ok := dir.PromptLabelByName(p.OrganisationID, sel.Label); ok && l.UsableBy(p.WorkspaceID) {
			labelID, out.Label = l.ID, l.Name
		}
	}
	v, ok := p.Select(sel, labelID)
	if !ok {
		return out, &domain.Error{Code: domain.CodeNotFound, Param: "promptId", Message: "prompt " + ref + " has no version " + sel.String()}
	}
	out.Version = v
	req, err := readPromptRequest(body)
	if err != nil {
		return out, err
	}
	t := v.Template
	tmpl, parsed := dir.PromptTemplate(v.ID)
	if !parsed {
		if tmpl, err = templates.Parse("string", t.String); err != nil {
			return out, err
		}
	}
	msgs, err := tmpl.Render(req.variables, promptPartials{dir: dir, orgID: p.OrganisationID, workspaceID: p.WorkspaceID, labelID: labelID})
	if err != nil {
		return out, err
	}
	chat := make(map[string]any, len(t.Parameters)+len(req.overrides)+5)
	maps.Copy(chat, t.Parameters)
	if t.Model != "" {
		chat["model"] = t.Model
	}
	if len(t.Functions) > 0 {
		chat["functions"] = t.Functions
	}
	if len(t.Tools) > 0 {
		chat["tools"] = t.Tools
	}
	if t.ToolChoice != nil {
		chat["tool_choice"] = t.ToolChoice
	}
	maps.Copy(chat, req.overrides)
	chat["messages"] = append(msgs, req.messages...)
	out.Body = chat
	if vk := strings.TrimPrefix(t.VirtualKey, "@"); vk != "" {
		out.VirtualKey = "@" + vk
	}
	return out, nil
}

// promptPartials finds the partials a prompt includes: its workspace's, by slug (or id), in
// the version the tag names, or the prompt's label's, or their default.
type promptPartials struct {
	dir                PromptDirectory
	orgID, workspaceID string
	labelID            string // the label that chose the prompt's version ("": none)
}

func (pp promptPartials) Partial(name string) (*templates.Partial, error) {
	ref, sel, err := domain.ParseVersionRef("partials", name)
	if err != nil {
		return nil, domain.Invalid("partials", "{{> %s}} names no partial: include one by its slug, optionally with @version, @latest or @label", name)
	}
	found, ok := pp.dir.PromptPartial(pp.orgID, ref)
	p := found.Value
	if !ok || !p.Exists() || p.WorkspaceID != pp.workspaceID {
		return nil, domain.Invalid("partials", "partial %s (included as {{> %s}}) is not a partial of the prompt's workspace", ref, name)
	}
	labelID := ""
	switch {
	case sel.Kind == domain.SelectLabel:
		if l, ok := pp.dir.PromptLabelByName(pp.orgID, sel.Label); ok && l.UsableBy(p.WorkspaceID) {
			labelID = l.ID
		}
	case sel.Kind == "" && pp.labelID != "":
		if _, ok := p.Labels[pp.labelID]; ok {
			sel, labelID = domain.VersionSelector{Kind: domain.SelectLabel}, pp.labelID
		}
	}
	v, ok := p.Select(sel, labelID)
	if !ok {
		return nil, domain.Invalid("partials", "partial %s has no version %s", ref, sel.String())
	}
	if prepared, ok := pp.dir.PreparedPartial(v.ID); ok {
		return prepared, nil
	}
	return templates.PreparePartial("partial "+ref, v.String)
}
