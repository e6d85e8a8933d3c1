package domain

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every registered event survives JSON and back unchanged, with every field filled, so that a
// stored event reads back as it was written.
func TestEveryRegisteredEventRoundTrips(t *testing.T) {
	reg := NewRegistry()
	require.NotEmpty(t, reg.Types())
	for _, typ := range reg.Types() {
		t.Run(typ, func(t *testing.T) {
			ev, ok := reg.New(typ)
			require.True(t, ok)
			filled := fill(reflect.New(reflect.TypeOf(ev))).Elem().Interface().(Event)
			assert.Equal(t, typ, filled.EventType())
			data, err := json.Marshal(filled)
			require.NoError(t, err)
			back, err := reg.Decode(typ, data)
			require.NoError(t, err)
			assert.Equal(t, filled, back)
		})
	}
}

func TestRegistryRefusesUnknownTypesAndBadData(t *testing.T) {
	reg := NewRegistry()
	_, err := reg.Decode("NoSuchEvent", []byte(`{}`))
	require.ErrorContains(t, err, "unknown event type")
	_, err = reg.Decode("ApiKeyCreated", []byte(`{"key_id": 5}`))
	require.Error(t, err)
}

func TestEveryAggregateStreamPrefixIsKnown(t *testing.T) {
	reg := NewRegistry()
	for _, prefix := range []string{OrganisationPrefix, UserPrefix, InvitePrefix, WorkspacePrefix, APIKeyPrefix,
		RateLimitPolicyPrefix, UsageLimitPolicyPrefix, ReservationPrefix, BootstrapPrefix, NotificationPrefix,
		ModelPricingPrefix, LogExportPrefix, WebhookPrefix, PromptPrefix, PromptPartialPrefix, PromptLabelPrefix, PromptCollectionPrefix} {
		agg, ok := reg.NewAggregate(prefix + "-0b7ae0c4-7d4f-4a40-a1cc-3c8f1fd0c8b1")
		require.True(t, ok, prefix)
		require.NotNil(t, agg)
	}
	_, ok := reg.NewAggregate(AuditStream)
	assert.False(t, ok, "the audit stream has no aggregate")
}

// fill sets every exported field of the value v points to, recursively, to a non-zero value.
func fill(v reflect.Value) reflect.Value {
	e := v.Elem()
	switch e.Kind() {
	case reflect.Struct:
		if e.Type() == reflect.TypeOf(time.Time{}) {
			e.Set(reflect.ValueOf(time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)))
			return v
		}
		for i := 0; i < e.NumField(); i++ {
			f := e.Field(i)
			if !f.CanSet() || strings.Contains(string(e.Type().Field(i).Tag), `json:"-"`) {
				continue
			}
			p := reflect.New(f.Type())
			f.Set(fill(p).Elem())
		}
	case reflect.String:
		e.SetString("x")
	case reflect.Bool:
		e.SetBool(true)
	case reflect.Int, reflect.Int32, reflect.Int64:
		e.SetInt(7)
	case reflect.Uint, reflect.Uint64:
		e.SetUint(7)
	case reflect.Float64:
		e.SetFloat(1.5)
	case reflect.Pointer:
		p := reflect.New(e.Type().Elem())
		e.Set(fill(p))
	case reflect.Slice:
		s := reflect.MakeSlice(e.Type(), 1, 1)
		s.Index(0).Set(fill(reflect.New(e.Type().Elem())).Elem())
		e.Set(s)
	case reflect.Map:
		m := reflect.MakeMap(e.Type())
		k := fill(reflect.New(e.Type().Key())).Elem()
		val := reflect.New(e.Type().Elem())
		if e.Type().Elem().Kind() == reflect.Interface {
			val.Elem().Set(reflect.ValueOf("v"))
		} else {
			val = fill(val)
		}
		m.SetMapIndex(k, val.Elem())
		e.Set(m)
	}
	return v
}
