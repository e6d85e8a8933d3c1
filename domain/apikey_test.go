package domain

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var keyT0 = time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)

const (
	apiKeyTestID = "0b7ae0c4-7d4f-4a40-a1cc-3c8f1fd0c8b1"
	plainOld     = "cw-0123456789abcdefghijklmnopqrstuvwxyzABCDEFG"
	plainNew     = "cw-ZYXWVUTSRQPONMLKJIHGFEDCBAzyxwvutsrqponmlkjih"
)

func keyRef[T any](v T) *T { return &v }

// keyCase is one given / when / then of the key aggregate: the events already in the stream,
// the decision, and the events it must decide or the error (code and param) it must give.
type keyCase struct {
	name  string
	given []Event
	when  func(k *APIKey) ([]Event, error)
	then  []Event
	code  Code
	param string
}

func runKeyCases(t *testing.T, cases []keyCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			k := &APIKey{}
			for _, e := range tc.given {
				k.Apply(e)
			}
			got, err := tc.when(k)
			if tc.code != "" {
				require.Error(t, err)
				var appErr *Error
				require.ErrorAs(t, err, &appErr)
				assert.Equal(t, tc.code, appErr.Code, appErr.Message)
				assert.Equal(t, tc.param, appErr.Param, appErr.Message)
				assert.NotEmpty(t, appErr.Message)
				assert.Empty(t, got)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.then, got)
		})
	}
}

// foldKey applies events to a fresh key.
func foldKey(events ...Event) *APIKey {
	k := &APIKey{}
	for _, e := range events {
		k.Apply(e)
	}
	return k
}

func keyCreated(mod ...func(*APIKeyCreated)) APIKeyCreated {
	e := APIKeyCreated{KeyID: apiKeyTestID, Name: "ci", Type: KeyWorkspaceService, OrganisationID: "org",
		WorkspaceID: "ws", Scopes: []string{"completions.write"}, Hash: HashKey(plainOld), Masked: MaskKey(plainOld), At: keyT0}
	for _, m := range mod {
		m(&e)
	}
	return e
}

func validKeyCreate() CreateAPIKey {
	return CreateAPIKey{KeyID: apiKeyTestID, Key: plainOld, Name: "ci", Type: KeyWorkspaceService, OrganisationID: "org",
		WorkspaceID: "ws", Scopes: []string{"completions.write"}}
}

