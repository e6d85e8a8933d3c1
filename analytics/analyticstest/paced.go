package analyticstest

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/analytics"
)

// PacedInsert checks that a paced insert (the pipeline's) stores a batch in parts, yielding
// between them, and still stores each row once, a retried part included. The store must be a
// PacedWriter.
func PacedInsert(t *testing.T, store analytics.Store) {
	const org = "org-paced"
	rows := Rows()[:1300]
	for i := range rows {
		rows[i].OrganisationID = org
	}
	ctx := context.Background()
	yields := 0
	paced := store.(analytics.PacedWriter)
	require.NoError(t, paced.InsertPaced(ctx, rows, func() { yields++ }))
	require.NoError(t, paced.InsertPaced(ctx, rows[500:900], func() {}), "a retried part")
	assert.Greater(t, yields, 10, "the insert yields as it goes")

	seen := map[string]int{}
	require.NoError(t, store.ScanLogs(ctx, analytics.Filter{OrganisationID: org}, func(r analytics.LogRecord) error {
		seen[r.ID]++
		return nil
	}))
	require.Len(t, seen, len(rows))
	for _, r := range rows {
		require.Equal(t, 1, seen[r.ID], r.ID)
	}
	for _, i := range []int{0, 511, 512, 1299} {
		got, ok, err := store.Log(ctx, org, rows[i].ID)
		require.NoError(t, err)
		require.True(t, ok)
		assert.Equal(t, rows[i].Model, got.Model)
		assert.Equal(t, rows[i].TotalTokens, got.TotalTokens)
		assert.Equal(t, rows[i].RequestBodyEncoding, got.RequestBodyEncoding)
	}
}
