package commands

import (
	"context"
	"errors"

	"github.com/causeway/causeway/domain"
)

// Reservation kinds of the gateway's admin resources. Integration and config slugs are unique
// in an organisation ("<organisation id>/<slug>"), provider slugs in a workspace
// ("<workspace id>/<slug>"); a deleted resource frees its slug.
const (
	IntegrationSlugReservation = "integration-slug"
	ProviderSlugReservation    = "provider-slug"
	ConfigSlugReservation      = "config-slug"
)

func newIntegration() *domain.Integration { return &domain.Integration{} }

// integrationWriter checks that the actor may change an integration of workspaceID ("" for
// an organisation integration) with scope: organisation integrations are for organisation
// admins; a workspace integration also for the workspace's managers, unless the security
// setting managersWriteWsIntegrations says otherwise.
func integrationWriter(ctx context.Context, d Deps, workspaceID, scope string) error {
	actor := RequestFrom(ctx).Actor
	if workspaceID == "" || actor.IsOrgAdmin() {
		return requireOrgAdmin(actor, scope)
	}
	if err := requireWorkspaceRole(actor, workspaceID, domain.RoleManager, scope); err != nil {
		return err
	}
	security, err := effectiveSecurity(ctx, d, actor.OrganisationID, workspaceID)
	if err != nil {
		return err
	}
	if !security.ManagersWriteWsIntegrations {
		return forbidden("workspace managers may not change workspace integrations here (managersWriteWsIntegrations is off)")
	}
	return nil
}

// effectiveSecurity folds the organisation's security settings and the workspace's
// overrides, from their streams.
func effectiveSecurity(ctx context.Context, d Deps, orgID, workspaceID string) (domain.SecuritySettings, error) {
	org, err := Load(ctx, d, domain.Stream(domain.OrganisationPrefix, orgID), func() *domain.Organisation { return &domain.Organisation{} })
	if err != nil {
		return domain.SecuritySettings{}, err
	}
	base := domain.DefaultSecuritySettings()
	if org.ID != "" {
		base = org.Security
	}
	ws, err := Load(ctx, d, domain.Stream(domain.WorkspacePrefix, workspaceID), newWorkspace)
	if err != nil {
		return domain.SecuritySettings{}, err
	}
	return ws.Security.Over(base), nil
}

// loadIntegrationFor loads an integration of the actor's organisation that the actor may
// change with scope.
func loadIntegrationFor(ctx context.Context, d Deps, id, scope string) (*domain.Integration, error) {
	actor := RequestFrom(ctx).Actor
	i, err := Load(ctx, d, domain.Stream(domain.IntegrationPrefix, id), newIntegration)
	if err != nil {
		return nil, err
	}
	if !i.Exists() || i.OrganisationID != actor.OrganisationID {
		return nil, domain.Errorf(domain.CodeNotFound, "integration %s not found", id)
	}
	if err := integrationWriter(ctx, d, i.WorkspaceID, scope); err != nil {
		return nil, err
	}
	return i, nil
}

// integrationByRef loads an active integration of the organisation by its id or slug.
func integrationByRef(ctx context.Context, d Deps, orgID, ref, param string) (*domain.Integration, error) {
	notFound := &domain.Error{Code: domain.CodeNotFound, Param: param, Message: "integration " + ref + " not found"}
	id := ref
	if holder, held, err := slugHolder(ctx, d, IntegrationSlugReservation, orgID+"/"+ref); err != nil {
		return nil, err
	} else if held {
		id = holder
	}
	i, err := Load(ctx, d, domain.Stream(domain.IntegrationPrefix, id), newIntegration)
	if err != nil {
		return nil, err
	}
	if !i.Exists() || i.OrganisationID != orgID {
		return nil, notFound
	}
	return i, nil
}

// slugHolder returns who holds a reserved name, if anyone does.
func slugHolder(ctx context.Context, d Deps, kind, name string) (string, bool, error) {
	r, err := Load(ctx, d, domain.ReservationStream(kind, name), func() *domain.Reservation { return &domain.Reservation{} })
	if err != nil {
		return "", false, err
	}
	return r.OwnerID, r.Held, nil
}

// withoutIdempotency returns ctx for a compensating write (releasing a name): its event ids
// must not be derived from the request's idempotency key, or they would repeat the
// reservation's own and be taken for a replay of it.
func withoutIdempotency(ctx context.Context) context.Context {
	req := RequestFrom(ctx)
	req.IdempotencyKey = ""
	return WithRequest(ctx, req)
}

// releaseAll frees names this request reserved, after a later step failed.
func releaseAll(ctx context.Context, d Deps, kind string, names map[string]string) {
	for name, owner := range names {
		_ = release(withoutIdempotency(ctx), d, kind, name, owner)
	}
}

// slugCandidates are the slugs to try for a resource: the one given, or one derived from its
// name with a suffix from its id, so that derived slugs seldom collide; plainFirst tries the
// name's slug without a suffix first.
func slugCandidates(given *string, name, fallback, id string, plainFirst bool) []string {
	if given != nil && *given != "" {
		return []string{*given}
	}
	base := domain.DeriveSlug(name)
	if base == "workspace" && fallback != "workspace" {
		base = fallback
	}
	out := []string{base}
	if !plainFirst {
		out = nil
	}
	base = base[:min(len(base), 40)]
	return append(out, base+"-"+id[:6], base+"-"+id[:8]+id[9:13])
}

// reserveFirst claims the first free candidate; the last conflict answers when none is free.
func reserveFirst(ctx context.Context, d Deps, kind, scope, ownerID, param string, candidates []string) (string, error) {
	var err error
	for _, slug := range candidates {
		if err = reserve(ctx, d, kind, scope+"/"+slug, ownerID, param); err == nil {
			return slug, nil
		}
		if domain.ErrorCode(err) != domain.CodeConflict {
			return "", err
		}
	}
	return "", err
}

// actorName is who a resource records as its creator: the user behind a user key, else the
// actor itself.
func actorName(a domain.Actor) string {
	if a.UserID != "" {
		return a.UserID
	}
	return a.ID
}

// withParam renames the param of an application error (a workspace check's workspace_id
// becomes workspaces[2].id).
func withParam(err error, param string) error {
	var appErr *domain.Error
	if errors.As(err, &appErr) && appErr.Param != "" {
		e := *appErr
		e.Param = param
		return &e
	}
	return err
}