func TestCreateAPIKey(t *testing.T) {
	create := func(mod func(*CreateAPIKey)) func(k *APIKey) ([]Event, error) {
		return func(k *APIKey) ([]Event, error) {
			c := validKeyCreate()
			mod(&c)
			return k.Create(c, keyT0)
		}
	}
	invalid := func(name string, mod func(*CreateAPIKey), param string) keyCase {
		return keyCase{name: name, when: create(mod), code: CodeInvalid, param: param}
	}
	accepted := func(name string, mod func(*CreateAPIKey)) keyCase {
		c := validKeyCreate()
		mod(&c)
		k := &APIKey{}
		want, err := k.Create(c, keyT0)
		if err != nil {
			panic(name + ": " + err.Error())
		}
		return keyCase{name: name, when: create(mod), then: want}
	}
	usage := func(u UsageLimits) func(*CreateAPIKey) {
		return func(c *CreateAPIKey) { c.UsageLimits = &u }
	}
	rate := func(r RateLimit) func(*CreateAPIKey) {
		return func(c *CreateAPIKey) { c.RateLimits = []RateLimit{r} }
	}
	policy := func(p RotationPolicy) func(*CreateAPIKey) {
		return func(c *CreateAPIKey) { c.RotationPolicy = &p }
	}
	monthly, weekly := keyRef(RotateMonthly), keyRef(RotateWeekly)

	runKeyCases(t, []keyCase{
		{name: "a valid key: only the hash and the mask are stored", when: create(func(*CreateAPIKey) {}),
			then: []Event{keyCreated()}},
		{name: "a key that exists already", given: []Event{keyCreated()}, when: create(func(*CreateAPIKey) {}), code: CodeConflict},
		accepted("name at 255", func(c *CreateAPIKey) { c.Name = strings.Repeat("n", 255) }),
		invalid("name at 256", func(c *CreateAPIKey) { c.Name = strings.Repeat("n", 256) }, "name"),
		invalid("name blank", func(c *CreateAPIKey) { c.Name = "  " }, "name"),
		invalid("unknown type", func(c *CreateAPIKey) { c.Type = "organisation-user" }, "type"),
		invalid("workspace key without workspace", func(c *CreateAPIKey) { c.WorkspaceID = "" }, "workspace_id"),
		invalid("user key without user", func(c *CreateAPIKey) { c.Type = KeyWorkspaceUser }, "user_id"),
		invalid("no scopes", func(c *CreateAPIKey) { c.Scopes = nil }, "scopes"),
		invalid("unknown scope", func(c *CreateAPIKey) { c.Scopes = []string{"completions.write", "logs.burn"} }, "scopes[1]"),
		invalid("organisation scope on a workspace key", func(c *CreateAPIKey) { c.Scopes = []string{"organisation_users.create"} }, "scopes[0]"),
		accepted("organisation scope on an organisation key", func(c *CreateAPIKey) {
			c.Type, c.WorkspaceID, c.Scopes = KeyOrganisationService, "", []string{"organisation_users.create"}
		}),
		accepted("rate limit value 1", rate(RateLimit{Type: LimitRequests, Unit: "rpm", Value: 1})),
		accepted("rate limit value 1e12 in tokens per week", rate(RateLimit{Type: LimitTokens, Unit: "rpw", Value: 1e12})),
		invalid("rate limit value 0", rate(RateLimit{Type: LimitRequests, Unit: "rpm", Value: 0}), "rate_limits[0].value"),
		invalid("rate limit value 1e12+1", rate(RateLimit{Type: LimitRequests, Unit: "rpm", Value: 1e12 + 1}), "rate_limits[0].value"),
		invalid("rate limit value fractional", rate(RateLimit{Type: LimitRequests, Unit: "rpm", Value: 1.5}), "rate_limits[0].value"),
		invalid("rate limit unit rps", rate(RateLimit{Type: LimitRequests, Unit: "rps", Value: 5}), "rate_limits[0].unit"),
		invalid("rate limit type cost", rate(RateLimit{Type: "cost", Unit: "rpm", Value: 5}), "rate_limits[0].type"),
		accepted("credit limit 1", usage(UsageLimits{Type: UsageCost, CreditLimit: keyRef(1.0)})),
		invalid("credit limit 0.99", usage(UsageLimits{Type: UsageCost, CreditLimit: keyRef(0.99)}), "usage_limits.credit_limit"),
		invalid("credit limit missing", usage(UsageLimits{Type: UsageCost}), "usage_limits.credit_limit"),
		invalid("usage type requests", usage(UsageLimits{Type: "requests", CreditLimit: keyRef(5.0)}), "usage_limits.type"),
		accepted("alert threshold 1", usage(UsageLimits{Type: UsageTokens, CreditLimit: keyRef(5.0), AlertThreshold: keyRef(1.0)})),
		invalid("alert threshold 0", usage(UsageLimits{Type: UsageTokens, CreditLimit: keyRef(5.0), AlertThreshold: keyRef(0.0)}), "usage_limits.alert_threshold"),
		invalid("alert threshold at the credit limit", usage(UsageLimits{Type: UsageTokens, CreditLimit: keyRef(5.0), AlertThreshold: keyRef(5.0)}), "usage_limits.alert_threshold"),
		accepted("periodic_reset weekly", usage(UsageLimits{Type: UsageCost, CreditLimit: keyRef(5.0), PeriodicReset: weekly})),
		accepted("periodic_reset monthly", usage(UsageLimits{Type: UsageCost, CreditLimit: keyRef(5.0), PeriodicReset: monthly})),
		invalid("periodic_reset daily", usage(UsageLimits{Type: UsageCost, CreditLimit: keyRef(5.0), PeriodicReset: keyRef("daily")}), "usage_limits.periodic_reset"),
		invalid("periodic_reset_days 0", usage(UsageLimits{Type: UsageCost, CreditLimit: keyRef(5.0), PeriodicResetDays: keyRef(0)}), "usage_limits.periodic_reset_days"),
		accepted("periodic_reset_days 1", usage(UsageLimits{Type: UsageCost, CreditLimit: keyRef(5.0), PeriodicResetDays: keyRef(1)})),
		accepted("periodic_reset_days 365", usage(UsageLimits{Type: UsageCost, CreditLimit: keyRef(5.0), PeriodicResetDays: keyRef(365)})),
		invalid("periodic_reset_days 366", usage(UsageLimits{Type: UsageCost, CreditLimit: keyRef(5.0), PeriodicResetDays: keyRef(366)}), "usage_limits.periodic_reset_days"),
		invalid("both kinds of periodic reset", usage(UsageLimits{Type: UsageCost, CreditLimit: keyRef(5.0), PeriodicReset: monthly, PeriodicResetDays: keyRef(30)}), "usage_limits.periodic_reset_days"),
		invalid("next usage reset in the past", usage(UsageLimits{Type: UsageCost, CreditLimit: keyRef(5.0), PeriodicReset: monthly, NextUsageResetAt: keyRef(keyT0)}), "usage_limits.next_usage_reset_at"),
		invalid("next usage reset without a periodic reset", usage(UsageLimits{Type: UsageCost, CreditLimit: keyRef(5.0), NextUsageResetAt: keyRef(keyT0.Add(time.Hour))}), "usage_limits.next_usage_reset_at"),
		invalid("alert e-mail without a domain", func(c *CreateAPIKey) { c.AlertEmails = []string{"a@b.c", "ops"} }, "alert_emails[1]"),
		invalid("expires_at now", func(c *CreateAPIKey) { c.ExpiresAt = keyRef(keyT0) }, "expires_at"),
		invalid("expires_at in the past", func(c *CreateAPIKey) { c.ExpiresAt = keyRef(keyT0.Add(-time.Second)) }, "expires_at"),
		accepted("expires_at a second ahead", func(c *CreateAPIKey) { c.ExpiresAt = keyRef(keyT0.Add(time.Second)) }),
		invalid("config_id at 256", func(c *CreateAPIKey) { c.Defaults = &KeyDefaults{ConfigID: keyRef(strings.Repeat("c", 256))} }, "defaults.config_id"),
		invalid("key_transition_period_ms 1799999", policy(RotationPolicy{RotationPeriod: monthly, KeyTransitionPeriodMS: keyRef(int64(1799999))}), "rotation_policy.key_transition_period_ms"),
		accepted("key_transition_period_ms 1800000", policy(RotationPolicy{RotationPeriod: monthly, KeyTransitionPeriodMS: keyRef(int64(1800000))})),
		accepted("transition just under a week", policy(RotationPolicy{RotationPeriod: weekly, KeyTransitionPeriodMS: keyRef(int64(7*24*3600*1000 - 1))})),
		invalid("transition of a whole week", policy(RotationPolicy{RotationPeriod: weekly, KeyTransitionPeriodMS: keyRef(int64(7 * 24 * 3600 * 1000))}), "rotation_policy.key_transition_period_ms"),
		invalid("rotation period daily", policy(RotationPolicy{RotationPeriod: keyRef("daily")}), "rotation_policy.rotation_period"),
		invalid("rotation policy with neither period nor date", policy(RotationPolicy{KeyTransitionPeriodMS: keyRef(int64(1800000))}), "rotation_policy"),
		invalid("next rotation in the past", policy(RotationPolicy{NextRotationAt: keyRef(keyT0.Add(-time.Hour))}), "rotation_policy.next_rotation_at"),
		accepted("one rotation at a date", policy(RotationPolicy{NextRotationAt: keyRef(keyT0.Add(time.Hour))})),
	})
}

