package httpapi

import (
	"net/http"
	"time"

	"github.com/gorilla/mux"

	"github.com/causeway/causeway/commands"
	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/queries"
)

// Webhooks are endpoints that notifications are posted to, signed as Standard Webhooks says
// (the specification leaves outbound webhooks out). They take the integrations scopes: an
// organisation webhook is for organisation admins, a workspace webhook also for its managers
// (managersWriteWsIntegrations). The signing secret is answered by the create and the
// rotate-secret routes only, once each.

// webhookAnswer is a webhook as reads show it; never its secret.
type webhookAnswer struct {
	ID              string    `json:"id"`
	Object          string    `json:"object"`
	OrganisationID  string    `json:"organisation_id"`
	WorkspaceID     *string   `json:"workspace_id"`
	Name            string    `json:"name"`
	URL             string    `json:"url"`
	Kinds           []string  `json:"kinds"`
	Disabled        bool      `json:"disabled"`
	Status          string    `json:"status"`
	SecretRotatedAt time.Time `json:"secret_rotated_at"`
	CreatedBy       string    `json:"created_by"`
	UpdatedBy       string    `json:"updated_by"`
	CreatedAt       time.Time `json:"created_at"`
	LastUpdatedAt   time.Time `json:"last_updated_at"`
}

func webhookView(w domain.Webhook) webhookAnswer {
	out := webhookAnswer{ID: w.ID, Object: "webhook", OrganisationID: w.OrganisationID, Name: w.Name, URL: w.URL,
		Kinds: w.Kinds, Disabled: w.Disabled, Status: w.Status, SecretRotatedAt: millis(w.SecretRotatedAt),
		CreatedBy: w.CreatedBy, UpdatedBy: w.UpdatedBy, CreatedAt: millis(w.CreatedAt), LastUpdatedAt: millis(w.LastUpdatedAt)}
	if out.Kinds == nil {
		out.Kinds = []string{}
	}
	if w.WorkspaceID != "" {
		ws := w.WorkspaceID
		out.WorkspaceID = &ws
	}
	return out
}

// webhookWithSecret is the answer of a create or a rotation: the webhook and its new signing
// secret, which no other answer holds.
type webhookWithSecret struct {
	webhookAnswer
	Secret string `json:"secret"`
}

type webhookCreateBody struct {
	Name           string   `json:"name"`
	URL            string   `json:"url"`
	WorkspaceID    *string  `json:"workspace_id"`
	OrganisationID string   `json:"organisation_id"`
	Kinds          []string `json:"kinds"`
	Disabled       bool     `json:"disabled"`
}

type webhookUpdateBody struct {
	Name     *string   `json:"name"`
	URL      *string   `json:"url"`
	Kinds    *[]string `json:"kinds"`
	Disabled *bool     `json:"disabled"`
}

func webhookID(r *http.Request) (string, error) {
	id := mux.Vars(r)["webhookId"]
	if !isUUID(id) {
		return "", domain.Invalid("webhookId", "webhookId must be a UUID")
	}
	return id, nil
}

// webhookAsOf reads a webhook as it was.
func (a *Admin) webhookAsOf(w http.ResponseWriter, r *http.Request) (int, any, error) {
	actor := actorFrom(r.Context())
	if err := requireScope(actor, "integrations.read"); err != nil {
		return 0, nil, err
	}
	id, err := webhookID(r)
	if err != nil {
		return 0, nil, err
	}
	return gatewayAsOf(a, w, r, "webhook", domain.WebhookPrefix, id,
		func(h *domain.Webhook) string { return h.OrganisationID }, (*domain.Webhook).Exists,
		func(h domain.Webhook, _ time.Time) (any, error) {
			if !queries.CanSeeWebhook(actor, h) {
				return nil, notFound("webhook", h.ID)
			}
			return webhookView(h), nil
		})
}

