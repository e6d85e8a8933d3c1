package openai

import (
	"encoding/json"
	"errors"
	"strings"

	"github.com/causeway/causeway/domain"
)

// A request type is read by a list of fields, in the validator's order: ParseX runs them all
// over the body, and an override runs again only those whose members it replaced, on the same
// code, so that an overridden request holds exactly what parsing its new body would give.

// field reads one top-level member, or a few checked together (stream and stream_options,
// tools and tool_choice), into a request of type R. A read sets every field it owns, to the
// zero value (or the default) when its members are absent, so that it can run again on a
// request read before.
type field[R any] struct {
	keys []string
	read func(o obj, r *R)
}

func keys(k ...string) []string { return k }

// readFields runs fields over o, all of them when only is nil, else those that read a key of
// only.
func readFields[R any](o obj, r *R, fields []field[R], only map[string]any) {
	for _, f := range fields {
		if only == nil || readsAny(f.keys, only) {
			f.read(o, r)
		}
	}
}

func readsAny(keys []string, set map[string]any) bool {
	for _, k := range keys {
		if _, ok := set[k]; ok {
			return true
		}
	}
	return false
}

func knownKeys[R any](fields []field[R]) map[string]bool {
	out := map[string]bool{}
	for _, f := range fields {
		for _, k := range f.keys {
			out[k] = true
		}
	}
	return out
}

// Member is a top-level member of a body that its model has no field for, as sent: a
// provider's own parameter, or one OpenAI added after this package was written.
type Member struct {
	Name  string
	Value json.RawMessage
}

// Members are the members a model has no field for, in the body's order.
type Members []Member

// Get returns the value of the member called name.
func (ms Members) Get(name string) (json.RawMessage, bool) {
	for _, m := range ms {
		if m.Name == name {
			return m.Value, true
		}
	}
	return nil, false
}

// extra lists the members that no field reads; nil when there are none.
func extra(ms []member, known map[string]bool) Members {
	var out Members
	for _, m := range ms {
		if !known[string(m.key)] {
			out = append(out, Member{Name: string(m.key), Value: m.val})
		}
	}
	return out
}

// parsed is what every request type keeps of its body besides its fields.
type parsed struct {
	raw     *json.RawMessage
	members *[]member
	extra   *Members
}

// override applies overrides to a parsed request r: its body is spliced as WithOverrides does,
// and only the fields that read an overridden key run again, on the new members. A value the
// request's rules refuse is refused, its param under override_params.
func override[R any](r *R, p parsed, overrides map[string]any, fields []field[R], known map[string]bool) error {
	values, err := encodeOverrides(overrides)
	if err != nil {
		return err
	}
	ms := *p.members
	if ms == nil {
		// A request built in Go rather than parsed: its body is split now.
		if kindOf(*p.raw) != kindObject || !json.Valid(*p.raw) {
			return domain.Invalid("", "the request body must be a JSON object")
		}
		ms = members(*p.raw)
	}
	body, spliced := splice(*p.raw, ms, values, true)
	v := &validator{}
	readFields(indexed(v, "", spliced), r, fields, overrides)
	if v.err != nil {
		return overrideRefused(v.err)
	}
	*p.raw, *p.members = body, spliced
	for k := range overrides {
		if !known[k] {
			*p.extra = extra(spliced, known)
			break
		}
	}
	return nil
}

// overrideRefused names the config's override_params as the source of a value the validator
// refused: "override_params.temperature must be between 0 and 2 (got 5)".
func overrideRefused(err error) error {
	var de *domain.Error
	if !errors.As(err, &de) {
		return err
	}
	msg := "override_params: " + de.Message
	if de.Param != "" && strings.HasPrefix(de.Message, de.Param) {
		msg = "override_params." + de.Message
	}
	return &domain.Error{Code: de.Code, Param: "override_params." + de.Param, Message: msg, Err: de}
}