func TestCreateComputesTheFirstResetAndRotation(t *testing.T) {
	c := validKeyCreate()
	c.UsageLimits = &UsageLimits{Type: UsageCost, CreditLimit: keyRef(5.0), PeriodicResetDays: keyRef(30)}
	c.RotationPolicy = &RotationPolicy{RotationPeriod: keyRef(RotateMonthly)}
	evs, err := (&APIKey{}).Create(c, keyT0)
	require.NoError(t, err)
	e := evs[0].(APIKeyCreated)
	assert.Equal(t, keyT0.AddDate(0, 0, 30), *e.UsageLimits.NextUsageResetAt)
	assert.Equal(t, keyT0.AddDate(0, 1, 0), *e.RotationPolicy.NextRotationAt)
	assert.Nil(t, c.UsageLimits.NextUsageResetAt, "the caller's limits are not changed")
	assert.NotContains(t, e.Hash+e.Masked, plainOld)
	assert.Equal(t, "cw-0123****DEFG", e.Masked)
}

func TestUpdateAPIKey(t *testing.T) {
	update := func(u UpdateAPIKey) func(k *APIKey) ([]Event, error) {
		return func(k *APIKey) ([]Event, error) { return k.Update(u, keyT0.Add(time.Hour)) }
	}
	at := keyT0.Add(time.Hour)
	limited := keyCreated(func(e *APIKeyCreated) { e.UsageLimits = &UsageLimits{Type: UsageCost, CreditLimit: keyRef(10.0)} })
	exhausted := APIKeyExhausted{KeyID: apiKeyTestID, Usage: 10.5, At: keyT0}
	raised := &UsageLimits{Type: UsageCost, CreditLimit: keyRef(20.0)}
	alerting := keyCreated(func(e *APIKeyCreated) {
		e.UsageLimits = &UsageLimits{Type: UsageCost, CreditLimit: keyRef(10.0), AlertThreshold: keyRef(8.0)}
	})
	thresholdReached := APIKeyUsageThresholdReached{KeyID: apiKeyTestID, Usage: 8.5, AlertThreshold: 8, At: keyT0}
	higherThreshold := &UsageLimits{Type: UsageCost, CreditLimit: keyRef(10.0), AlertThreshold: keyRef(9.0)}
	lowerThreshold := &UsageLimits{Type: UsageCost, CreditLimit: keyRef(10.0), AlertThreshold: keyRef(7.0)}

	runKeyCases(t, []keyCase{
		{name: "unknown key", when: update(UpdateAPIKey{Name: keyRef("x")}), code: CodeNotFound},
		{name: "deleted key", given: []Event{keyCreated(), APIKeyDeleted{KeyID: apiKeyTestID, At: keyT0}},
			when: update(UpdateAPIKey{Name: keyRef("x")}), code: CodeNotFound},
		{name: "nothing to update", given: []Event{keyCreated()}, when: update(UpdateAPIKey{}), code: CodeInvalid},
		{name: "rename", given: []Event{keyCreated()}, when: update(UpdateAPIKey{Name: keyRef("prod")}),
			then: []Event{APIKeyUpdated{KeyID: apiKeyTestID, Name: keyRef("prod"), At: at}}},
		{name: "name at 256", given: []Event{keyCreated()}, when: update(UpdateAPIKey{Name: keyRef(strings.Repeat("n", 256))}),
			code: CodeInvalid, param: "name"},
		{name: "organisation scope on a workspace key", given: []Event{keyCreated()},
			when: update(UpdateAPIKey{Scopes: []string{"workspaces.create"}}), code: CodeInvalid, param: "scopes[0]"},
		{name: "no scopes at all", given: []Event{keyCreated()}, when: update(UpdateAPIKey{Scopes: []string{}}),
			code: CodeInvalid, param: "scopes"},
		{name: "rate limits null clears them", given: []Event{keyCreated()}, when: update(UpdateAPIKey{ClearRateLimits: true}),
			then: []Event{APIKeyUpdated{KeyID: apiKeyTestID, ClearRateLimits: true, At: at}}},
		{name: "rate limits empty clears them", given: []Event{keyCreated()}, when: update(UpdateAPIKey{RateLimits: []RateLimit{}}),
			then: []Event{APIKeyUpdated{KeyID: apiKeyTestID, ClearRateLimits: true, At: at}}},
		{name: "rate limit value 0", given: []Event{keyCreated()},
			when: update(UpdateAPIKey{RateLimits: []RateLimit{{Type: LimitRequests, Unit: "rph", Value: 0}}}), code: CodeInvalid, param: "rate_limits[0].value"},
		{name: "usage limits raised: the exhausted alert is reset", given: []Event{limited, exhausted}, when: update(UpdateAPIKey{UsageLimits: raised}),
			then: []Event{APIKeyUpdated{KeyID: apiKeyTestID, UsageLimits: raised, At: at},
				APIKeyUsageAlertsReset{KeyID: apiKeyTestID, Exhausted: true, At: at}}},
		{name: "usage limits raised: both alerts are reset", given: []Event{alerting, thresholdReached, exhausted},
			when: update(UpdateAPIKey{UsageLimits: raised}),
			then: []Event{APIKeyUpdated{KeyID: apiKeyTestID, UsageLimits: raised, At: at},
				APIKeyUsageAlertsReset{KeyID: apiKeyTestID, Threshold: true, Exhausted: true, At: at}}},
		{name: "usage limits raised without alerts sent", given: []Event{limited}, when: update(UpdateAPIKey{UsageLimits: raised}),
			then: []Event{APIKeyUpdated{KeyID: apiKeyTestID, UsageLimits: raised, At: at}}},
		{name: "threshold raised: the threshold alert is reset", given: []Event{alerting, thresholdReached},
			when: update(UpdateAPIKey{UsageLimits: higherThreshold}),
			then: []Event{APIKeyUpdated{KeyID: apiKeyTestID, UsageLimits: higherThreshold, At: at},
				APIKeyUsageAlertsReset{KeyID: apiKeyTestID, Threshold: true, At: at}}},
		{name: "threshold removed: the threshold alert is reset", given: []Event{alerting, thresholdReached},
			when: update(UpdateAPIKey{UsageLimits: limited.UsageLimits}),
			then: []Event{APIKeyUpdated{KeyID: apiKeyTestID, UsageLimits: limited.UsageLimits, At: at},
				APIKeyUsageAlertsReset{KeyID: apiKeyTestID, Threshold: true, At: at}}},
		{name: "threshold lowered: nothing is reset", given: []Event{alerting, thresholdReached},
			when: update(UpdateAPIKey{UsageLimits: lowerThreshold}),
			then: []Event{APIKeyUpdated{KeyID: apiKeyTestID, UsageLimits: lowerThreshold, At: at}}},
		{name: "usage limits removed: both alerts are reset", given: []Event{alerting, thresholdReached, exhausted},
			when: update(UpdateAPIKey{ClearUsageLimits: true}),
			then: []Event{APIKeyUpdated{KeyID: apiKeyTestID, ClearUsageLimits: true, At: at},
				APIKeyUsageAlertsReset{KeyID: apiKeyTestID, Threshold: true, Exhausted: true, At: at}}},
		{name: "periodic_reset_days 366", given: []Event{keyCreated()},
			when: update(UpdateAPIKey{UsageLimits: &UsageLimits{Type: UsageCost, CreditLimit: keyRef(5.0), PeriodicResetDays: keyRef(366)}}),
			code: CodeInvalid, param: "usage_limits.periodic_reset_days"},
		{name: "reset usage alone", given: []Event{limited, exhausted}, when: update(UpdateAPIKey{ResetUsage: true}),
			then: []Event{APIKeyUsageReset{KeyID: apiKeyTestID, At: at}}},
		{name: "rename and reset usage", given: []Event{limited}, when: update(UpdateAPIKey{Name: keyRef("b"), ResetUsage: true}),
			then: []Event{APIKeyUpdated{KeyID: apiKeyTestID, Name: keyRef("b"), At: at}, APIKeyUsageReset{KeyID: apiKeyTestID, At: at}}},
		{name: "alert e-mails emptied", given: []Event{keyCreated()}, when: update(UpdateAPIKey{AlertEmails: []string{}}),
			then: []Event{APIKeyUpdated{KeyID: apiKeyTestID, ClearAlertEmails: true, At: at}}},
		{name: "bad alert e-mail", given: []Event{keyCreated()}, when: update(UpdateAPIKey{AlertEmails: []string{"nope"}}),
			code: CodeInvalid, param: "alert_emails[0]"},
		{name: "defaults null", given: []Event{keyCreated()}, when: update(UpdateAPIKey{ClearDefaults: true}),
			then: []Event{APIKeyUpdated{KeyID: apiKeyTestID, ClearDefaults: true, At: at}}},
		{name: "expires_at null", given: []Event{keyCreated()}, when: update(UpdateAPIKey{ClearExpiresAt: true}),
			then: []Event{APIKeyUpdated{KeyID: apiKeyTestID, ClearExpiresAt: true, At: at}}},
		{name: "expires_at in the past", given: []Event{keyCreated()}, when: update(UpdateAPIKey{ExpiresAt: keyRef(keyT0)}),
			code: CodeInvalid, param: "expires_at"},
		{name: "rotation policy null", given: []Event{keyCreated()}, when: update(UpdateAPIKey{ClearRotationPolicy: true}),
			then: []Event{APIKeyUpdated{KeyID: apiKeyTestID, ClearRotationPolicy: true, At: at}}},
		{name: "rotation policy set: its first rotation is computed", given: []Event{keyCreated()},
			when: update(UpdateAPIKey{RotationPolicy: &RotationPolicy{RotationPeriod: keyRef(RotateWeekly)}}),
			then: []Event{APIKeyUpdated{KeyID: apiKeyTestID, At: at,
				RotationPolicy: &RotationPolicy{RotationPeriod: keyRef(RotateWeekly), NextRotationAt: keyRef(at.AddDate(0, 0, 7))}}}},
		{name: "rotation transition 1799999", given: []Event{keyCreated()},
			when: update(UpdateAPIKey{RotationPolicy: &RotationPolicy{RotationPeriod: keyRef(RotateWeekly), KeyTransitionPeriodMS: keyRef(int64(1799999))}}),
			code: CodeInvalid, param: "rotation_policy.key_transition_period_ms"},
	})
}

