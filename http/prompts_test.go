package httpapi

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/domain"
)

var promptScopes = []string{"prompts.create", "prompts.read", "prompts.list", "prompts.update", "prompts.delete", "prompts.render"}

// ok requires a 2xx answer.
func ok(t *testing.T, r response) response {
	t.Helper()
	require.Less(t, r.Status, 300, string(r.Raw))
	require.GreaterOrEqual(t, r.Status, 200, string(r.Raw))
	return r
}

// refusedWith requires an error answer of status naming param.
func refusedWith(t *testing.T, r response, status int, param string) {
	t.Helper()
	require.Equal(t, status, r.Status, string(r.Raw))
	_, _, _, got := errorOf(t, r)
	assert.Equal(t, param, got, string(r.Raw))
}

// newPromptBody is a createPrompt body in the reference's shape.
func newPromptBody(collection string, extra map[string]any) map[string]any {
	b := map[string]any{"name": "Support reply", "collection_id": collection,
		"string":     `[{"role":"system","content":"You are {{persona}}."},{"role":"user","content":"{{question}}"}]`,
		"parameters": map[string]any{"temperature": 0.2, "max_tokens": 100}, "model": "gpt-4o-mini", "virtual_key": "openai-prod",
		"version_description": "first", "template_metadata": map[string]any{"owner": "support"}}
	for k, v := range extra {
		b[k] = v
	}
	return b
}

// The reference's collection operations: create {id, slug} (a workspace key in its own
// workspace, an organisation key naming one, by id or slug), list with details, get with
// its children, rename, delete; and their refusals.
func TestPromptCollectionOperations(t *testing.T) {
	api := newTestAPI(t)
	ws := api.seedWorkspace("team-a", nil)
	other := api.seedWorkspace("team-b", nil)

	sales := ok(t, api.Admin(http.MethodPost, "/collections", map[string]any{"workspace_id": "team-a", "name": "Sales"}))
	assert.Equal(t, []string{"id", "slug"}, keys(sales.Body))
	assert.Equal(t, "sales", sales.Str("slug"))
	api.Advance(time.Minute)
	eu := ok(t, api.Admin(http.MethodPost, "/collections", map[string]any{"workspace_id": ws, "name": "Sales EU", "parent_collection_id": "sales"}))
	ok(t, api.Admin(http.MethodPost, "/collections", map[string]any{"workspace_id": other, "name": "Sales"}))

	for _, tc := range []struct {
		name   string
		body   map[string]any
		status int
		param  string
	}{
		{"no name", map[string]any{"workspace_id": ws}, 400, "name"},
		{"an organisation key names no workspace", map[string]any{"name": "X"}, 400, "workspace_id"},
		{"an unknown workspace", map[string]any{"name": "X", "workspace_id": "team-z"}, 404, "workspace_id"},
		{"an unknown parent", map[string]any{"name": "X", "workspace_id": ws, "parent_collection_id": "nope"}, 404, "parent_collection_id"},
		{"a parent of another workspace", map[string]any{"name": "X", "workspace_id": other, "parent_collection_id": eu.Str("id")}, 404, "parent_collection_id"},
		{"a slug taken in the workspace", map[string]any{"name": "X", "workspace_id": ws, "slug": "sales"}, 409, "slug"},
		{"an unknown field", map[string]any{"name": "X", "workspace_id": ws, "colour": "red"}, 400, "colour"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			refusedWith(t, api.Admin(http.MethodPost, "/collections", tc.body), tc.status, tc.param)
		})
	}

	list := ok(t, api.Admin(http.MethodGet, "/collections?workspace_id="+ws, nil))
	assert.EqualValues(t, 2, list.Body["total"])
	require.Len(t, list.Data(), 2)
	top := list.Data()[1]
	assert.Equal(t, "Sales", top["name"])
	assert.Nil(t, top["parent_collection_id"])
	assert.EqualValues(t, 1, obj(top, "collection_details")["child_collections_count"])
	assert.EqualValues(t, 0, obj(top, "collection_details")["prompts_count"])
	assert.Equal(t, sales.Str("id"), list.Data()[0]["parent_collection_id"])
	assert.EqualValues(t, 1, ok(t, api.Admin(http.MethodGet, "/collections?workspace_id="+ws+"&search=eu", nil)).Body["total"])
	refusedWith(t, api.Admin(http.MethodGet, "/collections/sales", nil), 400, "collectionId") // a slug in two workspaces

	got := ok(t, api.Admin(http.MethodGet, "/collections/sales?workspace_id="+ws, nil))
	assert.Equal(t, sales.Str("id"), got.Body["id"])
	children, _ := got.Body["child_collections"].([]any)
	require.Len(t, children, 1)
	assert.Equal(t, "Sales EU", children[0].(map[string]any)["name"])

	ok(t, api.Admin(http.MethodPost, "/prompts", newPromptBody(eu.Str("id"), nil)))
	refusedWith(t, api.Admin(http.MethodDelete, "/collections/"+sales.Str("id"), nil), 409, "")
	refusedWith(t, api.Admin(http.MethodDelete, "/collections/"+eu.Str("id"), nil), 409, "")
	assert.EqualValues(t, 1, obj(ok(t, api.Admin(http.MethodGet, "/collections/"+eu.Str("id"), nil)).Body, "collection_details")["prompts_count"])

	renamed := ok(t, api.Admin(http.MethodPut, "/collections/"+eu.Str("id"), map[string]any{"name": "Sales Europe"}))
	assert.Equal(t, map[string]any{}, renamed.Body)
	assert.Equal(t, "Sales Europe", ok(t, api.Admin(http.MethodGet, "/collections/"+eu.Str("id"), nil)).Body["name"])
	refusedWith(t, api.Admin(http.MethodPut, "/collections/"+eu.Str("id"), map[string]any{}), 400, "name")
	refusedWith(t, api.Admin(http.MethodPut, "/collections/nope?workspace_id="+ws, map[string]any{"name": "x"}), 404, "collectionId")

	empty := ok(t, api.Admin(http.MethodPost, "/collections", map[string]any{"workspace_id": ws, "name": "Scratch"}))
	assert.Equal(t, map[string]any{}, ok(t, api.Admin(http.MethodDelete, "/collections/"+empty.Str("id"), nil)).Body)
	refusedWith(t, api.Admin(http.MethodGet, "/collections/"+empty.Str("id"), nil), 404, "collectionId")
	ok(t, api.Admin(http.MethodPost, "/collections", map[string]any{"workspace_id": ws, "name": "Scratch"})) // its slug is free again
}