func (a *Admin) registerWebhooks(r *mux.Router) {
	on := func(h handler) http.Handler { return a.route("webhook", h) }

	// fromPath finds the webhook of the path that the actor may see, with scope.
	fromPath := func(r *http.Request, scope string) (domain.Webhook, error) {
		actor := actorFrom(r.Context())
		if err := requireScope(actor, scope); err != nil {
			return domain.Webhook{}, err
		}
		id, err := webhookID(r)
		if err != nil {
			return domain.Webhook{}, err
		}
		st, err := statuses(r, domain.StatusActive, domain.StatusActive, domain.StatusArchived)
		if err != nil {
			return domain.Webhook{}, err
		}
		return a.reads().VisibleWebhook(r.Context(), actor, id, st)
	}
	// written answers a write with the webhook as it is now, and its secret when one was made.
	written := func(r *http.Request, id, secret string) (int, any, error) {
		h, _, err := a.Read.Webhook(r.Context(), actorFrom(r.Context()).OrganisationID, id)
		if err != nil {
			return 0, nil, err
		}
		if secret == "" {
			return http.StatusOK, webhookView(h), nil
		}
		return http.StatusOK, webhookWithSecret{webhookAnswer: webhookView(h), Secret: secret}, nil
	}

	r.Handle("/webhooks", on(write(a, a.Commands.CreateWebhook, nowhere,
		func(r *http.Request, _ struct{}, b webhookCreateBody) (commands.CreateWebhook, error) {
			if err := ownOrganisationID(r, b.OrganisationID); err != nil {
				return commands.CreateWebhook{}, err
			}
			c := commands.CreateWebhook{Name: b.Name, URL: b.URL, Kinds: b.Kinds, Disabled: b.Disabled}
			if b.WorkspaceID != nil {
				id, err := a.resolveWorkspace(r.Context(), actorFrom(r.Context()).OrganisationID, *b.WorkspaceID)
				if err != nil {
					return c, err
				}
				c.WorkspaceID = id
			}
			return c, nil
		},
		func(r *http.Request, _ struct{}, _ commands.CreateWebhook, res commands.CreatedWebhook) (int, any, error) {
			return written(r, res.ID, res.Secret)
		}))).Methods(http.MethodPost)

	r.Handle("/webhooks", on(func(w http.ResponseWriter, r *http.Request) (int, any, error) {
		actor := actorFrom(r.Context())
		if err := requireScope(actor, "integrations.list"); err != nil {
			return 0, nil, err
		}
		st, err := statuses(r, domain.StatusActive, domain.StatusActive, domain.StatusArchived)
		if err != nil {
			return 0, nil, err
		}
		q := r.URL.Query()
		l := queries.WebhookList{Statuses: st, WorkspaceID: q.Get("workspace_id")}
		if org := q.Get("organisation_id"); org != "" {
			if err := ownOrganisationID(r, org); err != nil {
				return 0, nil, err
			}
			l.Organisation = true
		}
		found, err := a.reads().Webhooks(r.Context(), actor, l)
		if err != nil {
			return 0, nil, err
		}
		views := make([]webhookAnswer, 0, len(found))
		for _, h := range found {
			views = append(views, webhookView(h))
		}
		list, err := page(r, views)
		return http.StatusOK, list, err
	})).Methods(http.MethodGet)

	r.Handle("/webhooks/{webhookId}", on(func(w http.ResponseWriter, r *http.Request) (int, any, error) {
		if asOfRequested(r) {
			return a.webhookAsOf(w, r)
		}
		h, err := fromPath(r, "integrations.read")
		if err != nil {
			return 0, nil, err
		}
		a.etag(w, r, domain.WebhookPrefix, h.ID)
		return http.StatusOK, webhookView(h), nil
	})).Methods(http.MethodGet)

	r.Handle("/webhooks/{webhookId}", on(write(a, a.Commands.UpdateWebhook, scoped(fromPath, "integrations.update"),
		func(_ *http.Request, h domain.Webhook, b webhookUpdateBody) (commands.UpdateWebhook, error) {
			return commands.UpdateWebhook{WebhookID: h.ID, Name: b.Name, URL: b.URL, Kinds: b.Kinds, Disabled: b.Disabled}, nil
		},
		func(r *http.Request, h domain.Webhook, _ commands.UpdateWebhook, _ commands.Result) (int, any, error) {
			return written(r, h.ID, "")
		}))).Methods(http.MethodPut)

	r.Handle("/webhooks/{webhookId}", on(pathWrite(a, a.Commands.DeleteWebhook, scoped(fromPath, "integrations.delete"),
		func(h domain.Webhook) commands.DeleteWebhook { return commands.DeleteWebhook{WebhookID: h.ID} },
		func(h domain.Webhook) any {
			return map[string]string{"id": h.ID, "object": "webhook", "status": domain.StatusArchived}
		}))).Methods(http.MethodDelete)

	r.Handle("/webhooks/{webhookId}/rotate-secret", on(write(a, a.Commands.RotateWebhookSecret, scoped(fromPath, "integrations.update"),
		func(_ *http.Request, h domain.Webhook, _ noBody) (commands.RotateWebhookSecret, error) {
			return commands.RotateWebhookSecret{WebhookID: h.ID}, nil
		},
		func(r *http.Request, h domain.Webhook, _ commands.RotateWebhookSecret, res commands.CreatedWebhook) (int, any, error) {
			return written(r, h.ID, res.Secret)
		}))).Methods(http.MethodPost)
}