func TestApplyingUpdates(t *testing.T) {
	limited := keyCreated(func(e *APIKeyCreated) {
		e.UsageLimits = &UsageLimits{Type: UsageCost, CreditLimit: keyRef(10.0)}
		e.AlertEmails = []string{"ops@example.com"}
		e.ExpiresAt = keyRef(keyT0.Add(time.Hour))
	})
	exhausted := APIKeyExhausted{KeyID: apiKeyTestID, Usage: 10.5, At: keyT0}

	k := foldKey(limited, exhausted)
	require.Equal(t, KeyExhausted, k.Status)
	assert.InDelta(t, 10.5, k.CurrentUsage, 1e-9, "usage may be fractional")
	k.Apply(APIKeyUpdated{KeyID: apiKeyTestID, UsageLimits: &UsageLimits{Type: UsageCost, CreditLimit: keyRef(10.25)}, At: keyT0})
	assert.Equal(t, KeyExhausted, k.Status, "a limit still below the usage keeps the key exhausted")
	k.Apply(APIKeyUpdated{KeyID: apiKeyTestID, UsageLimits: &UsageLimits{Type: UsageCost, CreditLimit: keyRef(20.0)}, At: keyT0})
	assert.Equal(t, KeyActive, k.Status, "raising the credit limit reactivates the key")

	k = foldKey(limited, APIKeyUsageThresholdReached{KeyID: apiKeyTestID, Usage: 8, AlertThreshold: 8, At: keyT0}, exhausted)
	assert.True(t, k.ThresholdAlertSent && k.ExhaustedAlertSent)
	k.Apply(APIKeyUsageAlertsReset{KeyID: apiKeyTestID, Threshold: true, At: keyT0})
	assert.False(t, k.ThresholdAlertSent)
	assert.True(t, k.ExhaustedAlertSent, "only the alerts named are reset")

	k = foldKey(limited, APIKeyUsageThresholdReached{KeyID: apiKeyTestID, Usage: 8, AlertThreshold: 8, At: keyT0}, exhausted,
		APIKeyUsageReset{KeyID: apiKeyTestID, At: keyT0.Add(time.Minute)})
	assert.Equal(t, KeyActive, k.Status)
	assert.Zero(t, k.CurrentUsage)
	assert.False(t, k.ThresholdAlertSent || k.ExhaustedAlertSent, "a new period sends its alerts again")
	assert.Equal(t, keyT0.Add(time.Minute), *k.LastResetAt)

	k = foldKey(limited, APIKeyUpdated{KeyID: apiKeyTestID, ClearAlertEmails: true, ClearUsageLimits: true, At: keyT0})
	assert.Nil(t, k.AlertEmails)
	assert.Nil(t, k.UsageLimits)

	k = foldKey(limited, APIKeyExpired{KeyID: apiKeyTestID, At: keyT0.Add(2 * time.Hour)})
	assert.Equal(t, KeyExpired, k.Status)
	k.Apply(APIKeyUpdated{KeyID: apiKeyTestID, ExpiresAt: keyRef(keyT0.Add(48 * time.Hour)), At: keyT0.Add(3 * time.Hour)})
	assert.Equal(t, KeyActive, k.Status, "a new expiry time in the future revives an expired key")

	// The copy a read model handed out keeps its policy when the key rotates.
	withPolicy := foldKey(keyCreated(func(e *APIKeyCreated) {
		e.RotationPolicy = &RotationPolicy{RotationPeriod: keyRef(RotateMonthly), NextRotationAt: keyRef(keyT0.AddDate(0, 1, 0))}
	}))
	copied := *withPolicy
	withPolicy.Apply(APIKeyRotated{KeyID: apiKeyTestID, Hash: HashKey(plainNew), PreviousValidUntil: keyT0.Add(time.Hour),
		NextRotationAt: keyRef(keyT0.AddDate(0, 2, 0)), Scheduled: true, At: keyT0})
	assert.Equal(t, keyT0.AddDate(0, 1, 0), *copied.RotationPolicy.NextRotationAt)
	assert.Equal(t, keyT0.AddDate(0, 2, 0), *withPolicy.RotationPolicy.NextRotationAt)
}