// The reference's label operations, with organisation labels (is_universal) and workspace
// labels, the name rules, and names freed by a rename or a delete.
func TestPromptLabelOperations(t *testing.T) {
	api := newTestAPI(t)
	ws := api.seedWorkspace("team-a", nil)

	prod := ok(t, api.Admin(http.MethodPost, "/labels", map[string]any{"name": "production", "description": "live", "color_code": "#1f8a70"}))
	assert.Equal(t, []string{"id"}, keys(prod.Body))
	staging := ok(t, api.Admin(http.MethodPost, "/labels", map[string]any{"name": "staging", "workspace_id": ws, "organisation_id": api.OrgID}))

	got := ok(t, api.Admin(http.MethodGet, "/labels/"+prod.Str("id"), nil))
	assert.Equal(t, []string{"color_code", "created_at", "description", "id", "is_universal", "last_updated_at", "name", "object",
		"organisation_id", "status", "workspace_id"}, keys(got.Body), "Label")
	assert.Equal(t, true, got.Body["is_universal"])
	assert.Nil(t, got.Body["workspace_id"])
	assert.Equal(t, "#1f8a70", got.Body["color_code"])
	ws2 := ok(t, api.Admin(http.MethodGet, "/labels/"+staging.Str("id"), nil))
	assert.Equal(t, false, ws2.Body["is_universal"])
	assert.Equal(t, ws, ws2.Body["workspace_id"])

	for _, tc := range []struct {
		name   string
		body   map[string]any
		status int
		param  string
	}{
		{"latest names a version", map[string]any{"name": "latest"}, 400, "name"},
		{"default names a version", map[string]any{"name": "default"}, 400, "name"},
		{"a number names a version", map[string]any{"name": "12"}, 400, "name"},
		{"a space", map[string]any{"name": "two words"}, 400, "name"},
		{"an at sign", map[string]any{"name": "a@b"}, 400, "name"},
		{"no name", map[string]any{"description": "x"}, 400, "name"},
		{"a colour that is not one", map[string]any{"name": "blue", "color_code": "blue"}, 400, "color_code"},
		{"a name taken in the organisation", map[string]any{"name": "production", "workspace_id": ws}, 409, "name"},
		{"another organisation", map[string]any{"name": "x", "organisation_id": "0b7ae0c4-7d4f-4a40-a1cc-3c8f1fd0c8b1"}, 400, "organisation_id"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			refusedWith(t, api.Admin(http.MethodPost, "/labels", tc.body), tc.status, tc.param)
		})
	}

	all := ok(t, api.Admin(http.MethodGet, "/labels", nil))
	assert.EqualValues(t, 2, all.Body["total"])
	assert.EqualValues(t, 1, ok(t, api.Admin(http.MethodGet, "/labels?organisation_id="+api.OrgID, nil)).Body["total"], "the organisation's own")
	assert.EqualValues(t, 2, ok(t, api.Admin(http.MethodGet, "/labels?workspace_id="+ws, nil)).Body["total"], "what the workspace may use")
	assert.EqualValues(t, 1, ok(t, api.Admin(http.MethodGet, "/labels?search=STAG", nil)).Body["total"])

	assert.Equal(t, map[string]any{}, ok(t, api.Admin(http.MethodPut, "/labels/"+staging.Str("id"), map[string]any{"name": "stage", "color_code": "#abc"})).Body)
	assert.Equal(t, "stage", ok(t, api.Admin(http.MethodGet, "/labels/stage", nil)).Body["name"], "read by its name")
	refusedWith(t, api.Admin(http.MethodPut, "/labels/"+staging.Str("id"), map[string]any{"name": "production"}), 409, "name")
	refusedWith(t, api.Admin(http.MethodPut, "/labels/"+staging.Str("id"), map[string]any{}), 400, "")
	ok(t, api.Admin(http.MethodPost, "/labels", map[string]any{"name": "staging"})) // the old name is free

	assert.Equal(t, map[string]any{}, ok(t, api.Admin(http.MethodDelete, "/labels/"+prod.Str("id"), nil)).Body)
	assert.Equal(t, http.StatusNotFound, api.Admin(http.MethodGet, "/labels/"+prod.Str("id"), nil).Status)
	assert.Equal(t, http.StatusNotFound, api.Admin(http.MethodDelete, "/labels/"+prod.Str("id"), nil).Status)
	ok(t, api.Admin(http.MethodPost, "/labels", map[string]any{"name": "production"}))
}

