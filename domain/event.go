package domain

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
)

// Event is a fact about the control plane: a plain past-tense struct. Its EventType is stored
// with it and is stored data: never rename one; add a new type (or schema version) instead.
type Event interface {
	EventType() string
}

// Aggregate is the state of one stream, folded from its events.
type Aggregate interface {
	Apply(Event)
}

// Registry knows every event type and which aggregate owns each stream prefix. It is a value
// built by NewRegistry, not a package global, so tests can build their own.
type Registry struct {
	events     map[string]reflect.Type
	aggregates map[string]func() Aggregate // by stream prefix, e.g. "apikey"
}

// NewRegistry returns the registry of every event and aggregate of the control plane.
func NewRegistry() *Registry {
	r := &Registry{events: map[string]reflect.Type{}, aggregates: map[string]func() Aggregate{}}
	for _, m := range modules() {
		if m.aggregate != nil {
			r.aggregates[m.prefix] = m.aggregate
		}
		for _, ev := range m.events {
			r.register(ev)
		}
	}
	return r
}

// module is one aggregate's contribution to the registry; each aggregate's file declares its
// own, and modules lists them.
type module struct {
	prefix    string
	aggregate func() Aggregate
	events    []Event
}

func (r *Registry) register(ev Event) {
	t := reflect.TypeOf(ev)
	if t.Kind() == reflect.Pointer {
		panic(fmt.Sprintf("domain: register %s as a value, not a pointer", t))
	}
	if prev, dup := r.events[ev.EventType()]; dup {
		panic(fmt.Sprintf("domain: event type %q registered by %s and %s", ev.EventType(), prev, t))
	}
	r.events[ev.EventType()] = t
}

// Types lists every registered event type, sorted.
func (r *Registry) Types() []string {
	out := make([]string, 0, len(r.events))
	for t := range r.events {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}

// New returns a zero value of the event type typ.
func (r *Registry) New(typ string) (Event, bool) {
	t, ok := r.events[typ]
	if !ok {
		return nil, false
	}
	return reflect.New(t).Elem().Interface().(Event), true
}

// Decode turns stored data back into its event.
func (r *Registry) Decode(typ string, data []byte) (Event, error) {
	t, ok := r.events[typ]
	if !ok {
		return nil, fmt.Errorf("domain: unknown event type %q", typ)
	}
	p := reflect.New(t)
	if err := json.Unmarshal(data, p.Interface()); err != nil {
		return nil, fmt.Errorf("domain: decode %s: %w", typ, err)
	}
	return p.Elem().Interface().(Event), nil
}

// StreamPrefix returns the aggregate part of a stream name ("apikey" of "apikey-<uuid>").
func StreamPrefix(stream string) string {
	prefix, _, _ := strings.Cut(stream, "-")
	return prefix
}

// NewAggregate returns an empty aggregate for stream, or false when no aggregate owns it
// (reservation and audit streams).
func (r *Registry) NewAggregate(stream string) (Aggregate, bool) {
	f, ok := r.aggregates[StreamPrefix(stream)]
	if !ok {
		return nil, false
	}
	return f(), true
}

// Stream names: <aggregate>-<id>.
func Stream(prefix, id string) string { return prefix + "-" + id }
