package httpapi

import (
	"net/http"
	"time"

	"github.com/gorilla/mux"

	"github.com/causeway/causeway/commands"
	"github.com/causeway/causeway/domain"
)

// Collections answer in the reference's shapes: create {id, slug}, CollectionWithDetails in
// the list ({total, data}, and the list fields of every other list), CollectionWithChildCollections
// where one is read, {} for an update or a delete. A collection is named in paths by its id or
// by its slug (unique in its workspace: ?workspace_id= names the workspace, a workspace key's
// own by default).

// collectionDetails is the reference's CollectionDetails.
type collectionDetails struct {
	ChildCollectionsCount         int        `json:"child_collections_count"`
	PromptsCount                  int        `json:"prompts_count"`
	ChildCollectionsLastUpdatedAt *time.Time `json:"child_collections_last_updated_at"`
	PromptsLastUpdatedAt          *time.Time `json:"prompts_last_updated_at"`
}

// collectionAnswer is the reference's Collection with its details and, where one is read, its
// child collections.
type collectionAnswer struct {
	ID                 string            `json:"id"`
	Name               string            `json:"name"`
	WorkspaceID        string            `json:"workspace_id"`
	Slug               string            `json:"slug"`
	ParentCollectionID *string           `json:"parent_collection_id"`
	IsDefault          bool              `json:"is_default"`
	Status             string            `json:"status"`
	CreatedAt          time.Time         `json:"created_at"`
	LastUpdatedAt      time.Time         `json:"last_updated_at"`
	CollectionDetails  collectionDetails `json:"collection_details"`
	ChildCollections   []childCollection `json:"child_collections,omitempty"`
	Object             string            `json:"object"`
}

// childCollection is the reference's ChildCollection.
type childCollection struct {
	ID                string            `json:"id"`
	Name              string            `json:"name"`
	LastUpdatedAt     time.Time         `json:"last_updated_at"`
	CollectionDetails collectionDetails `json:"collection_details"`
}

// collectionDetailsOf counts what a collection holds.
func (a *Admin) collectionDetailsOf(r *http.Request, c domain.PromptCollection) (collectionDetails, []domain.PromptCollection, error) {
	d, err := a.reads().PromptCollectionDetails(r.Context(), c)
	if err != nil {
		return collectionDetails{}, nil, err
	}
	stamp := func(t *time.Time) *time.Time {
		if t == nil {
			return nil
		}
		m := millis(*t)
		return &m
	}
	return collectionDetails{ChildCollectionsCount: len(d.Children), PromptsCount: d.Prompts,
		ChildCollectionsLastUpdatedAt: stamp(d.ChildrenChanged), PromptsLastUpdatedAt: stamp(d.PromptsChanged)}, d.Children, nil
}

// collectionView renders a collection with its details, and its children when withChildren.
func (a *Admin) collectionView(r *http.Request, c domain.PromptCollection, withChildren bool) (collectionAnswer, error) {
	details, children, err := a.collectionDetailsOf(r, c)
	if err != nil {
		return collectionAnswer{}, err
	}
	out := collectionAnswer{ID: c.ID, Name: c.Name, WorkspaceID: c.WorkspaceID, Slug: c.Slug, IsDefault: c.IsDefault,
		Status: c.Status, CreatedAt: millis(c.CreatedAt), LastUpdatedAt: millis(c.LastUpdatedAt), CollectionDetails: details,
		Object: "collection"}
	if c.ParentID != "" {
		p := c.ParentID
		out.ParentCollectionID = &p
	}
	if withChildren {
		out.ChildCollections = []childCollection{}
		for _, ch := range children {
			d, _, err := a.collectionDetailsOf(r, ch)
			if err != nil {
				return out, err
			}
			out.ChildCollections = append(out.ChildCollections, childCollection{ID: ch.ID, Name: ch.Name,
				LastUpdatedAt: millis(ch.LastUpdatedAt), CollectionDetails: d})
		}
	}
	return out, nil
}

// collectionCreateBody is createCollection's body, with an optional slug.
type collectionCreateBody struct {
	WorkspaceID        string  `json:"workspace_id"`
	Name               *string `json:"name"`
	Slug               *string `json:"slug"`
	ParentCollectionID string  `json:"parent_collection_id"`
}

// collectionUpdateBody is updateCollection's body.
type collectionUpdateBody struct {
	Name *string `json:"name"`
}