// The reference's prompt operations: create, list, get (by id, slug, and version
// selectors), update (patch and strict, metadata only), versions, a version, makeDefault,
// labels that move, delete; history and as_of.
func TestPromptOperations(t *testing.T) {
	api := newTestAPI(t)
	ws := api.seedWorkspace("team-a", nil)
	col := ok(t, api.Admin(http.MethodPost, "/collections", map[string]any{"workspace_id": ws, "name": "Support"}))

	created := ok(t, api.Admin(http.MethodPost, "/prompts", newPromptBody("support", map[string]any{"workspace_id": "team-a", "slug": "support-reply"})))
	assert.Equal(t, []string{"id", "object", "slug", "version_id"}, keys(created.Body))
	assert.Equal(t, "prompt", created.Body["object"])
	id, v1 := created.Str("id"), created.Str("version_id")
	mark := asOfMark()

	for _, tc := range []struct {
		name   string
		body   map[string]any
		status int
		param  string
	}{
		{"no virtual key", newPromptBody(col.Str("id"), map[string]any{"virtual_key": nil}), 400, "virtual_key"},
		{"no parameters", newPromptBody(col.Str("id"), map[string]any{"parameters": nil}), 400, "parameters"},
		{"no collection", newPromptBody("", nil), 400, "collection_id"},
		{"an unknown collection", newPromptBody("nowhere", nil), 404, "collection_id"},
		{"a template that is not Mustache", newPromptBody(col.Str("id"), map[string]any{"string": "Hi {{#name}}"}), 400, "string"},
		{"a message of an unknown role", newPromptBody(col.Str("id"), map[string]any{"string": `[{"role":"robot","content":"x"}]`}), 400, "string[0].role"},
		{"a tool choice of no kind", newPromptBody(col.Str("id"), map[string]any{"tool_choice": "sometimes"}), 400, "tool_choice"},
		{"a virtual key that is no slug", newPromptBody(col.Str("id"), map[string]any{"virtual_key": "Open AI"}), 400, "virtual_key"},
		{"a slug taken", newPromptBody(col.Str("id"), map[string]any{"slug": "support-reply"}), 409, "slug"},
		{"a field of the wrong type", newPromptBody(col.Str("id"), map[string]any{"parameters": "hot"}), 400, "parameters"},
		{"the default collection needs a workspace", newPromptBody("default", nil), 400, "workspace_id"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := tc.body
			for k, v := range body {
				if v == nil {
					delete(body, k)
				}
			}
			refusedWith(t, api.Admin(http.MethodPost, "/prompts", body), tc.status, tc.param)
		})
	}

	for _, ref := range []string{id, "support-reply"} {
		got := ok(t, api.Admin(http.MethodGet, "/prompts/"+ref, nil))
		assert.Equal(t, []string{"collection_id", "created_at", "default_version", "functions", "id", "is_raw_template", "last_updated_at",
			"model", "name", "object", "parameters", "prompt_version", "prompt_version_description", "prompt_version_id",
			"prompt_version_label_id", "prompt_version_status", "slug", "status", "string", "template_metadata", "tool_choice",
			"tools", "virtual_key", "workspace_id"}, keys(got.Body), "Prompt")
		assert.Equal(t, id, got.Body["id"])
		assert.Equal(t, col.Str("id"), got.Body["collection_id"])
		assert.EqualValues(t, 1, got.Body["prompt_version"])
		assert.Equal(t, v1, got.Body["prompt_version_id"])
		assert.Equal(t, "gpt-4o-mini", got.Body["model"])
		assert.Equal(t, map[string]any{"temperature": 0.2, "max_tokens": float64(100)}, got.Body["parameters"])
		assert.Equal(t, map[string]any{"owner": "support"}, got.Body["template_metadata"])
		assert.Equal(t, `"0"`, got.Header.Get("ETag"))
	}

	// patch: only the model is sent; the rest is the latest version's.
	api.Advance(time.Minute)
	upd := ok(t, api.Admin(http.MethodPut, "/prompts/support-reply", map[string]any{"patch": true, "model": "gpt-4o"}))
	assert.Equal(t, []string{"id", "prompt_version_id", "slug"}, keys(upd.Body))
	v2 := upd.Str("prompt_version_id")
	assert.NotEqual(t, v1, v2)
	two := ok(t, api.Admin(http.MethodGet, "/prompts/support-reply@2", nil))
	assert.Equal(t, "gpt-4o", two.Body["model"])
	assert.Equal(t, "openai-prod", two.Body["virtual_key"], "filled from the latest version")
	assert.Contains(t, two.Body["string"], "You are {{persona}}.")
	assert.Equal(t, "first", two.Body["prompt_version_description"])
	assert.EqualValues(t, 1, ok(t, api.Admin(http.MethodGet, "/prompts/"+id, nil)).Body["prompt_version"],
		"a new version is not the default until makeDefault")
	assert.EqualValues(t, 2, ok(t, api.Admin(http.MethodGet, "/prompts/"+id+"@latest", nil)).Body["prompt_version"])

	// Without patch a new version needs what a create needs, and holds only what was sent.
	refusedWith(t, api.Admin(http.MethodPut, "/prompts/"+id, map[string]any{"model": "gpt-4o"}), 400, "string")
	refusedWith(t, api.Admin(http.MethodPut, "/prompts/"+id, map[string]any{"string": "Hi {{name}}", "virtual_key": "x"}), 400, "parameters")
	v3 := ok(t, api.Admin(http.MethodPut, "/prompts/"+id, map[string]any{"string": "Hi {{name}}", "parameters": map[string]any{},
		"virtual_key": "other-provider", "version_description": "plain"})).Str("prompt_version_id")
	three := ok(t, api.Admin(http.MethodGet, "/prompts/"+id+"/versions/3", nil))
	assert.Equal(t, v3, three.Body["prompt_version_id"])
	assert.Equal(t, "", three.Body["model"], "not inherited without patch")
	assert.Equal(t, "Hi {{name}}", three.Body["string"])

	// A rename or a move makes no version.
	other := ok(t, api.Admin(http.MethodPost, "/collections", map[string]any{"workspace_id": ws, "name": "Other"}))
	moved := ok(t, api.Admin(http.MethodPut, "/prompts/"+id, map[string]any{"name": "Support answer", "collection_id": "other"}))
	assert.Equal(t, v3, moved.Body["prompt_version_id"])
	now := ok(t, api.Admin(http.MethodGet, "/prompts/"+id, nil))
	assert.Equal(t, "Support answer", now.Body["name"])
	assert.Equal(t, other.Str("id"), now.Body["collection_id"])
	refusedWith(t, api.Admin(http.MethodPut, "/prompts/"+id, map[string]any{"string": "{{#x}}", "patch": true}), 400, "string")
	refusedWith(t, api.Admin(http.MethodPut, "/prompts/"+id, map[string]any{}), 400, "")
	refusedWith(t, api.Admin(http.MethodPut, "/prompts/"+id, map[string]any{"slug": "x"}), 400, "slug")
	refusedWith(t, api.Admin(http.MethodPut, "/prompts/nope", map[string]any{"name": "x"}), 404, "")

	versions := ok(t, api.Admin(http.MethodGet, "/prompts/"+id+"/versions", nil))
	var list []map[string]any
	require.NoError(t, jsonUnmarshal(versions.Raw, &list), "an array, as the reference has it")
	require.Len(t, list, 3)
	assert.Equal(t, v3, list[0]["id"], "newest first")
	assert.EqualValues(t, 3, list[0]["prompt_version"])
	assert.Equal(t, id, list[0]["prompt_id"])
	assert.Equal(t, "plain", list[0]["prompt_description"])
	assert.Equal(t, "Hi {{name}}", obj(list[0], "prompt_template")["string"])
	assert.Equal(t, true, list[2]["is_default"])

	// makeDefault.
	assert.Equal(t, map[string]any{}, ok(t, api.Admin(http.MethodPut, "/prompts/"+id+"/makeDefault", map[string]any{"version": 2})).Body)
	assert.EqualValues(t, 2, ok(t, api.Admin(http.MethodGet, "/prompts/"+id, nil)).Body["prompt_version"])
	refusedWith(t, api.Admin(http.MethodPut, "/prompts/"+id+"/makeDefault", map[string]any{"version": 9}), 404, "version")
	refusedWith(t, api.Admin(http.MethodPut, "/prompts/"+id+"/makeDefault", map[string]any{"version": 1.5}), 400, "version")
	refusedWith(t, api.Admin(http.MethodPut, "/prompts/"+id+"/makeDefault", map[string]any{}), 400, "version")

	// Labels point at versions and move.
	prod := ok(t, api.Admin(http.MethodPost, "/labels", map[string]any{"name": "production"})).Str("id")
	assert.Equal(t, map[string]any{}, ok(t, api.Admin(http.MethodPut, "/prompts/"+id+"/versions/"+v3, map[string]any{"label_id": prod})).Body)
	labelled := ok(t, api.Admin(http.MethodGet, "/prompts/"+id+"@production", nil))
	assert.EqualValues(t, 3, labelled.Body["prompt_version"])
	assert.Equal(t, prod, labelled.Body["prompt_version_label_id"])
	ok(t, api.Admin(http.MethodPut, "/prompts/"+id+"/versions/"+v1, map[string]any{"label_id": prod}))
	assert.EqualValues(t, 1, ok(t, api.Admin(http.MethodGet, "/prompts/"+id+"@production", nil)).Body["prompt_version"], "the label moved")
	assert.Nil(t, ok(t, api.Admin(http.MethodGet, "/prompts/"+id+"/versions/"+v3, nil)).Body["prompt_version_label_id"])
	refusedWith(t, api.Admin(http.MethodPut, "/prompts/"+id+"/versions/"+v1, map[string]any{"label_id": "0b7ae0c4-7d4f-4a40-a1cc-3c8f1fd0c8b1"}), 404, "label_id")
	refusedWith(t, api.Admin(http.MethodPut, "/prompts/"+id+"/versions/"+v1, map[string]any{"string": "x"}), 400, "string")
	refusedWith(t, api.Admin(http.MethodPut, "/prompts/"+id+"/versions/0b7ae0c4-7d4f-4a40-a1cc-3c8f1fd0c8b1", map[string]any{"label_id": prod}), 404, "versionId")
	refusedWith(t, api.Admin(http.MethodGet, "/prompts/"+id+"@staging", nil), 404, "promptId")
	ok(t, api.Admin(http.MethodPut, "/prompts/"+id+"/versions/"+v1, map[string]any{"label_id": nil}))
	refusedWith(t, api.Admin(http.MethodGet, "/prompts/"+id+"@production", nil), 404, "promptId")

	// Lists.
	ok(t, api.Admin(http.MethodPost, "/prompts", newPromptBody(col.Str("id"), map[string]any{"name": "Billing"})))
	all := ok(t, api.Admin(http.MethodGet, "/prompts", nil))
	assert.EqualValues(t, 2, all.Body["total"])
	assert.Equal(t, "prompt", all.Data()[0]["object"])
	assert.EqualValues(t, 1, ok(t, api.Admin(http.MethodGet, "/prompts?search=bill", nil)).Body["total"])
	assert.EqualValues(t, 1, ok(t, api.Admin(http.MethodGet, "/prompts?collection_id="+other.Str("id"), nil)).Body["total"])
	assert.EqualValues(t, 2, ok(t, api.Admin(http.MethodGet, "/prompts?workspace_id=team-a", nil)).Body["total"])

	// As of the mark: version 1 was the default, under the first name.
	past := ok(t, api.Admin(http.MethodGet, "/prompts/support-reply?"+asOfQuery(mark), nil))
	assert.EqualValues(t, 1, past.Body["prompt_version"])
	assert.Equal(t, "Support reply", past.Body["name"])
	pastList := ok(t, api.Admin(http.MethodGet, "/prompts?"+asOfQuery(mark), nil))
	assert.EqualValues(t, 1, pastList.Body["total"])
	refusedWith(t, api.Admin(http.MethodGet, "/prompts/"+id+"?as_of=yesterday", nil), 400, "as_of")

	// History: every event, with the state before and after.
	hist := ok(t, api.Admin(http.MethodGet, "/audit/resources/prompt/support-reply/history", nil))
	var actions []string
	for _, e := range hist.Data() {
		actions = append(actions, e["action"].(string))
	}
	assert.Equal(t, []string{"PromptCreated", "PromptUpdated", "PromptUpdated", "PromptUpdated", "PromptDefaultSet",
		"PromptVersionLabelled", "PromptVersionLabelled", "PromptVersionLabelled"}, actions)
	assert.Nil(t, hist.Data()[0]["before"])
	assert.EqualValues(t, 1, obj(hist.Data()[4], "before")["default_version"])
	assert.EqualValues(t, 2, obj(hist.Data()[4], "after")["default_version"])
	audit := ok(t, api.Admin(http.MethodGet, "/audit-logs?resource_type=prompt&resource_id="+id, nil))
	assert.EqualValues(t, 8, audit.Body["total"])

	// Delete: gone, slug free.
	assert.Equal(t, map[string]any{}, ok(t, api.Admin(http.MethodDelete, "/prompts/"+id, nil)).Body)
	assert.Equal(t, http.StatusNotFound, api.Admin(http.MethodGet, "/prompts/support-reply", nil).Status)
	assert.Equal(t, "archived", ok(t, api.Admin(http.MethodGet, "/prompts/"+id+"?status=archived", nil)).Body["status"])
	ok(t, api.Admin(http.MethodPost, "/prompts", newPromptBody(col.Str("id"), map[string]any{"slug": "support-reply"})))
}