func TestRotateAPIKey(t *testing.T) {
	rotate := func(transition time.Duration) func(k *APIKey) ([]Event, error) {
		return func(k *APIKey) ([]Event, error) { return k.Rotate(plainNew, transition, false, keyT0) }
	}
	rotated := func(transition time.Duration, next *time.Time) APIKeyRotated {
		return APIKeyRotated{KeyID: apiKeyTestID, Hash: HashKey(plainNew), Masked: MaskKey(plainNew),
			PreviousValidUntil: keyT0.Add(transition), NextRotationAt: next, At: keyT0}
	}
	withPolicy := keyCreated(func(e *APIKeyCreated) {
		e.RotationPolicy = &RotationPolicy{RotationPeriod: keyRef(RotateMonthly), KeyTransitionPeriodMS: keyRef(int64(time.Hour / time.Millisecond)),
			NextRotationAt: keyRef(keyT0.AddDate(0, 1, 0))}
	})
	runKeyCases(t, []keyCase{
		{name: "default transition of 30 minutes", given: []Event{keyCreated()}, when: rotate(0),
			then: []Event{rotated(30*time.Minute, nil)}},
		{name: "transition at 30 minutes", given: []Event{keyCreated()}, when: rotate(30 * time.Minute),
			then: []Event{rotated(30*time.Minute, nil)}},
		{name: "transition a millisecond short", given: []Event{keyCreated()}, when: rotate(30*time.Minute - time.Millisecond),
			code: CodeInvalid, param: "key_transition_period_ms"},
		{name: "the policy's transition, and the schedule restarts", given: []Event{withPolicy}, when: rotate(0),
			then: []Event{rotated(time.Hour, keyRef(keyT0.AddDate(0, 1, 0)))}},
		{name: "expired key", given: []Event{keyCreated(), APIKeyExpired{KeyID: apiKeyTestID, At: keyT0}}, when: rotate(0), code: CodeConflict},
		{name: "key past its expiry time", given: []Event{keyCreated(func(e *APIKeyCreated) { e.ExpiresAt = keyRef(keyT0) })},
			when: rotate(0), code: CodeConflict},
		{name: "deleted key", given: []Event{keyCreated(), APIKeyDeleted{KeyID: apiKeyTestID, At: keyT0}}, when: rotate(0), code: CodeNotFound},
	})
}

