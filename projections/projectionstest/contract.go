// Package projectionstest is the read-model contract suite: every read model is given the same
// scripted history and must give the same answers to every query as the in-memory reference
// (lists, filters, pagination, get), plus the answers the history implies.
package projectionstest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/eventstore"
	"github.com/causeway/causeway/eventstore/sqlite"
	"github.com/causeway/causeway/projections"
	"github.com/causeway/causeway/projections/memory"
)

// OpenFunc returns an empty read model to test.
type OpenFunc func(t *testing.T, reg *domain.Registry) projections.ReadModel

// Org is the organisation of the scripted history.
const Org = "org-1"

// Step is one append of the history.
type Step struct {
	Stream string
	Events []domain.Event
	Actor  string
}

// History is a scripted control-plane history of n workspaces, with keys, users, policies,
// invites, notifications and guardrails (every third workspace has one, and the organisation
// one), updates, rotations, archivals and deletions among them.
func History(n int, t0 time.Time) []Step {
	at := func(i int) time.Time { return t0.Add(time.Duration(i) * time.Minute) }
	weekly := "weekly"
	var steps []Step
	add := func(stream string, evs ...domain.Event) {
		steps = append(steps, Step{Stream: stream, Events: evs, Actor: "admin"})
	}
	add(domain.Stream(domain.OrganisationPrefix, Org), domain.OrganisationCreated{OrganisationID: Org, Name: "Org", OwnerUserID: "u-0", At: at(0)})
	guardrail := func(id, ws string, i int) domain.GuardrailCreated {
		return domain.GuardrailCreated{GuardrailID: id, OrganisationID: Org, WorkspaceID: ws, Slug: "slug-" + id, Name: "Guardrail " + id,
			VersionID: id + "-v1", Checks: []domain.GuardrailCheck{{ID: "default.regexMatch", IsEnabled: true,
				Parameters: map[string]any{"rule": fmt.Sprintf("x{%d}", i), "not": i%2 == 0, "limits": []any{1.5, float64(i)}}}},
			Actions: domain.DefaultGuardrailActions(), By: "admin", At: at(i)}
	}
	add(domain.Stream(domain.GuardrailPrefix, "gr-org"), guardrail("gr-org", "", 0))
	for i := 0; i < n; i++ {
		ws := fmt.Sprintf("ws-%02d", i)
		user := fmt.Sprintf("u-%02d", i)
		key := fmt.Sprintf("k-%02d", i)
		rl := fmt.Sprintf("rl-%02d", i)
		ul := fmt.Sprintf("ul-%02d", i)
		next := at(1000 + i)
		add(domain.Stream(domain.UserPrefix, user), domain.UserJoined{UserID: user, OrganisationID: Org,
			Email: fmt.Sprintf("user%02d@example.com", i), Role: []domain.Role{domain.RoleMember, domain.RoleAdmin}[i%2], At: at(i)})
		add(domain.Stream(domain.WorkspacePrefix, ws),
			domain.WorkspaceCreated{WorkspaceID: ws, OrganisationID: Org, Name: fmt.Sprintf("Team %02d", i), Slug: fmt.Sprintf("team-%02d", i),
				PeriodicReset: &weekly, NextUsageResetAt: &next, At: at(i)},
			domain.WorkspaceMemberAdded{WorkspaceID: ws, UserID: user, Role: []domain.Role{domain.RoleMember, domain.RoleManager, domain.RoleAdmin}[i%3], At: at(i)})
		add(domain.Stream(domain.APIKeyPrefix, key), domain.APIKeyCreated{KeyID: key, Name: fmt.Sprintf("key %02d", i),
			Type: []string{domain.KeyWorkspaceService, domain.KeyOrganisationService}[i%2], OrganisationID: Org,
			WorkspaceID: []string{ws, ""}[i%2], Scopes: []string{"logs.view"}, Hash: domain.HashKey(key), Masked: "cw-abc****" + key[len(key)-2:], At: at(i)})
		v := float64(10 * (i + 1))
		add(domain.Stream(domain.RateLimitPolicyPrefix, rl), domain.RateLimitPolicyCreated{PolicyID: rl, OrganisationID: Org, WorkspaceID: ws,
			Conditions: []domain.Condition{{Key: "workspace_id", Value: ws}}, GroupBy: []domain.GroupBy{{Key: "api_key"}},
			Type: "requests", Unit: []string{"rpm", "rph", "rpd", "rpw"}[i%4], Value: v, At: at(i)})
		add(domain.Stream(domain.UsageLimitPolicyPrefix, ul), domain.UsageLimitPolicyCreated{PolicyID: ul, OrganisationID: Org, WorkspaceID: ws,
			Conditions: []domain.Condition{{Key: "workspace_id", Value: ws}}, GroupBy: []domain.GroupBy{{Key: "api_key"}},
			Type: "cost", CreditLimit: 100, PeriodicReset: &weekly, NextUsageResetAt: &next, At: at(i)},
			domain.UsageLimitPolicyUsageRecorded{PolicyID: ul, ValueKey: key, Amount: 0.25 * float64(i+1), At: at(i)})
		add(domain.Stream(domain.InvitePrefix, fmt.Sprintf("inv-%02d", i)), domain.InviteCreated{InviteID: fmt.Sprintf("inv-%02d", i),
			OrganisationID: Org, Email: fmt.Sprintf("new%02d@example.com", i), Role: domain.RoleMember, TokenHash: "h",
			InvitedBy: "admin", ExpiresAt: at(i).Add(7 * 24 * time.Hour), At: at(i)})
		add(domain.Stream(domain.NotificationPrefix, fmt.Sprintf("n-%02d", i)), domain.NotificationRecorded{NotificationID: fmt.Sprintf("n-%02d", i),
			OrganisationID: Org, WorkspaceID: ws, Kind: []string{domain.NotifyInvite, domain.NotifyKeyRotated}[i%2],
			Recipients: []string{"a@example.com"}, Subject: "s", At: at(i)})
		if i%3 == 0 {
			add(domain.Stream(domain.GuardrailPrefix, fmt.Sprintf("gr-%02d", i)), guardrail(fmt.Sprintf("gr-%02d", i), ws, i))
			add(domain.Stream(domain.WebhookPrefix, fmt.Sprintf("wh-%02d", i)), domain.WebhookCreated{WebhookID: fmt.Sprintf("wh-%02d", i),
				OrganisationID: Org, WorkspaceID: ws, Name: "Hook " + ws, URL: "https://hooks.example.com/" + ws,
				Kinds: []string{domain.NotifyInvite}, SealedSecret: "v1:sealed", By: "admin", At: at(i)})
		}
		// Deliveries: made, one still to retry, nothing to deliver to, not yet planned.
		note := fmt.Sprintf("n-%02d", i)
		retry := at(i).Add(time.Minute)
		switch i % 4 {
		case 0:
			add(domain.Stream(domain.NotificationPrefix, note),
				domain.NotificationDeliveriesPlanned{NotificationID: note, Deliveries: []domain.DeliveryTarget{
					{Channel: domain.ChannelEmail, Target: "a@example.com"}, {Channel: domain.ChannelWebhook, Target: "wh-org"}}, At: at(i)},
				domain.NotificationDelivered{NotificationID: note, Channel: domain.ChannelEmail, Target: "a@example.com", Attempts: 1, At: at(i)},
				domain.NotificationDelivered{NotificationID: note, Channel: domain.ChannelWebhook, Target: "wh-org", Attempts: 1, At: at(i)})
		case 1:
			add(domain.Stream(domain.NotificationPrefix, note),
				domain.NotificationDeliveriesPlanned{NotificationID: note, Deliveries: []domain.DeliveryTarget{
					{Channel: domain.ChannelWebhook, Target: "wh-org"}}, At: at(i)},
				domain.NotificationDeliveryFailed{NotificationID: note, Channel: domain.ChannelWebhook, Target: "wh-org", Attempt: 1,
					Error: "HTTP 500", NextAttemptAt: &retry, At: at(i)})
		case 2:
			add(domain.Stream(domain.NotificationPrefix, note), domain.NotificationDeliveriesPlanned{NotificationID: note,
				Deliveries: []domain.DeliveryTarget{}, At: at(i)})
		}
	}
	add(domain.Stream(domain.WebhookPrefix, "wh-org"), domain.WebhookCreated{WebhookID: "wh-org", OrganisationID: Org,
		Name: "Everything", URL: "https://hooks.example.com/all", Kinds: []string{}, SealedSecret: "v1:sealed", By: "admin", At: at(0)})
	disabled := true
	add(domain.Stream(domain.WebhookPrefix, "wh-03"), domain.WebhookUpdated{WebhookID: "wh-03", Disabled: &disabled, By: "admin", At: at(95)})
	add(domain.Stream(domain.WebhookPrefix, "wh-06"), domain.WebhookDeleted{WebhookID: "wh-06", By: "admin", At: at(96)})
	// Guardrails change: a new version, a rename, a deletion.
	deny := domain.DefaultGuardrailActions()
	deny.Deny = true
	renamed := "Renamed"
	add(domain.Stream(domain.GuardrailPrefix, "gr-org"), domain.GuardrailUpdated{GuardrailID: "gr-org", Name: &renamed, At: at(90)})
	for i := 0; i < n; i += 3 {
		id := fmt.Sprintf("gr-%02d", i)
		switch i % 6 {
		case 0:
			add(domain.Stream(domain.GuardrailPrefix, id), domain.GuardrailUpdated{GuardrailID: id, VersionID: id + "-v2",
				Checks: []domain.GuardrailCheck{{ID: "default.contains", Parameters: map[string]any{"words": []any{"a"}}}}, Actions: &deny, By: "admin", At: at(90 + i)})
		case 3:
			add(domain.Stream(domain.GuardrailPrefix, id), domain.GuardrailArchived{GuardrailID: id, By: "admin", At: at(90 + i)})
		}
	}
	// Prompts: an organisation label; in every fourth workspace a collection, a partial, and a
	// prompt with a second version, which the label points at in every eighth, and which is
	// deleted, with its partial, in the others.
	add(domain.Stream(domain.PromptLabelPrefix, "lab-prod"), domain.PromptLabelCreated{LabelID: "lab-prod", OrganisationID: Org,
		Name: "production", ColorCode: "#00ff00", By: "admin", At: at(95)})
	for i := 0; i < n; i += 4 {
		ws, col, pr, pp := fmt.Sprintf("ws-%02d", i), fmt.Sprintf("col-%02d", i), fmt.Sprintf("pr-%02d", i), fmt.Sprintf("pp-%02d", i)
		add(domain.Stream(domain.PromptCollectionPrefix, col), domain.PromptCollectionCreated{CollectionID: col, OrganisationID: Org,
			WorkspaceID: ws, Name: fmt.Sprintf("Collection %02d", i), Slug: "col", By: "admin", At: at(95 + i)})
		add(domain.Stream(domain.PromptPartialPrefix, pp), domain.PromptPartialCreated{PartialID: pp, OrganisationID: Org,
			WorkspaceID: ws, CollectionID: col, Slug: "partial-" + pp, Name: "Partial " + pp, VersionID: pp + "-v1",
			String: "Be {{tone}}.", By: "admin", At: at(95 + i)})
		add(domain.Stream(domain.PromptPrefix, pr),
			domain.PromptCreated{PromptID: pr, OrganisationID: Org, WorkspaceID: ws, CollectionID: col, Slug: "prompt-" + pr,
				Name: "Prompt " + pr, VersionID: pr + "-v1", Template: domain.PromptTemplate{String: "Hi {{name}}",
					Parameters: map[string]any{"temperature": 0.5}, Model: "gpt-4o", VirtualKey: "openai"}, By: "admin", At: at(95 + i)},
			domain.PromptUpdated{PromptID: pr, VersionID: pr + "-v2", Template: &domain.PromptTemplate{String: "Hello {{name}} {{> partial-" + pp + "}}",
				Parameters: map[string]any{}, VirtualKey: "openai", Tools: []any{map[string]any{"type": "function"}}}, By: "admin", At: at(96 + i)})
		if i%8 == 0 {
			add(domain.Stream(domain.PromptPrefix, pr), domain.PromptVersionLabelled{PromptID: pr, Version: 2, LabelID: "lab-prod", By: "admin", At: at(97 + i)},
				domain.PromptDefaultSet{PromptID: pr, Version: 2, By: "admin", At: at(97 + i)})
		} else {
			add(domain.Stream(domain.PromptPrefix, pr), domain.PromptArchived{PromptID: pr, By: "admin", At: at(97 + i)})
			add(domain.Stream(domain.PromptPartialPrefix, pp), domain.PromptPartialArchived{PartialID: pp, By: "admin", At: at(97 + i)})
		}
	}
	// Changes after creation: updates, rotations, archivals, deletions, removals.
	for i := 0; i < n; i++ {
		ws, key, rl, user := fmt.Sprintf("ws-%02d", i), fmt.Sprintf("k-%02d", i), fmt.Sprintf("rl-%02d", i), fmt.Sprintf("u-%02d", i)
		switch i % 5 {
		case 0:
			v := 999.0
			add(domain.Stream(domain.RateLimitPolicyPrefix, rl), domain.RateLimitPolicyUpdated{PolicyID: rl, Value: &v, At: at(100 + i)})
		case 1:
			add(domain.Stream(domain.RateLimitPolicyPrefix, rl), domain.RateLimitPolicyArchived{PolicyID: rl, At: at(100 + i)})
			add(domain.Stream(domain.WorkspacePrefix, ws), domain.WorkspaceArchived{WorkspaceID: ws, At: at(100 + i)})
		case 2:
			add(domain.Stream(domain.APIKeyPrefix, key), domain.APIKeyRotated{KeyID: key, Hash: domain.HashKey(key + "-2"),
				Masked: "cw-new****" + key[len(key)-2:], PreviousValidUntil: at(130 + i), At: at(100 + i)})
		case 3:
			add(domain.Stream(domain.APIKeyPrefix, key), domain.APIKeyDeleted{KeyID: key, At: at(100 + i)})
			add(domain.Stream(domain.UserPrefix, user), domain.UserRemoved{UserID: user, Email: fmt.Sprintf("user%02d@example.com", i), At: at(100 + i)})
		case 4:
			desc := "renamed"
			add(domain.Stream(domain.WorkspacePrefix, ws), domain.WorkspaceUpdated{WorkspaceID: ws, Description: &desc, At: at(100 + i)})
		}
	}
	steps = append(steps, Step{Stream: domain.AuditStream, Actor: "", Events: []domain.Event{
		domain.AccessDenied{Status: 401, Reason: "invalid API key", Method: "GET", Path: "/v1/api-keys", At: at(500)}}})
	return steps
}

