package projections

import (
	"context"
	"strings"
	"time"

	"github.com/causeway/causeway/domain"
)

// Prompts, prompt partials, labels and collections. The admin API lists and reads them here;
// the gateway renders prompts from its own index (gateway.Index), which the in-memory model
// feeds.

// PromptFilter selects prompts or partials in a list.
type PromptFilter struct {
	OrganisationID string
	WorkspaceIDs   map[string]bool // nil: every workspace
	CollectionID   string          // "": any
	Statuses       map[string]bool
	// Search keeps those whose name holds it, in any case.
	Search string
}

func (f PromptFilter) keep(org, ws, collection, status, name string) bool {
	return org == f.OrganisationID && (f.WorkspaceIDs == nil || f.WorkspaceIDs[ws]) &&
		(f.CollectionID == "" || f.CollectionID == collection) && f.Statuses[status] && nameHolds(name, f.Search)
}

// nameHolds reports whether name holds search, in any case ("" holds everything).
func nameHolds(name, search string) bool {
	return search == "" || strings.Contains(strings.ToLower(name), strings.ToLower(strings.TrimSpace(search)))
}

// Prompts lists the prompts that f selects, newest first.
func (q Queries) Prompts(ctx context.Context, f PromptFilter) ([]domain.Prompt, error) {
	return all(ctx, q.Docs, domain.PromptPrefix, func(p *domain.Prompt) bool {
		return f.keep(p.OrganisationID, p.WorkspaceID, p.CollectionID, p.Status, p.Name)
	}, newestFirst(func(p *domain.Prompt) (time.Time, string) { return p.CreatedAt, p.ID }))
}

// Prompt returns a prompt of the organisation by its id (deleted or not) or by the slug it
// holds now.
func (q Queries) Prompt(ctx context.Context, orgID, ref string) (domain.Prompt, bool, error) {
	p, ok, err := get[domain.Prompt](ctx, q.Docs, domain.PromptPrefix, ref)
	if err != nil || (ok && p.OrganisationID == orgID) {
		return p, err == nil, err
	}
	return first(all(ctx, q.Docs, domain.PromptPrefix, func(p *domain.Prompt) bool {
		return p.OrganisationID == orgID && p.Slug == ref && p.Exists()
	}, newestFirst(func(p *domain.Prompt) (time.Time, string) { return p.CreatedAt, p.ID })))
}

// PromptPartials lists the partials that f selects, newest first.
func (q Queries) PromptPartials(ctx context.Context, f PromptFilter) ([]domain.PromptPartial, error) {
	return all(ctx, q.Docs, domain.PromptPartialPrefix, func(p *domain.PromptPartial) bool {
		return f.keep(p.OrganisationID, p.WorkspaceID, p.CollectionID, p.Status, p.Name)
	}, newestFirst(func(p *domain.PromptPartial) (time.Time, string) { return p.CreatedAt, p.ID }))
}

// PromptPartial returns a partial of the organisation by its id (deleted or not) or by the
// slug it holds now.
func (q Queries) PromptPartial(ctx context.Context, orgID, ref string) (domain.PromptPartial, bool, error) {
	p, ok, err := get[domain.PromptPartial](ctx, q.Docs, domain.PromptPartialPrefix, ref)
	if err != nil || (ok && p.OrganisationID == orgID) {
		return p, err == nil, err
	}
	return first(all(ctx, q.Docs, domain.PromptPartialPrefix, func(p *domain.PromptPartial) bool {
		return p.OrganisationID == orgID && p.Slug == ref && p.Exists()
	}, newestFirst(func(p *domain.PromptPartial) (time.Time, string) { return p.CreatedAt, p.ID })))
}

// PromptLabelFilter selects labels in a list.
type PromptLabelFilter struct {
	OrganisationID string
	Statuses       map[string]bool
	// Scope is "organisation" (the organisation's labels only), "workspace" (workspaces'
	// labels only) or "" for both.
	Scope string
	// WorkspaceIDs keeps the workspace labels of these workspaces; nil: of every workspace.
	// Organisation labels are kept whatever it holds.
	WorkspaceIDs map[string]bool
	Search       string
}