func TestRotateOnSchedule(t *testing.T) {
	due := keyT0.AddDate(0, 1, 0)
	after := due.Add(time.Minute)
	withPolicy := keyCreated(func(e *APIKeyCreated) {
		e.RotationPolicy = &RotationPolicy{RotationPeriod: keyRef(RotateMonthly), NextRotationAt: keyRef(due)}
	})
	once := keyCreated(func(e *APIKeyCreated) { e.RotationPolicy = &RotationPolicy{NextRotationAt: keyRef(due)} })
	schedule := func(dueAt, now time.Time) func(k *APIKey) ([]Event, error) {
		return func(k *APIKey) ([]Event, error) { return k.RotateOnSchedule(plainNew, dueAt, now) }
	}
	runKeyCases(t, []keyCase{
		{name: "due", given: []Event{withPolicy}, when: schedule(due, after),
			then: []Event{APIKeyRotated{KeyID: apiKeyTestID, Hash: HashKey(plainNew), Masked: MaskKey(plainNew),
				PreviousValidUntil: after.Add(MinKeyTransition), NextRotationAt: keyRef(after.AddDate(0, 1, 0)), Scheduled: true, At: after}}},
		{name: "not yet due", given: []Event{withPolicy}, when: schedule(due, due.Add(-time.Second)), then: nil},
		{name: "the schedule moved on", given: []Event{withPolicy}, when: schedule(due.Add(-time.Hour), after), then: nil},
		{name: "no policy", given: []Event{keyCreated()}, when: schedule(due, after), then: nil},
		{name: "expired key", given: []Event{withPolicy, APIKeyExpired{KeyID: apiKeyTestID, At: keyT0}}, when: schedule(due, after), then: nil},
	})

	k := foldKey(once)
	evs, err := k.RotateOnSchedule(plainNew, due, after)
	require.NoError(t, err)
	require.Len(t, evs, 1)
	k.Apply(evs[0])
	assert.Nil(t, k.RotationPolicy.NextRotationAt, "a rotation at a date without a period happens once")
	assert.False(t, k.RotationDue(after.AddDate(1, 0, 0)))
}