func (a *Admin) registerPromptCollections(r *mux.Router) {
	on := func(h handler) http.Handler { return a.route("prompt_collection", h) }
	// fromPath finds the collection of the path (id or slug) that the actor may see, with
	// scope.
	fromPath := func(r *http.Request, scope string) (domain.PromptCollection, error) {
		actor := actorFrom(r.Context())
		if err := requireScope(actor, scope); err != nil {
			return domain.PromptCollection{}, err
		}
		return a.reads().CollectionByRef(r.Context(), actor, mux.Vars(r)["collectionId"], r.URL.Query().Get("workspace_id"), "collectionId")
	}

	r.Handle("/collections", on(write(a, a.Commands.CreatePromptCollection, nowhere,
		func(r *http.Request, _ struct{}, b collectionCreateBody) (commands.CreatePromptCollection, error) {
			c := commands.CreatePromptCollection{Slug: b.Slug}
			if b.Name == nil {
				return c, domain.Invalid("name", "name is required")
			}
			ws, err := a.workspaceID(r, b.WorkspaceID)
			if err != nil {
				return c, err
			}
			c.WorkspaceID, c.Name = ws, *b.Name
			if b.ParentCollectionID != "" {
				parent, err := a.reads().CollectionByRef(r.Context(), actorFrom(r.Context()), b.ParentCollectionID, ws, "parent_collection_id")
				if err != nil {
					return c, err
				}
				c.ParentID = parent.ID
			}
			return c, nil
		},
		func(r *http.Request, _ struct{}, _ commands.CreatePromptCollection, res commands.Result) (int, any, error) {
			c, _, err := a.Read.PromptCollection(r.Context(), actorFrom(r.Context()).OrganisationID, res.ID)
			if err != nil {
				return 0, nil, err
			}
			return http.StatusOK, map[string]string{"id": c.ID, "slug": c.Slug}, nil
		}))).Methods(http.MethodPost)

	r.Handle("/collections", on(func(w http.ResponseWriter, r *http.Request) (int, any, error) {
		actor := actorFrom(r.Context())
		if err := requireScope(actor, "prompts.list"); err != nil {
			return 0, nil, err
		}
		q := r.URL.Query()
		found, err := a.reads().PromptCollections(r.Context(), actor, q.Get("workspace_id"), q.Get("search"))
		if err != nil {
			return 0, nil, err
		}
		win, err := page[domain.PromptCollection](r, found)
		if err != nil {
			return 0, nil, err
		}
		views := make([]collectionAnswer, 0, len(win.Data))
		for _, c := range win.Data {
			v, err := a.collectionView(r, c, false)
			if err != nil {
				return 0, nil, err
			}
			views = append(views, v)
		}
		return http.StatusOK, listAnswer[collectionAnswer]{Object: "list", Total: win.Total, CurrentPage: win.CurrentPage,
			PageSize: win.PageSize, Data: views}, nil
	})).Methods(http.MethodGet)

	r.Handle("/collections/{collectionId}", on(func(w http.ResponseWriter, r *http.Request) (int, any, error) {
		c, err := fromPath(r, "prompts.read")
		if err != nil {
			return 0, nil, err
		}
		v, err := a.collectionView(r, c, true)
		if err != nil {
			return 0, nil, err
		}
		a.etag(w, r, domain.PromptCollectionPrefix, c.ID)
		return http.StatusOK, v, nil
	})).Methods(http.MethodGet)

	r.Handle("/collections/{collectionId}", on(write(a, a.Commands.UpdatePromptCollection, scoped(fromPath, "prompts.update"),
		func(_ *http.Request, c domain.PromptCollection, b collectionUpdateBody) (commands.UpdatePromptCollection, error) {
			if b.Name == nil {
				return commands.UpdatePromptCollection{}, domain.Invalid("name", "name is required")
			}
			return commands.UpdatePromptCollection{CollectionID: c.ID, Name: *b.Name}, nil
		},
		func(*http.Request, domain.PromptCollection, commands.UpdatePromptCollection, commands.Result) (int, any, error) {
			return http.StatusOK, map[string]any{}, nil
		}))).Methods(http.MethodPut)

	r.Handle("/collections/{collectionId}", on(pathWrite(a, a.Commands.ArchivePromptCollection, scoped(fromPath, "prompts.delete"),
		func(c domain.PromptCollection) commands.ArchivePromptCollection {
			return commands.ArchivePromptCollection{CollectionID: c.ID}
		},
		func(domain.PromptCollection) any { return map[string]any{} }))).Methods(http.MethodDelete)
}

// registerPromptResources adds the routes of prompts, partials, labels and collections. The
// partials' come first: /prompts/partials is not a prompt's id.
func (a *Admin) registerPromptResources(r *mux.Router) {
	a.registerPromptPartials(r)
	a.registerPrompts(r)
	a.registerPromptLabels(r)
	a.registerPromptCollections(r)
}
