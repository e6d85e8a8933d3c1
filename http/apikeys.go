package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/gorilla/mux"

	"github.com/causeway/causeway/commands"
	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/queries"
)

// apiKeyBody is the create body of the reference (CreateApiKeyObject).
type apiKeyBody struct {
	Name           string                 `json:"name"`
	Type           string                 `json:"type"`
	SubType        string                 `json:"sub-type"`
	OrganisationID string                 `json:"organisation_id"`
	WorkspaceID    string                 `json:"workspace_id"`
	UserID         string                 `json:"user_id"`
	Scopes         []string               `json:"scopes"`
	RateLimits     []domain.RateLimit     `json:"rate_limits"`
	UsageLimits    *domain.UsageLimits    `json:"usage_limits"`
	Defaults       *domain.KeyDefaults    `json:"defaults"`
	AlertEmails    []string               `json:"alert_emails"`
	ExpiresAt      *time.Time             `json:"expires_at"`
	RotationPolicy *domain.RotationPolicy `json:"rotation_policy"`
}

// usageLimitsAnswer is a key's budget with its usage so far, which may be fractional.
type usageLimitsAnswer struct {
	domain.UsageLimits
	CurrentUsage amount `json:"current_usage"`
}

// apiKeyAnswer is a key as reads show it: masked, never its hash, with the status a reader
// sees now.
type apiKeyAnswer struct {
	domain.APIKey
	CurrentUsage amount             `json:"current_usage"` // the key's, rounded as money is
	UsageLimits  *usageLimitsAnswer `json:"usage_limits"`
	Object       string             `json:"object"`
}

func apiKeyView(k domain.APIKey, now time.Time) apiKeyAnswer {
	if k.RateLimits == nil {
		k.RateLimits = []domain.RateLimit{}
	}
	if k.AlertEmails == nil {
		k.AlertEmails = []string{}
	}
	k.Status = k.StatusAt(now)
	k.CreatedAt, k.LastUpdatedAt = k.CreatedAt.UTC().Truncate(time.Millisecond), k.LastUpdatedAt.UTC().Truncate(time.Millisecond)
	out := apiKeyAnswer{APIKey: k, CurrentUsage: amount(k.CurrentUsage), Object: "api-key"}
	if k.UsageLimits != nil {
		out.UsageLimits = &usageLimitsAnswer{UsageLimits: *k.UsageLimits, CurrentUsage: amount(k.CurrentUsage)}
	}
	return out
}

