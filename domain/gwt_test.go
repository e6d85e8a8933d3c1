package domain

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// scenario is the form every domain test takes: given these events, when this decision,
// then these events (or this error).
type scenario[A Aggregate] struct {
	name  string
	given []Event
	when  func(A) ([]Event, error)
	then  []Event
	// wantCode and wantParam, when set, expect an error instead of events.
	wantCode  Code
	wantParam string
}

// runScenarios folds each scenario's given events into a fresh aggregate and checks its when.
func runScenarios[A Aggregate](t *testing.T, fresh func() A, cases []scenario[A]) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			agg := fresh()
			for _, e := range tc.given {
				agg.Apply(e)
			}
			got, err := tc.when(agg)
			if tc.wantCode != "" {
				require.Error(t, err)
				assert.Equal(t, tc.wantCode, ErrorCode(err), err.Error())
				var appErr *Error
				require.ErrorAs(t, err, &appErr)
				assert.Equal(t, tc.wantParam, appErr.Param, appErr.Message)
				assert.Empty(t, got)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.then, got)
		})
	}
}

var t0 = time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)

func ptr[T any](v T) *T { return &v }