// Load appends the history to a fresh SQLite event store and returns it.
func Load(t *testing.T, steps []Step) eventstore.Store {
	t.Helper()
	store, err := LoadInto(context.Background(), filepath.Join(t.TempDir(), "events.db"), steps)
	require.NoError(t, err)
	t.Cleanup(func() { store.Close() })
	return store
}

// LoadInto appends the history to the SQLite event store at path and returns it open.
func LoadInto(ctx context.Context, path string, steps []Step) (eventstore.Store, error) {
	store, err := sqlite.Open(ctx, path)
	if err != nil {
		return nil, err
	}
	for i, st := range steps {
		data := make([]eventstore.EventData, len(st.Events))
		for j, ev := range st.Events {
			raw, err := json.Marshal(ev)
			if err != nil {
				return nil, err
			}
			md := eventstore.Metadata{ActorID: st.Actor, ActorKind: eventstore.ActorAPIKey, OrganisationID: Org,
				RequestID: fmt.Sprintf("req-%d", i), ClientIP: "203.0.113.9", Extra: map[string]string{"method": "POST", "path": "/v1/x"}}
			if st.Actor == "" {
				md = eventstore.Metadata{ClientIP: "198.51.100.1"}
			}
			data[j] = eventstore.EventData{ID: uuid.New(), Type: ev.EventType(), Data: raw, Metadata: md}
		}
		if _, err := store.Append(ctx, st.Stream, eventstore.Any, data...); err != nil {
			store.Close()
			return nil, err
		}
	}
	return store, nil
}