// A retried create with the same Idempotency-Key answers the first prompt and writes nothing
// twice; the key used for another body is refused.
func TestPromptCreateIsIdempotent(t *testing.T) {
	api := newTestAPI(t)
	ws := api.seedWorkspace("team-a", nil)
	col := ok(t, api.Admin(http.MethodPost, "/collections", map[string]any{"workspace_id": ws, "name": "Support"})).Str("id")
	first := ok(t, api.Admin(http.MethodPost, "/prompts", newPromptBody(col, nil), IdempotencyHeader, "create-1"))
	again := ok(t, api.Admin(http.MethodPost, "/prompts", newPromptBody(col, nil), IdempotencyHeader, "create-1"))
	assert.Equal(t, first.Body, again.Body)
	assert.Equal(t, "true", again.Header.Get("Idempotent-Replayed"))
	assert.EqualValues(t, 1, ok(t, api.Admin(http.MethodGet, "/prompts", nil)).Body["total"])
	other := api.Admin(http.MethodPost, "/prompts", newPromptBody(col, map[string]any{"name": "Else"}), IdempotencyHeader, "create-1")
	assert.Equal(t, http.StatusUnprocessableEntity, other.Status, string(other.Raw))
}

// The reference's partial operations: create in the workspace's default collection, list (an
// array), get, update (a new version with new text), versions (an array), makeDefault,
// delete; labels on partial versions.
func TestPromptPartialOperations(t *testing.T) {
	api := newTestAPI(t)
	ws := api.seedWorkspace("team-a", nil)
	created := ok(t, api.Admin(http.MethodPost, "/prompts/partials", map[string]any{"workspace_id": ws, "name": "Tone",
		"string": "Answer in a {{tone}} tone.", "version_description": "first"}))
	assert.Equal(t, []string{"id", "slug", "version_id"}, keys(created.Body))
	assert.Equal(t, "tone", created.Str("slug"), "the name's slug, to be included as {{> tone}}")
	id := created.Str("id")

	for _, tc := range []struct {
		name   string
		body   map[string]any
		status int
		param  string
	}{
		{"no text", map[string]any{"workspace_id": ws, "name": "X"}, 400, "string"},
		{"no name", map[string]any{"workspace_id": ws, "string": "x"}, 400, "name"},
		{"not Mustache", map[string]any{"workspace_id": ws, "name": "X", "string": "{{/x}}"}, 400, "string"},
		{"no workspace", map[string]any{"name": "X", "string": "x"}, 400, "workspace_id"},
		{"a slug taken", map[string]any{"workspace_id": ws, "name": "X", "string": "x", "slug": "tone"}, 409, "slug"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			refusedWith(t, api.Admin(http.MethodPost, "/prompts/partials", tc.body), tc.status, tc.param)
		})
	}

	got := ok(t, api.Admin(http.MethodGet, "/prompts/partials/tone", nil))
	assert.Equal(t, []string{"collection_id", "created_at", "default_version", "id", "last_updated_at", "name", "object",
		"prompt_partial_version_id", "slug", "status", "string", "version", "version_description", "workspace_id"}, keys(got.Body), "PromptPartial")
	defaultCol := got.Str("collection_id")
	assert.Equal(t, "default", ok(t, api.Admin(http.MethodGet, "/collections/"+defaultCol, nil)).Body["slug"], "the workspace's default collection")
	refusedWith(t, api.Admin(http.MethodDelete, "/collections/"+defaultCol, nil), 409, "")

	upd := ok(t, api.Admin(http.MethodPut, "/prompts/partials/"+id, map[string]any{"string": "Be {{tone}}.", "description": "shorter"}))
	assert.Equal(t, []string{"prompt_partial_version_id"}, keys(upd.Body))
	refusedWith(t, api.Admin(http.MethodPut, "/prompts/partials/"+id, map[string]any{"description": "x"}), 400, "description")
	refusedWith(t, api.Admin(http.MethodPut, "/prompts/partials/"+id, map[string]any{"status": "archived"}), 400, "status")
	ok(t, api.Admin(http.MethodPut, "/prompts/partials/"+id, map[string]any{"name": "Tone of voice", "status": "active"}))

	var versions []map[string]any
	require.NoError(t, jsonUnmarshal(ok(t, api.Admin(http.MethodGet, "/prompts/partials/"+id+"/versions", nil)).Raw, &versions))
	require.Len(t, versions, 2)
	assert.Equal(t, "2", versions[0]["version"], "a string, as the reference has it")
	assert.Equal(t, "shorter", versions[0]["description"])
	assert.Equal(t, upd.Str("prompt_partial_version_id"), versions[0]["prompt_partial_version_id"])
	assert.Equal(t, "Answer in a {{tone}} tone.", ok(t, api.Admin(http.MethodGet, "/prompts/partials/"+id, nil)).Body["string"], "still the default")

	ok(t, api.Admin(http.MethodPut, "/prompts/partials/"+id+"/makeDefault", map[string]any{"version": 2}))
	assert.Equal(t, "Be {{tone}}.", ok(t, api.Admin(http.MethodGet, "/prompts/partials/"+id, nil)).Body["string"])
	refusedWith(t, api.Admin(http.MethodPut, "/prompts/partials/"+id+"/makeDefault", map[string]any{"version": 3}), 404, "version")

	prod := ok(t, api.Admin(http.MethodPost, "/labels", map[string]any{"name": "production"})).Str("id")
	ok(t, api.Admin(http.MethodPut, "/prompts/partials/"+id+"/versions/1", map[string]any{"label_id": prod}))
	require.NoError(t, jsonUnmarshal(ok(t, api.Admin(http.MethodGet, "/prompts/partials/"+id+"/versions", nil)).Raw, &versions))
	assert.Equal(t, prod, versions[1]["label_id"])

	var list []map[string]any
	require.NoError(t, jsonUnmarshal(ok(t, api.Admin(http.MethodGet, "/prompts/partials?collection_id="+defaultCol, nil)).Raw, &list))
	require.Len(t, list, 1)
	assert.Equal(t, "partial", list[0]["object"])

	assert.Equal(t, map[string]any{}, ok(t, api.Admin(http.MethodDelete, "/prompts/partials/tone", nil)).Body)
	assert.Equal(t, http.StatusNotFound, api.Admin(http.MethodGet, "/prompts/partials/tone", nil).Status)
	require.NoError(t, jsonUnmarshal(ok(t, api.Admin(http.MethodGet, "/prompts/partials", nil)).Raw, &list))
	assert.Empty(t, list)
	hist := ok(t, api.Admin(http.MethodGet, "/audit/resources/prompt_partial/"+id+"/history", nil))
	assert.Len(t, hist.Data(), 6)
}

