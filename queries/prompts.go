package queries

import (
	"context"
	"time"

	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/projections"
)

// Prompts, partials and collections are seen by those who see their workspace and whose role
// the security settings in force there let see prompts (membersViewPrompts,
// managersViewPrompts: domain.PromptAccess); one out of sight is not found, one in sight
// that the settings hide is forbidden, naming the setting. Labels are seen by everyone of the
// organisation (an organisation label) or of its workspace: they name versions, not what
// they hold.

// CanViewPrompts refuses an actor that the security settings of a workspace it sees keep from
// seeing its prompts.
func (q *Queries) CanViewPrompts(ctx context.Context, actor domain.Actor, workspaceID string) error {
	if actor.IsOrgAdmin() {
		return nil
	}
	sec, err := q.Read.EffectiveSecurity(ctx, actor.OrganisationID, workspaceID)
	if err != nil {
		return err
	}
	return domain.PromptAccess(actor, workspaceID, sec, false)
}

// PromptWorkspaces is the set of workspaces whose prompts the actor may list (nil: every
// workspace of the organisation): one workspace when ref names one (its id or slug; one the
// actor sees, whose settings let it see prompts), else every workspace it sees whose settings
// do.
func (q *Queries) PromptWorkspaces(ctx context.Context, actor domain.Actor, ref string) (map[string]bool, error) {
	if ref != "" {
		ws, err := q.VisibleWorkspace(ctx, actor, ref)
		if err != nil {
			return nil, err
		}
		if err := q.CanViewPrompts(ctx, actor, ws.ID); err != nil {
			return nil, err
		}
		return map[string]bool{ws.ID: true}, nil
	}
	visible := VisibleWorkspaces(actor)
	if visible == nil {
		return nil, nil
	}
	out := map[string]bool{}
	for id := range visible {
		if q.CanViewPrompts(ctx, actor, id) == nil {
			out[id] = true
		}
	}
	return out, nil
}

// PromptList selects the prompts or partials a list shows: of a status in Statuses, of the
// workspace WorkspaceRef names ("" : every one the actor may list), of a collection (by id
// or slug), whose names hold Search.
type PromptList struct {
	Statuses      map[string]bool
	WorkspaceRef  string
	CollectionRef string
	Search        string
}

// filter is the read model's filter of a list.
func (q *Queries) promptFilter(ctx context.Context, actor domain.Actor, l PromptList) (projections.PromptFilter, error) {
	wss, err := q.PromptWorkspaces(ctx, actor, l.WorkspaceRef)
	if err != nil {
		return projections.PromptFilter{}, err
	}
	f := projections.PromptFilter{OrganisationID: actor.OrganisationID, WorkspaceIDs: wss, Statuses: l.Statuses, Search: l.Search}
	if l.CollectionRef != "" {
		c, err := q.CollectionByRef(ctx, actor, l.CollectionRef, l.WorkspaceRef, "collection_id")
		if err != nil {
			return f, err
		}
		f.CollectionID = c.ID
	}
	return f, nil
}

// Prompts lists the prompts of the actor's organisation that l selects and the actor may
// see, newest first.
func (q *Queries) Prompts(ctx context.Context, actor domain.Actor, l PromptList) ([]domain.Prompt, error) {
	f, err := q.promptFilter(ctx, actor, l)
	if err != nil {
		return nil, err
	}
	return q.Read.Prompts(ctx, f)
}

// PromptPartials lists the partials that l selects and the actor may see, newest first.
func (q *Queries) PromptPartials(ctx context.Context, actor domain.Actor, l PromptList) ([]domain.PromptPartial, error) {
	f, err := q.promptFilter(ctx, actor, l)
	if err != nil {
		return nil, err
	}
	return q.Read.PromptPartials(ctx, f)
}