func (f PromptLabelFilter) keep(l *domain.PromptLabel) bool {
	if l.OrganisationID != f.OrganisationID || !f.Statuses[l.Status] || !nameHolds(l.Name, f.Search) {
		return false
	}
	switch {
	case l.WorkspaceID == "":
		return f.Scope != "workspace"
	case f.Scope == "organisation":
		return false
	}
	return f.WorkspaceIDs == nil || f.WorkspaceIDs[l.WorkspaceID]
}

// PromptLabels lists the labels that f selects, newest first.
func (q Queries) PromptLabels(ctx context.Context, f PromptLabelFilter) ([]domain.PromptLabel, error) {
	return all(ctx, q.Docs, domain.PromptLabelPrefix, f.keep,
		newestFirst(func(l *domain.PromptLabel) (time.Time, string) { return l.CreatedAt, l.ID }))
}

// PromptLabel returns a label of the organisation by its id (deleted or not) or by the name a
// live label holds now.
func (q Queries) PromptLabel(ctx context.Context, orgID, ref string) (domain.PromptLabel, bool, error) {
	l, ok, err := get[domain.PromptLabel](ctx, q.Docs, domain.PromptLabelPrefix, ref)
	if err != nil || (ok && l.OrganisationID == orgID) {
		return l, err == nil, err
	}
	return first(all(ctx, q.Docs, domain.PromptLabelPrefix, func(l *domain.PromptLabel) bool {
		return l.OrganisationID == orgID && l.Name == ref && l.Exists()
	}, newestFirst(func(l *domain.PromptLabel) (time.Time, string) { return l.CreatedAt, l.ID })))
}

// PromptCollectionFilter selects collections in a list.
type PromptCollectionFilter struct {
	OrganisationID string
	WorkspaceIDs   map[string]bool // nil: every workspace
	Statuses       map[string]bool
	// Slug keeps the collections that hold it ("": any).
	Slug string
	// ParentID keeps the children of a collection ("": any).
	ParentID string
	Search   string
}

// PromptCollections lists the collections that f selects, newest first.
func (q Queries) PromptCollections(ctx context.Context, f PromptCollectionFilter) ([]domain.PromptCollection, error) {
	return all(ctx, q.Docs, domain.PromptCollectionPrefix, func(c *domain.PromptCollection) bool {
		return c.OrganisationID == f.OrganisationID && (f.WorkspaceIDs == nil || f.WorkspaceIDs[c.WorkspaceID]) &&
			f.Statuses[c.Status] && (f.Slug == "" || c.Slug == f.Slug) && (f.ParentID == "" || c.ParentID == f.ParentID) &&
			nameHolds(c.Name, f.Search)
	}, newestFirst(func(c *domain.PromptCollection) (time.Time, string) { return c.CreatedAt, c.ID }))
}

// PromptCollection returns a collection of the organisation by its id, deleted or not.
func (q Queries) PromptCollection(ctx context.Context, orgID, id string) (domain.PromptCollection, bool, error) {
	c, ok, err := get[domain.PromptCollection](ctx, q.Docs, domain.PromptCollectionPrefix, id)
	return c, ok && c.OrganisationID == orgID, err
}

// PromptCollectionContents counts the live prompts, partials and child collections a
// collection holds (commands.CollectionContentsIndex).
func (q Queries) PromptCollectionContents(ctx context.Context, orgID, collectionID string) (domain.CollectionContents, error) {
	var out domain.CollectionContents
	live := map[string]bool{domain.StatusActive: true}
	prompts, err := q.Prompts(ctx, PromptFilter{OrganisationID: orgID, CollectionID: collectionID, Statuses: live})
	if err != nil {
		return out, err
	}
	partials, err := q.PromptPartials(ctx, PromptFilter{OrganisationID: orgID, CollectionID: collectionID, Statuses: live})
	if err != nil {
		return out, err
	}
	children, err := q.PromptCollections(ctx, PromptCollectionFilter{OrganisationID: orgID, ParentID: collectionID, Statuses: live})
	if err != nil {
		return out, err
	}
	out.Prompts, out.Partials, out.Children = len(prompts), len(partials), len(children)
	return out, nil
}