func TestExpireDeleteAndResetUsage(t *testing.T) {
	expiring := keyCreated(func(e *APIKeyCreated) { e.ExpiresAt = keyRef(keyT0.Add(time.Hour)) })
	runKeyCases(t, []keyCase{
		{name: "expire before the time", given: []Event{expiring},
			when: func(k *APIKey) ([]Event, error) { return k.Expire(keyT0.Add(time.Hour - time.Second)) }, code: CodeConflict},
		{name: "expire at the time", given: []Event{expiring},
			when: func(k *APIKey) ([]Event, error) { return k.Expire(keyT0.Add(time.Hour)) },
			then: []Event{APIKeyExpired{KeyID: apiKeyTestID, At: keyT0.Add(time.Hour)}}},
		{name: "expire again", given: []Event{expiring, APIKeyExpired{KeyID: apiKeyTestID, At: keyT0.Add(time.Hour)}},
			when: func(k *APIKey) ([]Event, error) { return k.Expire(keyT0.Add(2 * time.Hour)) }, then: nil},
		{name: "expire a deleted key", given: []Event{expiring, APIKeyDeleted{KeyID: apiKeyTestID, At: keyT0}},
			when: func(k *APIKey) ([]Event, error) { return k.Expire(keyT0.Add(2 * time.Hour)) }, then: nil},
		{name: "expire a key without expiry", given: []Event{keyCreated()},
			when: func(k *APIKey) ([]Event, error) { return k.Expire(keyT0.Add(time.Hour)) }, code: CodeConflict},
		{name: "delete", given: []Event{keyCreated()},
			when: func(k *APIKey) ([]Event, error) { return k.Delete(keyT0) },
			then: []Event{APIKeyDeleted{KeyID: apiKeyTestID, At: keyT0}}},
		{name: "delete twice", given: []Event{keyCreated(), APIKeyDeleted{KeyID: apiKeyTestID, At: keyT0}},
			when: func(k *APIKey) ([]Event, error) { return k.Delete(keyT0) }, code: CodeNotFound},
		{name: "delete an unknown key",
			when: func(k *APIKey) ([]Event, error) { return k.Delete(keyT0) }, code: CodeNotFound},
		{name: "reset usage", given: []Event{keyCreated(), APIKeyExhausted{KeyID: apiKeyTestID, Usage: 3.25, At: keyT0}},
			when: func(k *APIKey) ([]Event, error) { return k.ResetUsage(keyT0) },
			then: []Event{APIKeyUsageReset{KeyID: apiKeyTestID, At: keyT0}}},
		{name: "reset usage of a deleted key", given: []Event{keyCreated(), APIKeyDeleted{KeyID: apiKeyTestID, At: keyT0}},
			when: func(k *APIKey) ([]Event, error) { return k.ResetUsage(keyT0) }, code: CodeNotFound},
	})
}