// The access table: the four prompt settings, set for the organisation and overridden per
// workspace, against members, managers (a workspace service key too), workspace admins and
// organisation admins, for seeing and for changing prompts, partials and collections.
func TestPromptAccessTable(t *testing.T) {
	api := newTestAPI(t)
	member := api.seedUser("member@example.com", domain.RoleMember)
	manager := api.seedUser("manager@example.com", domain.RoleMember)
	wsAdmin := api.seedUser("wsadmin@example.com", domain.RoleMember)
	ws := api.seedWorkspace("team-a", map[string]domain.Role{member: domain.RoleMember, manager: domain.RoleManager, wsAdmin: domain.RoleAdmin})
	key := func(path string, body map[string]any) string {
		t.Helper()
		body["scopes"] = promptScopes
		return ok(t, api.Admin(http.MethodPost, path, body)).Str("key")
	}
	keys := map[string]string{
		"member":        key("/api-keys/workspace/user", map[string]any{"name": "mem", "workspace_id": ws, "user_id": member}),
		"manager":       key("/api-keys/workspace/user", map[string]any{"name": "mgr", "workspace_id": ws, "user_id": manager}),
		"service key":   key("/api-keys/workspace/service", map[string]any{"name": "svc", "workspace_id": ws}),
		"ws admin":      key("/api-keys/workspace/user", map[string]any{"name": "wsa", "workspace_id": ws, "user_id": wsAdmin}),
		"org admin key": key("/api-keys/organisation/service", map[string]any{"name": "adm"}),
	}
	col := ok(t, api.Admin(http.MethodPost, "/collections", map[string]any{"workspace_id": ws, "name": "Support"})).Str("id")
	prompt := ok(t, api.Admin(http.MethodPost, "/prompts", newPromptBody(col, nil))).Str("id")
	ok(t, api.Admin(http.MethodPost, "/prompts/partials", map[string]any{"workspace_id": ws, "name": "Tone", "string": "Be kind."}))

	settings := func(path string, s map[string]any) {
		t.Helper()
		ok(t, api.Admin(http.MethodPut, path, map[string]any{"security_settings": s}))
	}
	// see reads a prompt, a partial, a collection and the lists; change renames the prompt
	// and makes a collection. Each answers its status.
	see := func(k string) []int {
		return []int{
			api.Do(http.MethodGet, "/prompts/"+prompt, k, nil).Status,
			api.Do(http.MethodGet, "/prompts/partials/tone", k, nil).Status,
			api.Do(http.MethodGet, "/collections/"+col, k, nil).Status,
			api.Do(http.MethodGet, "/prompts?workspace_id="+ws, k, nil).Status,
		}
	}
	n := 0
	change := func(k string) []int {
		n++
		return []int{
			api.Do(http.MethodPut, "/prompts/"+prompt, k, map[string]any{"name": "Renamed"}).Status,
			api.Do(http.MethodPost, "/collections", k, map[string]any{"workspace_id": ws, "name": "C" + strings.Repeat("x", n)}).Status,
			api.Do(http.MethodPut, "/prompts/partials/tone", k, map[string]any{"name": "Tone"}).Status,
		}
	}
	const Y, N = 200, 403
	all := func(s int, n int) []int {
		out := make([]int, n)
		for i := range out {
			out[i] = s
		}
		return out
	}
	for _, tc := range []struct {
		name      string
		org, wsov map[string]any // organisation settings, the workspace's overrides (nil: none)
		who       string
		see, edit int
	}{
		{"defaults: members see", nil, nil, "member", Y, N},
		{"defaults: managers see and change", nil, nil, "manager", Y, Y},
		{"defaults: a service key is a manager", nil, nil, "service key", Y, Y},
		{"members may write when the organisation says so", map[string]any{"membersWritePrompts": true}, nil, "member", Y, Y},
		{"members hidden by the organisation", map[string]any{"membersViewPrompts": false, "membersWritePrompts": false}, nil, "member", N, N},
		{"members hidden, managers still see", map[string]any{"membersViewPrompts": false}, nil, "manager", Y, Y},
		{"managers may not write", map[string]any{"managersWritePrompts": false}, nil, "manager", Y, N},
		{"managers hidden", map[string]any{"managersViewPrompts": false, "managersWritePrompts": false}, nil, "service key", N, N},
		{"the workspace lets its members write", map[string]any{"membersWritePrompts": false}, map[string]any{"membersWritePrompts": true}, "member", Y, Y},
		{"the workspace hides prompts from managers", nil, map[string]any{"managersViewPrompts": false, "managersWritePrompts": false}, "manager", N, N},
		{"the workspace gives managers back what the organisation took", map[string]any{"managersWritePrompts": false}, map[string]any{"managersWritePrompts": true}, "manager", Y, Y},
		{"workspace admins always", map[string]any{"membersViewPrompts": false, "managersViewPrompts": false, "membersWritePrompts": false, "managersWritePrompts": false}, nil, "ws admin", Y, Y},
		{"organisation admins always", map[string]any{"membersViewPrompts": false, "managersViewPrompts": false, "membersWritePrompts": false, "managersWritePrompts": false},
			map[string]any{"managersViewPrompts": false}, "org admin key", Y, Y},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := map[string]any{"membersViewPrompts": true, "membersWritePrompts": false, "managersViewPrompts": true, "managersWritePrompts": true}
			for k, v := range tc.org {
				base[k] = v
			}
			settings("/organisation/settings", base)
			override := map[string]any{"membersViewPrompts": nil, "membersWritePrompts": nil, "managersViewPrompts": nil, "managersWritePrompts": nil}
			for k, v := range tc.wsov {
				override[k] = v
			}
			settings("/workspaces/"+ws+"/settings", override)
			assert.Equal(t, all(tc.see, 4), see(keys[tc.who]), "see")
			assert.Equal(t, all(tc.edit, 3), change(keys[tc.who]), "change")
		})
	}

	// A refusal names the setting.
	settings("/organisation/settings", map[string]any{"membersViewPrompts": false})
	r := api.Do(http.MethodGet, "/prompts/"+prompt, keys["member"], nil)
	assert.Contains(t, r.ErrorMessage(), "membersViewPrompts")
	r = api.Do(http.MethodGet, "/prompts", keys["member"], nil)
	require.Equal(t, http.StatusOK, r.Status, "a list leaves out what is hidden")
	assert.Empty(t, r.Data())
	// Labels: a workspace's are changed by whom the settings let change its prompts; an
	// organisation's by organisation admins only.
	settings("/organisation/settings", map[string]any{"membersViewPrompts": true, "managersWritePrompts": false})
	assert.Equal(t, http.StatusForbidden, api.Do(http.MethodPost, "/labels", keys["manager"], map[string]any{"name": "mine"}).Status)
	settings("/organisation/settings", map[string]any{"managersWritePrompts": true})
	mine := ok(t, api.Do(http.MethodPost, "/labels", keys["manager"], map[string]any{"name": "mine"}))
	assert.Equal(t, ws, ok(t, api.Admin(http.MethodGet, "/labels/"+mine.Str("id"), nil)).Body["workspace_id"], "a workspace key's label is its workspace's")
	org := ok(t, api.Admin(http.MethodPost, "/labels", map[string]any{"name": "everywhere"})).Str("id")
	assert.Equal(t, http.StatusForbidden, api.Do(http.MethodPut, "/labels/"+org, keys["manager"], map[string]any{"name": "x"}).Status)
	assert.Equal(t, http.StatusOK, api.Do(http.MethodGet, "/labels/"+org, keys["member"], nil).Status, "everyone sees the organisation's labels")
}