// VisiblePrompt is the prompt ref names (its id, or the slug it holds now), of a status in
// statuses, if the actor may see it.
func (q *Queries) VisiblePrompt(ctx context.Context, actor domain.Actor, ref string, statuses map[string]bool) (domain.Prompt, error) {
	p, ok, err := q.Read.Prompt(ctx, actor.OrganisationID, ref)
	if err != nil {
		return domain.Prompt{}, err
	}
	if !ok || !statuses[p.Status] || !CanSee(actor, p.WorkspaceID) {
		return domain.Prompt{}, domain.Errorf(domain.CodeNotFound, "prompt %s not found", ref)
	}
	return p, q.CanViewPrompts(ctx, actor, p.WorkspaceID)
}

// VisiblePromptPartial is the partial ref names, if the actor may see it.
func (q *Queries) VisiblePromptPartial(ctx context.Context, actor domain.Actor, ref string, statuses map[string]bool) (domain.PromptPartial, error) {
	p, ok, err := q.Read.PromptPartial(ctx, actor.OrganisationID, ref)
	if err != nil {
		return domain.PromptPartial{}, err
	}
	if !ok || !statuses[p.Status] || !CanSee(actor, p.WorkspaceID) {
		return domain.PromptPartial{}, domain.Errorf(domain.CodeNotFound, "prompt partial %s not found", ref)
	}
	return p, q.CanViewPrompts(ctx, actor, p.WorkspaceID)
}

// CanSeePromptLabel reports whether the actor may read the label.
func CanSeePromptLabel(actor domain.Actor, l domain.PromptLabel) bool {
	return l.WorkspaceID == "" || CanSee(actor, l.WorkspaceID)
}

// VisiblePromptLabel is the live label ref names (its id, or its name), if the actor sees it.
func (q *Queries) VisiblePromptLabel(ctx context.Context, actor domain.Actor, ref string) (domain.PromptLabel, error) {
	l, ok, err := q.Read.PromptLabel(ctx, actor.OrganisationID, ref)
	if err != nil {
		return domain.PromptLabel{}, err
	}
	if !ok || !l.Exists() || !CanSeePromptLabel(actor, l) {
		return domain.PromptLabel{}, domain.Errorf(domain.CodeNotFound, "label %s not found", ref)
	}
	return l, nil
}

// PromptLabelList selects the labels a list shows: a workspace's own and the organisation's
// when WorkspaceRef names one (the labels its prompts may carry), the organisation's own when
// Organisation is set, else every label the actor sees.
type PromptLabelList struct {
	WorkspaceRef string
	Organisation bool
	Search       string
}

// PromptLabels lists the live labels that l selects and the actor sees, newest first.
func (q *Queries) PromptLabels(ctx context.Context, actor domain.Actor, l PromptLabelList) ([]domain.PromptLabel, error) {
	f := projections.PromptLabelFilter{OrganisationID: actor.OrganisationID, WorkspaceIDs: VisibleWorkspaces(actor),
		Statuses: map[string]bool{domain.StatusActive: true}, Search: l.Search}
	switch {
	case l.WorkspaceRef != "":
		ws, err := q.VisibleWorkspace(ctx, actor, l.WorkspaceRef)
		if err != nil {
			return nil, err
		}
		f.WorkspaceIDs = map[string]bool{ws.ID: true}
	case l.Organisation:
		f.Scope = "organisation"
	}
	return q.Read.PromptLabels(ctx, f)
}