// Project runs the real runner until the model has folded everything in store.
func Project(t *testing.T, store eventstore.Store, m projections.ReadModel) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	r := &projections.Runner{Store: store, Projections: []projections.Projection{m}, MaxBatch: 64,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	done := make(chan struct{})
	go func() { defer close(done); _ = r.Run(ctx) }()
	defer func() { cancel(); <-done }()
	head := Head(t, store)
	wctx, wcancel := context.WithTimeout(ctx, 60*time.Second)
	defer wcancel()
	require.NoError(t, m.WaitFor(wctx, head))
}

// Head is the position of the last event in store.
func Head(t *testing.T, store eventstore.Store) eventstore.Position {
	t.Helper()
	var last eventstore.Position
	for {
		evs, err := store.ReadAll(context.Background(), last, 1000)
		require.NoError(t, err)
		if len(evs) == 0 {
			return last
		}
		last = evs[len(evs)-1].Position
	}
}

// must is the value of a read that must not fail.
func must[T any](t *testing.T) func(T, error) T {
	return func(v T, err error) T {
		t.Helper()
		require.NoError(t, err)
		return v
	}
}

// found is the value of a lookup that must not fail, and whether it found it.
func found[T any](t *testing.T) func(T, bool, error) (T, bool) {
	return func(v T, ok bool, err error) (T, bool) {
		t.Helper()
		require.NoError(t, err)
		return v, ok
	}
}