func jsonUnmarshal(raw []byte, v any) error { return json.Unmarshal(raw, v) }

// Every one of the 26 operations refuses a request without a key (401), a key without its
// scope (403), and what it is sent wrong, or names nothing that exists (4xx naming the field).
func TestPromptOperationsRefusals(t *testing.T) {
	api := newTestAPI(t)
	ws := api.seedWorkspace("team-a", nil)
	col := ok(t, api.Admin(http.MethodPost, "/collections", map[string]any{"workspace_id": ws, "name": "Support"})).Str("id")
	prompt := ok(t, api.Admin(http.MethodPost, "/prompts", newPromptBody(col, nil)))
	id, v1 := prompt.Str("id"), prompt.Str("version_id")
	partial := ok(t, api.Admin(http.MethodPost, "/prompts/partials", map[string]any{"workspace_id": ws, "name": "Tone", "string": "x"})).Str("id")
	label := ok(t, api.Admin(http.MethodPost, "/labels", map[string]any{"name": "production"})).Str("id")
	unscoped := ok(t, api.Admin(http.MethodPost, "/api-keys/organisation/service", map[string]any{"name": "logs", "scopes": []string{"logs.view"}})).Str("key")
	const missing = "0b7ae0c4-7d4f-4a40-a1cc-3c8f1fd0c8b1"
	for _, tc := range []struct {
		op           string
		method, path string
		body         any
		status       int
		param        string
	}{
		{"createCollection", http.MethodPost, "/collections", map[string]any{"workspace_id": ws, "name": ""}, 400, "name"},
		{"listCollections", http.MethodGet, "/collections?workspace_id=team-z", nil, 404, ""},
		{"getCollection", http.MethodGet, "/collections/" + missing, nil, 404, "collectionId"},
		{"updateCollection", http.MethodPut, "/collections/" + col, map[string]any{"name": 7}, 400, "name"},
		{"deleteCollection", http.MethodDelete, "/collections/" + missing, nil, 404, "collectionId"},
		{"createLabel", http.MethodPost, "/labels", map[string]any{"name": "latest"}, 400, "name"},
		{"listLabels", http.MethodGet, "/labels?organisation_id=" + missing, nil, 400, "organisation_id"},
		{"getLabel", http.MethodGet, "/labels/" + missing, nil, 404, ""},
		{"updateLabel", http.MethodPut, "/labels/" + label, map[string]any{"color_code": "red"}, 400, "color_code"},
		{"deleteLabel", http.MethodDelete, "/labels/" + missing, nil, 404, ""},
		{"createPrompt", http.MethodPost, "/prompts", newPromptBody(col, map[string]any{"string": ""}), 400, "string"},
		{"listPrompts", http.MethodGet, "/prompts?status=deleted", nil, 400, "status"},
		{"getPrompt", http.MethodGet, "/prompts/" + missing, nil, 404, ""},
		{"updatePrompt", http.MethodPut, "/prompts/" + id, map[string]any{"patch": "yes"}, 400, "patch"},
		{"deletePrompt", http.MethodDelete, "/prompts/" + missing, nil, 404, ""},
		{"getPromptVersions", http.MethodGet, "/prompts/" + missing + "/versions", nil, 404, ""},
		{"getPromptByVersion", http.MethodGet, "/prompts/" + id + "/versions/" + missing, nil, 404, "versionId"},
		{"updatePromptVersion", http.MethodPut, "/prompts/" + id + "/versions/" + v1, map[string]any{"label_id": "production"}, 400, "label_id"},
		{"updatePromptDefault", http.MethodPut, "/prompts/" + id + "/makeDefault", map[string]any{"version": 0}, 400, "version"},
		{"createPromptPartial", http.MethodPost, "/prompts/partials", map[string]any{"workspace_id": ws, "name": "X", "string": "{{#a}}"}, 400, "string"},
		{"listPromptPartials", http.MethodGet, "/prompts/partials?collection_id=" + missing, nil, 404, "collection_id"},
		{"getPromptPartial", http.MethodGet, "/prompts/partials/" + missing, nil, 404, ""},
		{"updatePromptPartial", http.MethodPut, "/prompts/partials/" + partial, map[string]any{"string": "{{/a}}"}, 400, "string"},
		{"deletePromptPartial", http.MethodDelete, "/prompts/partials/" + missing, nil, 404, ""},
		{"getPromptPartialVersions", http.MethodGet, "/prompts/partials/" + missing + "/versions", nil, 404, ""},
		{"updatePromptPartialDefault", http.MethodPut, "/prompts/partials/" + partial + "/makeDefault", map[string]any{"version": 2}, 404, "version"},
	} {
		t.Run(tc.op, func(t *testing.T) {
			refusedWith(t, api.Admin(tc.method, tc.path, tc.body), tc.status, tc.param)
			assert.Equal(t, http.StatusUnauthorized, api.Do(tc.method, tc.path, "", tc.body).Status, "no key")
			assert.Equal(t, http.StatusForbidden, api.Do(tc.method, tc.path, unscoped, tc.body).Status, "no prompts scope")
		})
	}
}