// CollectionByRef is the live collection ref names, if the actor may see it: its id, or its
// slug in the workspace wsRef names, else in the actor's own workspace, else in the one
// workspace the actor sees that has the slug (an organisation key naming a slug that several
// workspaces use is asked for the id). param names the field in errors.
func (q *Queries) CollectionByRef(ctx context.Context, actor domain.Actor, ref, wsRef, param string) (domain.PromptCollection, error) {
	notFound := &domain.Error{Code: domain.CodeNotFound, Param: param, Message: "collection " + ref + " not found"}
	c, ok, err := q.Read.PromptCollection(ctx, actor.OrganisationID, ref)
	if err != nil {
		return c, err
	}
	if !ok {
		f := projections.PromptCollectionFilter{OrganisationID: actor.OrganisationID, WorkspaceIDs: VisibleWorkspaces(actor),
			Statuses: map[string]bool{domain.StatusActive: true}, Slug: ref}
		switch {
		case wsRef != "":
			ws, err := q.VisibleWorkspace(ctx, actor, wsRef)
			if err != nil {
				return c, err
			}
			f.WorkspaceIDs = map[string]bool{ws.ID: true}
		case WorkspaceKeyActor(actor):
			f.WorkspaceIDs = map[string]bool{actor.WorkspaceID: true}
		}
		found, err := q.Read.PromptCollections(ctx, f)
		if err != nil {
			return c, err
		}
		switch len(found) {
		case 0:
			return c, notFound
		case 1:
			c = found[0]
		default:
			return c, domain.Invalid(param, "%s %q names a collection in %d workspaces: give the collection's id, or workspace_id", param, ref, len(found))
		}
	}
	if !c.Exists() || !CanSee(actor, c.WorkspaceID) {
		return c, notFound
	}
	return c, q.CanViewPrompts(ctx, actor, c.WorkspaceID)
}

// PromptCollections lists the live collections of the workspace wsRef names (every one the
// actor may list when empty) whose names hold search, newest first.
func (q *Queries) PromptCollections(ctx context.Context, actor domain.Actor, wsRef, search string) ([]domain.PromptCollection, error) {
	wss, err := q.PromptWorkspaces(ctx, actor, wsRef)
	if err != nil {
		return nil, err
	}
	return q.Read.PromptCollections(ctx, projections.PromptCollectionFilter{OrganisationID: actor.OrganisationID, WorkspaceIDs: wss,
		Statuses: map[string]bool{domain.StatusActive: true}, Search: search})
}

// CollectionDetails is what a collection holds, as the reference's CollectionDetails counts
// it: its live child collections and prompts, and when the last of each changed (nil: none).
type CollectionDetails struct {
	Children        []domain.PromptCollection
	Prompts         int
	ChildrenChanged *time.Time
	PromptsChanged  *time.Time
}

// PromptCollectionDetails counts what a collection holds.
func (q *Queries) PromptCollectionDetails(ctx context.Context, c domain.PromptCollection) (CollectionDetails, error) {
	live := map[string]bool{domain.StatusActive: true}
	var out CollectionDetails
	children, err := q.Read.PromptCollections(ctx, projections.PromptCollectionFilter{OrganisationID: c.OrganisationID,
		ParentID: c.ID, Statuses: live})
	if err != nil {
		return out, err
	}
	prompts, err := q.Read.Prompts(ctx, projections.PromptFilter{OrganisationID: c.OrganisationID, CollectionID: c.ID, Statuses: live})
	if err != nil {
		return out, err
	}
	out.Children, out.Prompts = children, len(prompts)
	for _, ch := range children {
		if out.ChildrenChanged == nil || ch.LastUpdatedAt.After(*out.ChildrenChanged) {
			at := ch.LastUpdatedAt
			out.ChildrenChanged = &at
		}
	}
	for _, p := range prompts {
		if out.PromptsChanged == nil || p.LastUpdatedAt.After(*out.PromptsChanged) {
			at := p.LastUpdatedAt
			out.PromptsChanged = &at
		}
	}
	return out, nil
}

// PromptIDs turns the prompt_slug filter of request-log reads into the prompt ids the log
// rows carry: a prompt's slug (or id) names its id; a name no prompt holds now stays as given.
func (q *Queries) PromptIDs(ctx context.Context, orgID string, refs []string) ([]string, error) {
	if len(refs) == 0 {
		return nil, nil
	}
	out := make([]string, 0, len(refs))
	for _, ref := range refs {
		p, found, err := q.Read.Prompt(ctx, orgID, ref)
		if err != nil {
			return nil, err
		}
		if found {
			ref = p.ID
		}
		out = append(out, ref)
	}
	return out, nil
}
