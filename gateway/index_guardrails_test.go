package gateway

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/domain"
)

// The index resolves guardrails by id or slug within an organisation, follows renames,
// versions and deletions, and gives a key's route the guardrails its workspace attaches,
// resolved now: deleted ones, and another workspace's, resolve to nothing.
func TestIndexResolvesGuardrails(t *testing.T) {
	x := NewIndex()
	put := func(id, ws, slug, status string, version uint64) {
		x.Put(&domain.Guardrail{ID: id, OrganisationID: "org", WorkspaceID: ws, Slug: slug, Status: status,
			Versions: []domain.GuardrailVersion{{ID: id + "-v" + string(rune('0'+version))}}}, version)
	}
	put("g-org", "", "pii", domain.StatusActive, 1)
	put("g-ws", "ws", "tone", domain.StatusActive, 1)
	put("g-other", "ws2", "theirs", domain.StatusActive, 1)

	for _, ref := range []string{"g-org", "pii"} {
		g, ok := x.Guardrail("org", ref)
		require.True(t, ok, ref)
		assert.Equal(t, "g-org", g.Value.ID)
		assert.EqualValues(t, 1, g.Version)
	}
	_, ok := x.Guardrail("org-2", "pii")
	assert.False(t, ok, "another organisation's slug")
	_, ok = x.Guardrail("org-2", "g-org")
	assert.False(t, ok, "another organisation's id")

	ws := domain.Workspace{ID: "ws", OrganisationID: "org", Status: domain.StatusActive,
		Defaults: map[string]any{"input_guardrails": []any{"pii", "g-ws", "theirs", "nope"}, "output_guardrails": []any{"tone"}}}
	x.Put(&ws, 1)
	x.Put(&domain.APIKey{ID: "k", OrganisationID: "org", WorkspaceID: "ws", Type: domain.KeyWorkspaceService,
		Status: domain.KeyActive, Hash: "h"}, 1)
	r, ok := x.Route("h")
	require.True(t, ok)
	require.Len(t, r.InputGuardrails, 4)
	refs := func(as []AttachedGuardrail) (out []string) {
		for _, a := range as {
			id := "-"
			if a.Guardrail != nil {
				id = a.Guardrail.Value.ID
			}
			out = append(out, a.Ref+"="+id)
		}
		return out
	}
	assert.Equal(t, []string{"pii=g-org", "g-ws=g-ws", "theirs=-", "nope=-"}, refs(r.InputGuardrails),
		"another workspace's guardrail and a missing one resolve to nothing")
	assert.Equal(t, []string{"tone=g-ws"}, refs(r.OutputGuardrails))

	// A new version is what the next lookup resolves; a deletion frees the slug.
	put("g-org", "", "pii", domain.StatusActive, 2)
	put("g-ws", "ws", "tone", domain.StatusArchived, 2)
	r, _ = x.Route("h")
	assert.EqualValues(t, 2, r.InputGuardrails[0].Guardrail.Version)
	assert.Equal(t, []string{"tone=-"}, refs(r.OutputGuardrails), "a deleted guardrail applies no more")
	_, ok = x.Guardrail("org", "tone")
	assert.False(t, ok, "a deleted guardrail gave its slug up")
	g, ok := x.Guardrail("org", "g-ws")
	require.True(t, ok, "and is still found by its id")
	assert.False(t, g.Value.Exists())

	// A policy change of the workspace keeps its attachments; a workspace without any has none.
	x.Put(&domain.RateLimitPolicy{ID: "p", OrganisationID: "org", WorkspaceID: "ws", Status: domain.StatusActive}, 1)
	r, _ = x.Route("h")
	assert.Len(t, r.InputGuardrails, 4)
	ws.Defaults = nil
	x.Put(&ws, 2)
	r, _ = x.Route("h")
	assert.Nil(t, r.InputGuardrails)
	assert.Nil(t, r.OutputGuardrails)
}
