package httpapi

import (
	"maps"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gorilla/mux"

	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/projections"
)

// notificationAnswer is a recorded notification as the admin API shows it.
type notificationAnswer struct {
	domain.Notification
	Object string `json:"object"`
}

func notificationView(n domain.Notification) notificationAnswer {
	if n.Recipients == nil {
		n.Recipients = []string{}
	}
	n.CreatedAt = n.CreatedAt.UTC().Truncate(time.Millisecond)
	// How each delivery went: to an address (email) or a webhook (by id).
	deliveries := make([]domain.NotificationDelivery, len(n.Deliveries))
	for i, d := range n.Deliveries {
		d.NextAttemptAt, d.DeliveredAt = millisPtr(d.NextAttemptAt), millisPtr(d.DeliveredAt)
		deliveries[i] = d
	}
	n.Deliveries, n.DeliveriesPlannedAt = deliveries, millisPtr(n.DeliveriesPlannedAt)
	if n.Status == "" {
		n.Status = domain.DeliveryPending // recorded before deliveries were
	}
	// The audit log's spelling of the resource type, whichever the notification recorded.
	if name, ok := projections.AuditResourceType(n.ResourceType); ok {
		n.ResourceType = name
	}
	// A budget alert's usage is money (or tokens), written as money is answered.
	if raw, ok := n.Data["current_usage"]; ok {
		if v, err := strconv.ParseFloat(raw, 64); err == nil {
			data := maps.Clone(n.Data)
			data["current_usage"] = strconv.FormatFloat(domain.RoundMoney(v), 'f', -1, 64)
			n.Data = data
		}
	}
	return notificationAnswer{Notification: n, Object: "notification"}
}

// notificationKinds are the kinds a notification can be of.
var notificationKinds = domain.NotificationKinds()

func millisPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	v := millis(*t)
	return &v
}

// notificationKind reads the kind filter: empty, or one of notificationKinds in any case.
func notificationKind(raw string) (string, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return "", nil
	}
	for _, k := range notificationKinds {
		if strings.EqualFold(k, raw) {
			return k, nil
		}
	}
	return "", domain.Invalid("kind", "kind must be one of %s (got %q)", strings.Join(notificationKinds, ", "), raw)
}

func (a *Admin) registerNotifications(r *mux.Router) {
	on := func(h handler) http.Handler { return a.route("notification", h) }

	r.Handle("/notifications", on(func(w http.ResponseWriter, r *http.Request) (int, any, error) {
		actor := actorFrom(r.Context())
		kind, err := notificationKind(r.URL.Query().Get("kind"))
		if err != nil {
			return 0, nil, err
		}
		var views []notificationAnswer
		found, err := a.reads().Notifications(r.Context(), actor, kind)
		if err != nil {
			return 0, nil, err
		}
		for _, n := range found {
			views = append(views, notificationView(n))
		}
		list, err := page(r, views)
		return http.StatusOK, list, err
	})).Methods(http.MethodGet)

	r.Handle("/notifications/{id}", on(func(w http.ResponseWriter, r *http.Request) (int, any, error) {
		if asOfRequested(r) {
			return asOf(a, w, r, notificationAsOf)
		}
		actor := actorFrom(r.Context())
		id := mux.Vars(r)["id"]
		if !isUUID(id) {
			return 0, nil, domain.Invalid("notificationId", "notificationId must be a UUID")
		}
		n, err := a.reads().Notification(r.Context(), actor, id)
		if err != nil {
			return 0, nil, err
		}
		return http.StatusOK, notificationView(n), nil
	})).Methods(http.MethodGet)
}
