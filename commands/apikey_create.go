package commands

import (
	"context"
	"strings"
	"time"

	"github.com/causeway/causeway/domain"
)

// CreateAPIKey creates a key of Type (organisation or workspace) and SubType (service or
// user), as POST /api-keys/{type}/{sub-type} does.
type CreateAPIKey struct {
	Type           string
	SubType        string
	Name           string
	WorkspaceID    string
	UserID         string
	Scopes         []string
	RateLimits     []domain.RateLimit
	UsageLimits    *domain.UsageLimits
	Defaults       *domain.KeyDefaults
	AlertEmails    []string
	ExpiresAt      *time.Time
	RotationPolicy *domain.RotationPolicy
}

// CreatedAPIKey is the only answer that shows the plaintext key.
type CreatedAPIKey struct {
	Result
	Key string
}

type createAPIKeyHandler struct {
	d      Deps
	secret []byte
}

// NewCreateAPIKeyHandler needs the server secret from which retried creates derive their key.
func NewCreateAPIKeyHandler(d Deps, secret []byte) (createAPIKeyHandler, error) {
	if len(secret) < 32 {
		return createAPIKeyHandler{}, domain.Errorf(domain.CodeInternal, "commands: the server secret must be at least 32 bytes")
	}
	return createAPIKeyHandler{d, secret}, d.check()
}

func (h createAPIKeyHandler) Handle(ctx context.Context, c CreateAPIKey) (CreatedAPIKey, error) {
	req := RequestFrom(ctx)
	actor := req.Actor
	keyType, err := h.authorise(ctx, actor, &c)
	if err != nil {
		return CreatedAPIKey{}, err
	}
	id := NewID(ctx, "apikey")
	key := domain.NewSecretKey()
	if req.IdempotencyKey != "" {
		key = domain.DeriveSecretKey(h.secret, actor.ID+"\x00"+req.IdempotencyKey)
	}
	res, err := execute(ctx, h.d, domain.Stream(domain.APIKeyPrefix, id), newAPIKey,
		func(k *domain.APIKey) ([]domain.Event, error) {
			return k.Create(domain.CreateAPIKey{KeyID: id, Key: key, Name: c.Name, Type: keyType,
				OrganisationID: actor.OrganisationID, WorkspaceID: c.WorkspaceID, UserID: c.UserID,
				Scopes: c.Scopes, RateLimits: c.RateLimits, UsageLimits: c.UsageLimits, Defaults: c.Defaults,
				AlertEmails: c.AlertEmails, ExpiresAt: c.ExpiresAt, RotationPolicy: c.RotationPolicy,
				CreatedBy: actor.ID}, h.d.Now())
		})
	if err != nil {
		return CreatedAPIKey{}, err
	}
	res.ID = id
	return CreatedAPIKey{Result: res, Key: key}, nil
}

// authorise checks that the actor may create this kind of key, in this workspace, for this
// user, with these scopes (never more than it holds itself), and returns the key type.
func (h createAPIKeyHandler) authorise(ctx context.Context, actor domain.Actor, c *CreateAPIKey) (string, error) {
	var keyType string
	switch {
	case c.Type == "organisation" && c.SubType == "service":
		keyType = domain.KeyOrganisationService
		if err := requireOrgAdmin(actor, "organisation_service_api_keys.create"); err != nil {
			return "", err
		}
		c.WorkspaceID, c.UserID = "", ""
	case c.Type == "workspace" && (c.SubType == "service" || c.SubType == "user"):
		keyType, scope := domain.KeyWorkspaceService, "workspace_service_api_keys.create"
		if c.SubType == "user" {
			keyType, scope = domain.KeyWorkspaceUser, "workspace_user_api_keys.create"
		}
		workspace, err := workspacePrelude(ctx, h.d, c.WorkspaceID, domain.RoleManager, scope)
		if err != nil {
			return "", err
		}
		ws := workspace.ID
		c.WorkspaceID = ws
		if keyType == domain.KeyWorkspaceUser {
			if c.UserID == "" {
				c.UserID = actor.UserID
			}
			if c.UserID == "" {
				return "", domain.Invalid("user_id", "user_id is required: name the user the key is for")
			}
			if _, member := workspace.Members[c.UserID]; !member {
				return "", domain.Invalid("user_id", "user %s is not a member of workspace %s", c.UserID, ws)
			}
		} else {
			c.UserID = ""
		}
		return keyType, scopesHeld(actor, c.Scopes)
	default:
		return "", domain.Invalid("type", "the key type must be organisation/service, workspace/service or workspace/user (got %s/%s)", c.Type, c.SubType)
	}
	return keyType, scopesHeld(actor, c.Scopes)
}

// scopesHeld: a key is created only with permissions its creator holds. Names outside the
// catalogue are left to the domain, which refuses them as invalid rather than forbidden.
func scopesHeld(actor domain.Actor, scopes []string) error {
	known := make([]string, 0, len(scopes))
	for _, s := range scopes {
		if domain.IsScope(s) {
			known = append(known, s)
		}
	}
	if missing := actor.ScopesWithin(known); len(missing) > 0 {
		return &domain.Error{Code: domain.CodeForbidden, Param: "scopes",
			Message: "a key cannot be given scopes its creator lacks: " + strings.Join(missing, ", ")}
	}
	return nil
}

func newAPIKey() *domain.APIKey { return &domain.APIKey{} }