func TestAccepts(t *testing.T) {
	rotatedAt := keyT0.Add(time.Hour)
	rotation := APIKeyRotated{KeyID: apiKeyTestID, Hash: HashKey(plainNew), Masked: MaskKey(plainNew),
		PreviousValidUntil: rotatedAt.Add(MinKeyTransition), At: rotatedAt}
	expiring := keyCreated(func(e *APIKeyCreated) { e.ExpiresAt = keyRef(keyT0.Add(time.Hour)) })
	cases := []struct {
		name   string
		given  []Event
		key    string
		at     time.Time
		ok     bool
		reason string
	}{
		{"the key", []Event{keyCreated()}, plainOld, keyT0, true, ""},
		{"another key", []Event{keyCreated()}, plainNew, keyT0, false, "unknown"},
		{"no key at all", nil, plainOld, keyT0, false, "unknown"},
		{"the new key after a rotation", []Event{keyCreated(), rotation}, plainNew, rotatedAt, true, ""},
		{"the old key during the transition", []Event{keyCreated(), rotation}, plainOld, rotatedAt.Add(MinKeyTransition - time.Nanosecond), true, ""},
		{"the old key when the transition ends", []Event{keyCreated(), rotation}, plainOld, rotatedAt.Add(MinKeyTransition), false, "unknown"},
		{"the new key after the transition", []Event{keyCreated(), rotation}, plainNew, rotatedAt.Add(24 * time.Hour), true, ""},
		{"before the expiry time", []Event{expiring}, plainOld, keyT0.Add(time.Hour - time.Nanosecond), true, ""},
		{"at the expiry time, before the worker", []Event{expiring}, plainOld, keyT0.Add(time.Hour), false, "expired"},
		{"expired by the worker", []Event{keyCreated(), APIKeyExpired{KeyID: apiKeyTestID, At: keyT0}}, plainOld, keyT0, false, "expired"},
		{"deleted", []Event{keyCreated(), APIKeyDeleted{KeyID: apiKeyTestID, At: keyT0}}, plainOld, keyT0, false, "unknown"},
		{"exhausted keys still authenticate", []Event{keyCreated(), APIKeyExhausted{KeyID: apiKeyTestID, Usage: 1, At: keyT0}}, plainOld, keyT0, true, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ok, reason := foldKey(tc.given...).Accepts(HashKey(tc.key), tc.at)
			assert.Equal(t, tc.ok, ok)
			assert.Equal(t, tc.reason, reason)
		})
	}
}

func TestStatusAndDueTimes(t *testing.T) {
	k := foldKey(keyCreated(func(e *APIKeyCreated) {
		e.ExpiresAt = keyRef(keyT0.Add(48 * time.Hour))
		e.RotationPolicy = &RotationPolicy{RotationPeriod: keyRef(RotateWeekly), NextRotationAt: keyRef(keyT0.Add(72 * time.Hour))}
	}))
	cases := []struct {
		at                                      time.Duration
		status                                  string
		expiryNotice, expiryDue, rotNotice, rot bool
	}{
		{0, KeyActive, false, false, false, false},
		{24*time.Hour - time.Second, KeyActive, false, false, false, false},
		{24 * time.Hour, KeyActive, true, false, false, false},
		{48*time.Hour - time.Second, KeyActive, true, false, false, false},
		{48 * time.Hour, KeyExpired, false, true, false, false},
		{72 * time.Hour, KeyExpired, false, true, false, false},
	}
	for _, tc := range cases {
		now := keyT0.Add(tc.at)
		assert.Equal(t, tc.status, k.StatusAt(now), tc.at)
		assert.Equal(t, tc.expiryNotice, k.ExpiryNoticeDue(now), tc.at)
		assert.Equal(t, tc.expiryDue, k.ExpiryDue(now), tc.at)
		assert.Equal(t, tc.rotNotice, k.RotationNoticeDue(now), tc.at)
		assert.Equal(t, tc.rot, k.RotationDue(now), tc.at)
	}
	k.ExpiresAt = nil
	assert.True(t, k.RotationNoticeDue(keyT0.Add(48*time.Hour)))
	assert.False(t, k.RotationDue(keyT0.Add(72*time.Hour-time.Second)))
	assert.True(t, k.RotationDue(keyT0.Add(72*time.Hour)))
}
