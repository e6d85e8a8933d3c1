package domain

import "time"

// ReservationPrefix names reservation streams: reservation-<kind>-<name>. A reservation holds
// a unique name (a workspace slug, a user's e-mail) for one owner; the event store's
// optimistic concurrency makes the claim atomic.
const ReservationPrefix = "reservation"

// Reservation is who holds a name, if anyone.
type Reservation struct {
	Kind    string `json:"kind"`
	Name    string `json:"name"`
	OwnerID string `json:"owner_id"`
	Held    bool   `json:"held"`
}

type NameReserved struct {
	Kind    string    `json:"kind"`
	Name    string    `json:"name"`
	OwnerID string    `json:"owner_id"`
	At      time.Time `json:"at"`
}

type NameReleased struct {
	Kind    string    `json:"kind"`
	Name    string    `json:"name"`
	OwnerID string    `json:"owner_id"`
	At      time.Time `json:"at"`
}

func (NameReserved) EventType() string { return "NameReserved" }
func (NameReleased) EventType() string { return "NameReleased" }

func reservationModule() module {
	return module{prefix: ReservationPrefix, aggregate: func() Aggregate { return &Reservation{} },
		events: []Event{NameReserved{}, NameReleased{}}}
}

func (r *Reservation) Apply(e Event) {
	switch e := e.(type) {
	case NameReserved:
		*r = Reservation{Kind: e.Kind, Name: e.Name, OwnerID: e.OwnerID, Held: true}
	case NameReleased:
		r.Held = false
	}
}

// Reserve decides a claim on the name; param names the field in the conflict error.
func (r *Reservation) Reserve(kind, name, ownerID, param string, now time.Time) ([]Event, error) {
	if r.Held {
		if r.OwnerID == ownerID {
			return nil, nil
		}
		return nil, &Error{Code: CodeConflict, Param: param, Message: param + " \"" + name + "\" is taken"}
	}
	return []Event{NameReserved{Kind: kind, Name: name, OwnerID: ownerID, At: now}}, nil
}

// Release frees the name if ownerID holds it.
func (r *Reservation) Release(ownerID string, now time.Time) ([]Event, error) {
	if !r.Held || r.OwnerID != ownerID {
		return nil, nil
	}
	return []Event{NameReleased{Kind: r.Kind, Name: r.Name, OwnerID: ownerID, At: now}}, nil
}

// ReservationStream is the stream that holds name of kind. Stream names are at most 255 bytes,
// so a name too long to fit (a 254-character e-mail, a long slug) is named by its SHA-256;
// the reservation's events still carry the name itself.
func ReservationStream(kind, name string) string {
	stream := ReservationPrefix + "-" + kind + "-" + name
	if len(stream) <= maxStreamName {
		return stream
	}
	return ReservationPrefix + "-" + kind + "-sha256-" + HashKey(name)
}

// maxStreamName is the event store's limit on stream names.
const maxStreamName = 255
