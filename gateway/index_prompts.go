package gateway

import (
	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/templates"
)

// promptTables are the routing index's prompts: what rendering a prompt reads on the hot
// path, without I/O. Prompts and partials by id and by the slug a live one holds, labels by
// id and by the name a live one holds, and each organisation's security settings (with the
// key's workspace's overrides, they say who may render). Versions never change, so each is
// parsed once, as it is folded in: a prompt version's template, a partial version's text
// prepared to include. Its maps are made as the first of each kind is folded in.
type promptTables struct {
	templates    map[string]*templates.Template // prompt version id → its template
	prepared     map[string]*templates.Partial  // partial version id → its text, prepared
	prompts      map[string]Versioned[domain.Prompt]
	promptSlugs  map[string]string // org + "\x00" + slug → prompt id
	partials     map[string]Versioned[domain.PromptPartial]
	partialSlugs map[string]string // org + "\x00" + slug → partial id
	labels       map[string]domain.PromptLabel
	labelNames   map[string]string // org + "\x00" + name → label id
	security     map[string]domain.SecuritySettings
}

// putPrompts folds one changed aggregate of prompts (or an organisation) in; the caller
// holds the write lock.
func (x *Index) putPrompts(agg domain.Aggregate, version uint64) {
	t := &x.promptTables
	switch a := agg.(type) {
	case *domain.Prompt:
		if t.prompts == nil {
			t.prompts, t.promptSlugs = map[string]Versioned[domain.Prompt]{}, map[string]string{}
		}
		p := *a
		t.prompts[p.ID] = Versioned[domain.Prompt]{p, version}
		reslugged(t.promptSlugs, p.OrganisationID+"\x00"+p.Slug, p.ID, p.Exists())
		for _, v := range p.Versions {
			if _, done := t.templates[v.ID]; !done {
				// A template that does not parse is left out: rendering parses it again and
				// answers why.
				if tmpl, err := templates.Parse("string", v.Template.String); err == nil {
					if t.templates == nil {
						t.templates = map[string]*templates.Template{}
					}
					t.templates[v.ID] = tmpl
				}
			}
		}
	case *domain.PromptPartial:
		if t.partials == nil {
			t.partials, t.partialSlugs = map[string]Versioned[domain.PromptPartial]{}, map[string]string{}
		}
		p := *a
		t.partials[p.ID] = Versioned[domain.PromptPartial]{p, version}
		reslugged(t.partialSlugs, p.OrganisationID+"\x00"+p.Slug, p.ID, p.Exists())
		for _, v := range p.Versions {
			if _, done := t.prepared[v.ID]; !done {
				if prepared, err := templates.PreparePartial("partial "+p.Slug, v.String); err == nil {
					if t.prepared == nil {
						t.prepared = map[string]*templates.Partial{}
					}
					t.prepared[v.ID] = prepared
				}
			}
		}
	case *domain.PromptLabel:
		if t.labels == nil {
			t.labels, t.labelNames = map[string]domain.PromptLabel{}, map[string]string{}
		}
		l := *a
		if old, ok := t.labels[l.ID]; ok && old.Name != l.Name {
			reslugged(t.labelNames, old.OrganisationID+"\x00"+old.Name, l.ID, false)
		}
		t.labels[l.ID] = l
		reslugged(t.labelNames, l.OrganisationID+"\x00"+l.Name, l.ID, l.Exists())
	case *domain.Organisation:
		if t.security == nil {
			t.security = map[string]domain.SecuritySettings{}
		}
		t.security[a.ID] = a.Security
	}
}

// reslugged points name at id while it is live, and takes it away from id when not.
func reslugged(names map[string]string, name, id string, live bool) {
	if live {
		names[name] = id
	} else if names[name] == id {
		delete(names, name)
	}
}

// Prompt returns a prompt of the organisation by its id (deleted or not: see Exists) or by
// the slug a live prompt holds.
func (x *Index) Prompt(orgID, ref string) (Versioned[domain.Prompt], bool) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	t := &x.promptTables
	if p, ok := t.prompts[ref]; ok && p.Value.OrganisationID == orgID {
		return p, true
	}
	if id, ok := t.promptSlugs[orgID+"\x00"+ref]; ok {
		return t.prompts[id], true
	}
	return Versioned[domain.Prompt]{}, false
}

// PromptPartial returns a partial of the organisation by its id (deleted or not) or by the
// slug a live partial holds.
func (x *Index) PromptPartial(orgID, ref string) (Versioned[domain.PromptPartial], bool) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	t := &x.promptTables
	if p, ok := t.partials[ref]; ok && p.Value.OrganisationID == orgID {
		return p, true
	}
	if id, ok := t.partialSlugs[orgID+"\x00"+ref]; ok {
		return t.partials[id], true
	}
	return Versioned[domain.PromptPartial]{}, false
}

// PromptLabelByName returns the organisation's live label of that name.
func (x *Index) PromptLabelByName(orgID, name string) (domain.PromptLabel, bool) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	id, ok := x.promptTables.labelNames[orgID+"\x00"+name]
	if !ok {
		return domain.PromptLabel{}, false
	}
	return x.promptTables.labels[id], true
}

// PromptTemplate returns a prompt version's template, parsed when it was folded in.
func (x *Index) PromptTemplate(versionID string) (*templates.Template, bool) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	t, ok := x.promptTables.templates[versionID]
	return t, ok
}

// PreparedPartial returns a partial version's text, prepared when it was folded in.
func (x *Index) PreparedPartial(versionID string) (*templates.Partial, bool) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	p, ok := x.promptTables.prepared[versionID]
	return p, ok
}

// PromptSecurity returns the organisation's security settings (the specification's defaults
// for an organisation the index does not know).
func (x *Index) PromptSecurity(orgID string) domain.SecuritySettings {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if s, ok := x.promptTables.security[orgID]; ok {
		return s
	}
	return domain.DefaultSecuritySettings()
}