func (a *Admin) registerAPIKeys(r *mux.Router) {
	on := func(h handler) http.Handler { return a.route("api_key", h) }

	// A rotation whose notification was not recorded still hands out the new key, shown only
	// this once; the miss is logged.
	rotate := commands.HandlerFunc[commands.RotateAPIKey, commands.RotatedAPIKey](
		func(ctx context.Context, c commands.RotateAPIKey) (commands.RotatedAPIKey, error) {
			res, err := a.Commands.RotateAPIKey.Handle(ctx, c)
			if err == nil && res.NotifyErr != nil && a.Log != nil {
				a.Log.WarnContext(ctx, "api key rotated, but its notification was not recorded",
					"trace_id", TraceID(ctx), "api_key_id", c.KeyID, "error", res.NotifyErr)
			}
			return res, err
		})
	// Rotation is registered before the generic create path, which would otherwise take
	// /api-keys/{id}/rotate for a key type.
	r.Handle("/api-keys/{id}/rotate", on(write(a, rotate, keyID,
		func(_ *http.Request, id string, b optionalBody[apiKeyRotateBody]) (commands.RotateAPIKey, error) {
			var transition time.Duration
			if ms := b.V.KeyTransitionPeriodMS; ms != nil {
				if *ms < domain.MinKeyTransition.Milliseconds() {
					return commands.RotateAPIKey{}, domain.Invalid("key_transition_period_ms", "key_transition_period_ms must be at least %d (30 minutes; got %d)",
						domain.MinKeyTransition.Milliseconds(), *ms)
				}
				transition = time.Duration(*ms) * time.Millisecond
			}
			return commands.RotateAPIKey{KeyID: id, Transition: transition}, nil
		},
		func(_ *http.Request, _ string, _ commands.RotateAPIKey, res commands.RotatedAPIKey) (int, any, error) {
			return http.StatusOK, map[string]any{"id": res.ID, "key": res.Key, "object": "api-key",
				"key_transition_expires_at": res.TransitionEndsAt.UTC()}, nil
		}))).Methods(http.MethodPost)

	createAs := func(typ, sub string) handler {
		return write(a, a.Commands.CreateAPIKey, nowhere,
			func(r *http.Request, _ struct{}, b apiKeyBody) (commands.CreateAPIKey, error) {
				typ, sub := typ, sub
				if typ == "" {
					typ, sub = mux.Vars(r)["type"], mux.Vars(r)["subtype"]
				}
				if err := ownOrganisationID(r, b.OrganisationID); err != nil {
					return commands.CreateAPIKey{}, err
				}
				return commands.CreateAPIKey{Type: typ, SubType: sub, Name: b.Name,
					WorkspaceID: b.WorkspaceID, UserID: b.UserID, Scopes: b.Scopes, RateLimits: b.RateLimits,
					UsageLimits: b.UsageLimits, Defaults: b.Defaults, AlertEmails: b.AlertEmails, ExpiresAt: b.ExpiresAt,
					RotationPolicy: b.RotationPolicy}, nil
			},
			func(_ *http.Request, _ struct{}, _ commands.CreateAPIKey, res commands.CreatedAPIKey) (int, any, error) {
				return http.StatusOK, map[string]string{"id": res.ID, "key": res.Key, "object": "api-key"}, nil
			})
	}
	r.Handle("/api-keys/organisation/service", on(createAs("organisation", "service"))).Methods(http.MethodPost)
	r.Handle("/api-keys/workspace/user", on(createAs("workspace", "user"))).Methods(http.MethodPost)
	r.Handle("/api-keys/{type}/{subtype}", on(createAs("", ""))).Methods(http.MethodPost)

	r.Handle("/api-keys", on(func(w http.ResponseWriter, r *http.Request) (int, any, error) {
		actor := actorFrom(r.Context())
		now := a.Now()
		var views []apiKeyAnswer
		found, err := a.reads().APIKeys(r.Context(), actor, r.URL.Query().Get("workspace_id"))
		if err != nil {
			return 0, nil, err
		}
		for _, k := range found {
			views = append(views, apiKeyView(k, now))
		}
		list, err := page(r, views)
		return http.StatusOK, list, err
	})).Methods(http.MethodGet)

	r.Handle("/api-keys/{id}", on(func(w http.ResponseWriter, r *http.Request) (int, any, error) {
		if asOfRequested(r) {
			return asOf(a, w, r, apiKeyAsOf)
		}
		id, err := keyID(r)
		if err != nil {
			return 0, nil, err
		}
		k, err := a.reads().APIKey(r.Context(), actorFrom(r.Context()), id)
		if err != nil {
			return 0, nil, err
		}
		a.etag(w, r, domain.APIKeyPrefix, k.ID)
		return http.StatusOK, apiKeyView(k, a.Now()), nil
	})).Methods(http.MethodGet)

	r.Handle("/api-keys/{id}", on(write(a, a.Commands.UpdateAPIKey, keyID,
		func(_ *http.Request, id string, b apiKeyUpdateBody) (commands.UpdateAPIKey, error) {
			return commands.UpdateAPIKey{KeyID: id, UpdateAPIKey: b.UpdateAPIKey}, nil
		},
		func(r *http.Request, id string, _ commands.UpdateAPIKey, _ commands.Result) (int, any, error) {
			k, ok, err := a.Read.APIKey(r.Context(), actorFrom(r.Context()).OrganisationID, id)
			if err != nil {
				return 0, nil, err
			}
			if !ok {
				return 0, nil, domain.Errorf(domain.CodeNotFound, "api key %s not found", id)
			}
			return http.StatusOK, apiKeyView(k, a.Now()), nil
		}))).Methods(http.MethodPut)

	r.Handle("/api-keys/{id}", on(write(a, a.Commands.DeleteAPIKey, keyID,
		func(_ *http.Request, id string, _ noBody) (commands.DeleteAPIKey, error) {
			return commands.DeleteAPIKey{KeyID: id}, nil
		},
		func(_ *http.Request, _ string, _ commands.DeleteAPIKey, res commands.Result) (int, any, error) {
			return http.StatusOK, map[string]any{"id": res.ID, "object": "api-key", "deleted": true}, nil
		}))).Methods(http.MethodDelete)
}