// AuditLog is every audit record of m that f selects, in f's order.
func AuditLog(t *testing.T, m projections.Reader, f projections.AuditFilter) []projections.AuditRecord {
	t.Helper()
	out, _, err := m.AuditRecords(context.Background(), f, 0, 0)
	require.NoError(t, err)
	return out
}

// Run gives the model that open returns the scripted history and requires every query to
// answer as the in-memory reference does.
func Run(t *testing.T, open OpenFunc) {
	reg := domain.NewRegistry()
	t0 := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	const n = 12
	ctx := context.Background()
	store := Load(t, History(n, t0))
	want := memory.New(reg)
	Project(t, store, want)
	got := open(t, reg)
	Project(t, store, got)

	same := func(name string, w, g any) {
		t.Helper()
		wj, err := json.Marshal(w)
		require.NoError(t, err)
		gj, err := json.Marshal(g)
		require.NoError(t, err)
		assert.JSONEq(t, string(wj), string(gj), name)
	}
	// Lists: whole, and page by page (pages of 5), so that order and pagination agree.
	sameList := func(name string, w, g any) {
		t.Helper()
		same(name, w, g)
		wj, _ := json.Marshal(w)
		gj, _ := json.Marshal(g)
		var wl, gl []json.RawMessage
		require.NoError(t, json.Unmarshal(wj, &wl))
		require.NoError(t, json.Unmarshal(gj, &gl))
		for start := 0; start < len(wl); start += 5 {
			end := min(start+5, len(wl))
			require.LessOrEqual(t, end, len(gl), "%s: page at %d", name, start)
			same(fmt.Sprintf("%s page %d", name, start/5), wl[start:end], gl[start:end])
		}
	}
	active := map[string]bool{domain.StatusActive: true}
	both := map[string]bool{domain.StatusActive: true, domain.StatusArchived: true}
	archived := map[string]bool{domain.StatusArchived: true}

	t.Run("get", func(t *testing.T) {
		for i := 0; i < n; i++ {
			for _, id := range []string{fmt.Sprintf("ws-%02d", i), fmt.Sprintf("team-%02d", i)} {
				w, wok := found[domain.Workspace](t)(want.Workspace(ctx, Org, id))
				g, gok := found[domain.Workspace](t)(got.Workspace(ctx, Org, id))
				assert.Equal(t, wok, gok, id)
				same("workspace "+id, w, g)
			}
			ws, _ := found[domain.Workspace](t)(want.WorkspaceBySlug(ctx, Org, fmt.Sprintf("team-%02d", i)))
			gws, _ := found[domain.Workspace](t)(got.WorkspaceBySlug(ctx, Org, fmt.Sprintf("team-%02d", i)))
			same("by slug", ws, gws)
			u, uok := found[domain.User](t)(want.User(ctx, Org, fmt.Sprintf("u-%02d", i)))
			gu, guok := found[domain.User](t)(got.User(ctx, Org, fmt.Sprintf("u-%02d", i)))
			assert.Equal(t, uok, guok)
			same("user", u, gu)
			k, kok := found[domain.APIKey](t)(want.APIKey(ctx, Org, fmt.Sprintf("k-%02d", i)))
			gk, gkok := found[domain.APIKey](t)(got.APIKey(ctx, Org, fmt.Sprintf("k-%02d", i)))
			assert.Equal(t, kok, gkok)
			same("key", k, gk)
			p, _ := found[domain.RateLimitPolicy](t)(want.RateLimitPolicy(ctx, Org, fmt.Sprintf("rl-%02d", i)))
			gp, _ := found[domain.RateLimitPolicy](t)(got.RateLimitPolicy(ctx, Org, fmt.Sprintf("rl-%02d", i)))
			same("rate limit policy", p, gp)
			up, _ := found[domain.UsageLimitPolicy](t)(want.UsageLimitPolicy(ctx, Org, fmt.Sprintf("ul-%02d", i)))
			gup, _ := found[domain.UsageLimitPolicy](t)(got.UsageLimitPolicy(ctx, Org, fmt.Sprintf("ul-%02d", i)))
			same("usage limit policy", up, gup)
			ent, _ := found[[]domain.UsageLimitEntity](t)(want.UsageLimitPolicyEntities(ctx, Org, fmt.Sprintf("ul-%02d", i), projections.UsageEntityFilter{}))
			gent, _ := found[[]domain.UsageLimitEntity](t)(got.UsageLimitPolicyEntities(ctx, Org, fmt.Sprintf("ul-%02d", i), projections.UsageEntityFilter{}))
			same("entities", ent, gent)
			inv, _ := found[domain.Invite](t)(want.Invite(ctx, Org, fmt.Sprintf("inv-%02d", i)))
			ginv, _ := found[domain.Invite](t)(got.Invite(ctx, Org, fmt.Sprintf("inv-%02d", i)))
			same("invite", inv, ginv)
			same("members", must[[]projections.WorkspaceMember](t)(want.WorkspaceMembers(ctx, Org, fmt.Sprintf("ws-%02d", i))),
				must[[]projections.WorkspaceMember](t)(got.WorkspaceMembers(ctx, Org, fmt.Sprintf("ws-%02d", i))))
			same("member of", must[[]string](t)(want.MemberWorkspaceIDs(ctx, Org, fmt.Sprintf("u-%02d", i))),
				must[[]string](t)(got.MemberWorkspaceIDs(ctx, Org, fmt.Sprintf("u-%02d", i))))
			same("security", must[domain.SecuritySettings](t)(want.EffectiveSecurity(ctx, Org, fmt.Sprintf("ws-%02d", i))),
				must[domain.SecuritySettings](t)(got.EffectiveSecurity(ctx, Org, fmt.Sprintf("ws-%02d", i))))
		}
		for i := -1; i < n; i += 3 {
			id := "gr-org"
			if i >= 0 {
				id = fmt.Sprintf("gr-%02d", i)
			}
			for _, ref := range []string{id, "slug-" + id} {
				w, wok := found[domain.Guardrail](t)(want.Guardrail(ctx, Org, ref))
				g, gok := found[domain.Guardrail](t)(got.Guardrail(ctx, Org, ref))
				assert.Equal(t, wok, gok, ref)
				same("guardrail "+ref, w, g)
			}
		}
		_, otherOrgGuardrail := found[domain.Guardrail](t)(got.Guardrail(ctx, "org-2", "gr-org"))
		assert.False(t, otherOrgGuardrail, "another organisation's guardrail is not found")
		o, _ := found[domain.Organisation](t)(want.Organisation(ctx, Org))
		gorg, _ := found[domain.Organisation](t)(got.Organisation(ctx, Org))
		same("organisation", o, gorg)
		_, missing := found[domain.Workspace](t)(got.Workspace(ctx, Org, "no-such"))
		assert.False(t, missing)
		_, otherOrg := found[domain.Workspace](t)(got.Workspace(ctx, "org-2", "ws-00"))
		assert.False(t, otherOrg, "another organisation's workspace is not found")
	})
	t.Run("lists and filters", func(t *testing.T) {
		for name, f := range map[string]projections.WorkspaceFilter{
			"active": {OrganisationID: Org, Statuses: active}, "archived": {OrganisationID: Org, Statuses: archived},
			"both": {OrganisationID: Org, Statuses: both},
		} {
			sameList("workspaces "+name, must[[]domain.Workspace](t)(want.Workspaces(ctx, f)), must[[]domain.Workspace](t)(got.Workspaces(ctx, f)))
		}
		for name, f := range map[string]projections.PolicyFilter{
			"active":    {OrganisationID: Org, Statuses: active},
			"archived":  {OrganisationID: Org, Statuses: archived},
			"one ws":    {OrganisationID: Org, Statuses: both, WorkspaceIDs: map[string]bool{"ws-03": true}},
			"other org": {OrganisationID: "org-2", Statuses: both},
		} {
			sameList("rate limit policies "+name, must[[]domain.RateLimitPolicy](t)(want.RateLimitPolicies(ctx, f)),
				must[[]domain.RateLimitPolicy](t)(got.RateLimitPolicies(ctx, f)))
			sameList("usage limit policies "+name, must[[]domain.UsageLimitPolicy](t)(want.UsageLimitPolicies(ctx, f, "")),
				must[[]domain.UsageLimitPolicy](t)(got.UsageLimitPolicies(ctx, f, "")))
		}
		for name, f := range map[string]projections.KeyFilter{
			"all": {OrganisationID: Org}, "one ws": {OrganisationID: Org, WorkspaceID: "ws-04"},
		} {
			sameList("keys "+name, must[[]domain.APIKey](t)(want.APIKeys(ctx, f)), must[[]domain.APIKey](t)(got.APIKeys(ctx, f)))
		}
		for name, f := range map[string]projections.UserFilter{
			"all": {OrganisationID: Org}, "admins": {OrganisationID: Org, Role: domain.RoleAdmin},
			"by email": {OrganisationID: Org, Email: "USER04@example.com"},
		} {
			sameList("users "+name, must[[]domain.User](t)(want.Users(ctx, f)), must[[]domain.User](t)(got.Users(ctx, f)))
		}
		for name, f := range map[string]projections.GuardrailFilter{
			"active": {OrganisationID: Org, Statuses: active}, "archived": {OrganisationID: Org, Statuses: archived},
			"organisation's": {OrganisationID: Org, Statuses: both, Scope: "organisation"},
			"workspaces'":    {OrganisationID: Org, Statuses: both, Scope: "workspace"},
			"seen by two":    {OrganisationID: Org, Statuses: both, WorkspaceIDs: map[string]bool{"ws-00": true, "ws-03": true}},
			"one ws":         {OrganisationID: Org, Statuses: active, Scope: "workspace", WorkspaceIDs: map[string]bool{"ws-06": true}},
			"other org":      {OrganisationID: "org-2", Statuses: both},
		} {
			sameList("guardrails "+name, must[[]domain.Guardrail](t)(want.Guardrails(ctx, f)), must[[]domain.Guardrail](t)(got.Guardrails(ctx, f)))
		}
		for name, f := range map[string]projections.PromptFilter{
			"active": {OrganisationID: Org, Statuses: active}, "archived": {OrganisationID: Org, Statuses: archived},
			"one ws":     {OrganisationID: Org, Statuses: both, WorkspaceIDs: map[string]bool{"ws-04": true}},
			"collection": {OrganisationID: Org, Statuses: both, CollectionID: "col-08"},
			"search":     {OrganisationID: Org, Statuses: both, Search: "PR-0"},
			"other org":  {OrganisationID: "org-2", Statuses: both},
		} {
			sameList("prompts "+name, must[[]domain.Prompt](t)(want.Prompts(ctx, f)), must[[]domain.Prompt](t)(got.Prompts(ctx, f)))
			sameList("partials "+name, must[[]domain.PromptPartial](t)(want.PromptPartials(ctx, f)), must[[]domain.PromptPartial](t)(got.PromptPartials(ctx, f)))
		}
		for name, f := range map[string]projections.PromptCollectionFilter{
			"all": {OrganisationID: Org, Statuses: both}, "by slug": {OrganisationID: Org, Statuses: active, Slug: "col"},
			"one ws": {OrganisationID: Org, Statuses: active, WorkspaceIDs: map[string]bool{"ws-08": true}},
		} {
			sameList("collections "+name, must[[]domain.PromptCollection](t)(want.PromptCollections(ctx, f)),
				must[[]domain.PromptCollection](t)(got.PromptCollections(ctx, f)))
		}
		for name, f := range map[string]projections.PromptLabelFilter{
			"all": {OrganisationID: Org, Statuses: both}, "workspaces'": {OrganisationID: Org, Statuses: both, Scope: "workspace"},
			"search": {OrganisationID: Org, Statuses: active, Search: "PROD"},
		} {
			sameList("labels "+name, must[[]domain.PromptLabel](t)(want.PromptLabels(ctx, f)), must[[]domain.PromptLabel](t)(got.PromptLabels(ctx, f)))
		}
		for i := 0; i < n; i += 4 {
			for _, ref := range []string{fmt.Sprintf("pr-%02d", i), fmt.Sprintf("prompt-pr-%02d", i)} {
				w, wok := found[domain.Prompt](t)(want.Prompt(ctx, Org, ref))
				g, gok := found[domain.Prompt](t)(got.Prompt(ctx, Org, ref))
				assert.Equal(t, wok, gok, ref)
				same("prompt "+ref, w, g)
			}
			for _, ref := range []string{fmt.Sprintf("pp-%02d", i), fmt.Sprintf("partial-pp-%02d", i)} {
				w, wok := found[domain.PromptPartial](t)(want.PromptPartial(ctx, Org, ref))
				g, gok := found[domain.PromptPartial](t)(got.PromptPartial(ctx, Org, ref))
				assert.Equal(t, wok, gok, ref)
				same("partial "+ref, w, g)
			}
			col := fmt.Sprintf("col-%02d", i)
			w, _ := found[domain.PromptCollection](t)(want.PromptCollection(ctx, Org, col))
			g, _ := found[domain.PromptCollection](t)(got.PromptCollection(ctx, Org, col))
			same("collection "+col, w, g)
			same("contents "+col, must[domain.CollectionContents](t)(want.PromptCollectionContents(ctx, Org, col)),
				must[domain.CollectionContents](t)(got.PromptCollectionContents(ctx, Org, col)))
		}
		for _, ref := range []string{"lab-prod", "production"} {
			w, _ := found[domain.PromptLabel](t)(want.PromptLabel(ctx, Org, ref))
			g, _ := found[domain.PromptLabel](t)(got.PromptLabel(ctx, Org, ref))
			same("label "+ref, w, g)
		}
		now := t0.Add(time.Hour)
		sameList("invites", must[[]domain.Invite](t)(want.Invites(ctx, projections.InviteFilter{OrganisationID: Org, Now: now})),
			must[[]domain.Invite](t)(got.Invites(ctx, projections.InviteFilter{OrganisationID: Org, Now: now})))
		for name, f := range map[string]projections.NotificationFilter{
			"all": {OrganisationID: Org}, "kind": {OrganisationID: Org, Kind: domain.NotifyInvite},
			"ws": {OrganisationID: Org, WorkspaceIDs: map[string]bool{"ws-01": true}},
		} {
			sameList("notifications "+name, must[[]domain.Notification](t)(want.Notifications(ctx, f)),
				must[[]domain.Notification](t)(got.Notifications(ctx, f)))
		}
		for _, notBefore := range []time.Time{t0, t0.Add(5 * time.Minute), t0.Add(time.Hour)} {
			same("pending deliveries", must[[]domain.Notification](t)(want.PendingDeliveries(ctx, notBefore)),
				must[[]domain.Notification](t)(got.PendingDeliveries(ctx, notBefore)))
		}
		recipients := []string{"organisation:admins", "workspace:ws-01:managers", "workspace:ws-02:admins", "X@Example.com", "workspace:ws-00:nope"}
		same("addresses", must[[]string](t)(want.NotificationAddresses(ctx, Org, recipients)),
			must[[]string](t)(got.NotificationAddresses(ctx, Org, recipients)))
		for name, f := range map[string]projections.WebhookFilter{
			"active": {OrganisationID: Org, Statuses: active}, "archived": {OrganisationID: Org, Statuses: archived},
			"organisation's": {OrganisationID: Org, Statuses: both, Scope: "organisation"},
			"seen by two":    {OrganisationID: Org, Statuses: both, WorkspaceIDs: map[string]bool{"ws-00": true, "ws-03": true}},
			"other org":      {OrganisationID: "org-2", Statuses: both},
		} {
			sameList("webhooks "+name, must[[]domain.Webhook](t)(want.Webhooks(ctx, f)), must[[]domain.Webhook](t)(got.Webhooks(ctx, f)))
		}
		for i := 0; i < n; i++ {
			note, _ := found[domain.Notification](t)(want.Notification(ctx, projections.NotificationFilter{OrganisationID: Org}, fmt.Sprintf("n-%02d", i)))
			same("webhooks for a notification", must[[]domain.Webhook](t)(want.WebhooksFor(ctx, note)), must[[]domain.Webhook](t)(got.WebhooksFor(ctx, note)))
			w, wok := found[domain.Webhook](t)(want.Webhook(ctx, Org, fmt.Sprintf("wh-%02d", i)))
			g, gok := found[domain.Webhook](t)(got.Webhook(ctx, Org, fmt.Sprintf("wh-%02d", i)))
			assert.Equal(t, wok, gok)
			same("webhook", w, g)
		}
		wp, ww, err := want.UsageResetsDue(ctx, t0.Add(2000*time.Minute))
		require.NoError(t, err)
		gp, gw, err := got.UsageResetsDue(ctx, t0.Add(2000*time.Minute))
		require.NoError(t, err)
		same("due policies", wp, gp)
		same("due workspaces", ww, gw)
		wk, wpr, wi, err := want.BudgetResetsDue(ctx, t0.Add(2000*time.Minute))
		require.NoError(t, err)
		gk, gpr, gi, err := got.BudgetResetsDue(ctx, t0.Add(2000*time.Minute))
		require.NoError(t, err)
		same("due budgets", []any{wk, wpr, wi}, []any{gk, gpr, gi})
		we, wr, wwarn, err := want.KeysDue(ctx, t0.Add(time.Hour))
		require.NoError(t, err)
		ge, gr, gwarn, err := got.KeysDue(ctx, t0.Add(time.Hour))
		require.NoError(t, err)
		same("keys due", []any{we, wr, wwarn}, []any{ge, gr, gwarn})
	})
	t.Run("audit log", func(t *testing.T) {
		for name, f := range map[string]projections.AuditFilter{
			"all":          {OrganisationID: Org},
			"by type":      {OrganisationID: Org, ResourceType: "apikey"},
			"by action":    {OrganisationID: Org, Action: "workspacearchived"},
			"by status":    {OrganisationID: Org, StatusCode: 401},
			"by request":   {OrganisationID: Org, RequestID: "REQ-3"},
			"by time":      {OrganisationID: Org, From: t0.Add(-time.Hour), To: time.Now().Add(time.Hour)},
			"by actor":     {OrganisationID: Org, ActorID: "admin", ActorType: "api_key"},
			"by client ip": {OrganisationID: Org, ClientIP: "198.51.100.1"},
			"by method":    {OrganisationID: Org, Method: "post", ResourceID: "ws-03"},
			"other org":    {OrganisationID: "org-2"},
		} {
			sameList("audit "+name, AuditLog(t, want, f), AuditLog(t, got, f))
		}
		// Pages in both orders, read from the backend: the same records, in order, without
		// overlap or gap; a resource type in any spelling.
		for name, f := range map[string]projections.AuditFilter{
			"oldest first": {OrganisationID: Org}, "newest first": {OrganisationID: Org, NewestFirst: true},
			"a type's alias": {OrganisationID: Org, ResourceType: "API-KEYS", NewestFirst: true},
			"a type's name":  {OrganisationID: Org, ResourceType: "rate_limit_policy"},
		} {
			whole := AuditLog(t, want, f)
			require.NotEmpty(t, whole, name)
			var paged []projections.AuditRecord
			for offset := 0; ; offset += 7 {
				page, total, err := got.AuditRecords(ctx, f, offset, 7)
				require.NoError(t, err, name)
				require.Equal(t, len(whole), total, name)
				if len(page) == 0 {
					break
				}
				paged = append(paged, page...)
			}
			same("audit pages "+name, whole, paged)
		}
		byAlias := AuditLog(t, want, projections.AuditFilter{OrganisationID: Org, ResourceType: "apikey"})
		require.NotEmpty(t, byAlias)
		for _, rec := range byAlias {
			assert.Equal(t, "api_key", rec.ResourceType, "records answer the type's name")
		}
		all := AuditLog(t, want, projections.AuditFilter{OrganisationID: Org})
		require.NotEmpty(t, all)
		for _, rec := range all[:10] {
			g, ok, err := got.AuditRecord(ctx, Org, rec.ID)
			require.NoError(t, err)
			require.True(t, ok)
			same("audit record", rec, g)
		}
	})
	t.Run("what the history implies", func(t *testing.T) {
		assert.Len(t, must[[]domain.Workspace](t)(got.Workspaces(ctx, projections.WorkspaceFilter{OrganisationID: Org, Statuses: active})), n-n/5-boolInt(n%5 > 1))
		assert.Len(t, must[[]domain.RateLimitPolicy](t)(got.RateLimitPolicies(ctx, projections.PolicyFilter{OrganisationID: Org, Statuses: archived})), n/5+boolInt(n%5 > 1))
		k, ok := found[domain.APIKey](t)(got.APIKey(ctx, Org, "k-02"))
		require.True(t, ok)
		assert.Equal(t, "cw-new****02", k.Masked, "the rotation is folded")
		_, ok = found[domain.APIKey](t)(got.APIKey(ctx, Org, "k-03"))
		assert.False(t, ok, "a deleted key is gone")
		p, _ := found[domain.RateLimitPolicy](t)(got.RateLimitPolicy(ctx, Org, "rl-00"))
		assert.Equal(t, 999.0, p.Value)
		g, ok := found[domain.Guardrail](t)(got.Guardrail(ctx, Org, "slug-gr-00"))
		require.True(t, ok)
		require.Len(t, g.Versions, 2)
		assert.Equal(t, "gr-00-v2", g.Latest().ID)
		assert.True(t, g.Latest().Actions.Deny, "the new version's actions")
		assert.Equal(t, "x{0}", g.Versions[0].Checks[0].Parameters["rule"])
		_, ok = found[domain.Guardrail](t)(got.Guardrail(ctx, Org, "slug-gr-03"))
		assert.False(t, ok, "a deleted guardrail gave its slug up")
		g, ok = found[domain.Guardrail](t)(got.Guardrail(ctx, Org, "gr-03"))
		require.True(t, ok, "and is still found by its id")
		assert.Equal(t, domain.StatusArchived, g.Status)
		assert.Len(t, must[[]domain.Guardrail](t)(got.Guardrails(ctx, projections.GuardrailFilter{OrganisationID: Org, Statuses: active})), 1+(n+2)/3-n/6)
		var pending []string
		for _, note := range must[[]domain.Notification](t)(got.PendingDeliveries(ctx, t0.Add(5*time.Minute))) {
			pending = append(pending, note.ID)
		}
		assert.Equal(t, []string{"n-01", "n-05", "n-07", "n-09", "n-11"}, pending,
			"oldest first: those with a delivery to retry, and those recorded since not planned")
		note, _ := found[domain.Notification](t)(got.Notification(ctx, projections.NotificationFilter{OrganisationID: Org}, "n-04"))
		assert.Equal(t, domain.DeliveryDelivered, note.Status)
		note, _ = found[domain.Notification](t)(got.Notification(ctx, projections.NotificationFilter{OrganisationID: Org}, "n-02"))
		assert.Equal(t, domain.DeliverySkipped, note.Status)
		assert.Equal(t, []string{"user01@example.com", "user05@example.com", "user07@example.com", "user09@example.com",
			"user11@example.com", "x@example.com"},
			must[[]string](t)(got.NotificationAddresses(ctx, Org, []string{"organisation:admins", "workspace:ws-01:managers", "X@Example.com"})),
			"the active admins (user03 was removed), ws-01's manager, and the address given")
		assert.Equal(t, []string{"user02@example.com"}, must[[]string](t)(got.NotificationAddresses(ctx, Org, []string{"workspace:ws-02:admins"})))
		invite, _ := found[domain.Notification](t)(got.Notification(ctx, projections.NotificationFilter{OrganisationID: Org}, "n-00"))
		var hooks []string
		for _, w := range must[[]domain.Webhook](t)(got.WebhooksFor(ctx, invite)) {
			hooks = append(hooks, w.ID)
		}
		assert.Equal(t, []string{"wh-00", "wh-org"}, hooks, "its workspace's webhook for invites, and the organisation's")
		rotated, _ := found[domain.Notification](t)(got.Notification(ctx, projections.NotificationFilter{OrganisationID: Org}, "n-03"))
		hooks = nil
		for _, w := range must[[]domain.Webhook](t)(got.WebhooksFor(ctx, rotated)) {
			hooks = append(hooks, w.ID)
		}
		assert.Equal(t, []string{"wh-org"}, hooks, "ws-03's webhook is disabled")
		pr, ok := found[domain.Prompt](t)(got.Prompt(ctx, Org, "prompt-pr-00"))
		require.True(t, ok)
		assert.Equal(t, 2, pr.Default().Number, "makeDefault is folded")
		v, ok := pr.Labelled("lab-prod")
		require.True(t, ok)
		assert.Equal(t, "pr-00-v2", v.ID, "the label points at version 2")
		_, ok = found[domain.Prompt](t)(got.Prompt(ctx, Org, "prompt-pr-04"))
		assert.False(t, ok, "a deleted prompt gave its slug up")
		assert.Equal(t, domain.CollectionContents{Prompts: 1, Partials: 1},
			must[domain.CollectionContents](t)(got.PromptCollectionContents(ctx, Org, "col-00")))
		assert.Equal(t, domain.CollectionContents{}, must[domain.CollectionContents](t)(got.PromptCollectionContents(ctx, Org, "col-04")))
		assert.Equal(t, Head(t, store), must[eventstore.Position](t)(got.Checkpoint(ctx)))
		assert.Len(t, AuditLog(t, got, projections.AuditFilter{OrganisationID: Org}), countEvents(History(n, t0)))
	})
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func countEvents(steps []Step) int {
	n := 0
	for _, s := range steps {
		n += len(s.Events)
	}
	return n
}