// apiKeyRotateBody is the rotation body, which may be left out.
type apiKeyRotateBody struct {
	KeyTransitionPeriodMS *int64 `json:"key_transition_period_ms"`
}

// apiKeyUpdateBody is an update body, read by decodeAPIKeyUpdate.
type apiKeyUpdateBody struct{ domain.UpdateAPIKey }

func (b *apiKeyUpdateBody) readBody(r *http.Request) (err error) {
	b.UpdateAPIKey, err = decodeAPIKeyUpdate(r)
	return err
}

func keyID(r *http.Request) (string, error) {
	id := mux.Vars(r)["id"]
	if !isUUID(id) {
		return "", domain.Invalid("id", "id must be a UUID")
	}
	return id, nil
}

// keyReadScope and keyReadable are the read side's (queries.KeyReadScope, queries.KeyReadable).
func keyReadScope(keyType string) string { return queries.KeyReadScope(keyType) }

func keyReadable(actor domain.Actor, k domain.APIKey) error { return queries.KeyReadable(actor, k) }

// apiKeyUpdateFields are the fields of the reference's UpdateApiKeyObject that a key's update
// accepts, in the order they are checked.
var apiKeyUpdateFields = []string{"name", "scopes", "rate_limits", "usage_limits", "reset_usage", "defaults",
	"alert_emails", "expires_at", "rotation_policy"}

// decodeAPIKeyUpdate reads an update body, telling an absent field (unchanged) from null
// (cleared, where the field may be cleared). Each field is decoded as strictly as decode does.
func decodeAPIKeyUpdate(r *http.Request) (domain.UpdateAPIKey, error) {
	var raw map[string]json.RawMessage
	var u domain.UpdateAPIKey
	if err := decode(r, &raw); err != nil {
		return u, err
	}
	for name := range raw {
		known := false
		for _, f := range apiKeyUpdateFields {
			known = known || f == name
		}
		if !known {
			return u, domain.Invalid(name, "unknown field %q", name)
		}
	}
	var err error
	for _, name := range apiKeyUpdateFields {
		v, present := raw[name]
		if !present {
			continue
		}
		null := bytes.Equal(bytes.TrimSpace(v), []byte("null"))
		switch name {
		case "name":
			u.Name = new(string)
			err = notNull(name, null, func() error { return decodeField(name, v, u.Name) })
		case "scopes":
			err = notNull(name, null, func() error { return decodeField(name, v, &u.Scopes) })
		case "reset_usage":
			err = notNull(name, null, func() error { return decodeField(name, v, &u.ResetUsage) })
		case "rate_limits":
			u.ClearRateLimits = null
			err = decodeField(name, v, &u.RateLimits)
		case "usage_limits":
			u.ClearUsageLimits = null
			err = decodeField(name, v, &u.UsageLimits)
		case "defaults":
			u.ClearDefaults = null
			err = decodeField(name, v, &u.Defaults)
		case "alert_emails":
			u.ClearAlertEmails = null
			err = decodeField(name, v, &u.AlertEmails)
		case "expires_at":
			u.ClearExpiresAt = null
			err = decodeField(name, v, &u.ExpiresAt)
		case "rotation_policy":
			u.ClearRotationPolicy = null
			err = decodeField(name, v, &u.RotationPolicy)
		}
		if err != nil {
			return u, err
		}
	}
	return u, nil
}

func notNull(name string, null bool, decode func() error) error {
	if null {
		return domain.Invalid(name, "%s cannot be null", name)
	}
	return decode()
}

// decodeField decodes one field's value strictly; errors name the field by its path.
func decodeField(name string, raw json.RawMessage, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil {
		return nil
	}
	var typeErr *json.UnmarshalTypeError
	var timeErr *time.ParseError
	switch {
	case errors.As(err, &typeErr):
		param := name
		if typeErr.Field != "" {
			param += "." + typeErr.Field
		}
		return domain.Invalid(param, "%s must be %s, not %s", param, jsonKind(typeErr.Type.Kind().String()), typeErr.Value)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		param := name + "." + strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		return domain.Invalid(param, "unknown field %q", param)
	case errors.As(err, &timeErr):
		return domain.Invalid(name, "%s holds a date-time that is not ISO 8601 (RFC 3339)", name)
	}
	return domain.Invalid(name, "%s is not valid", name)
}
