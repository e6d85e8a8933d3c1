package memory

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/eventstore"
	"github.com/causeway/causeway/projections"
)

// Exports are listed per organisation and workspace, newest first; the worker's queue holds
// the started and unfinished ones of every organisation, oldest start first.
func TestLogExportQueries(t *testing.T) {
	m := New(domain.NewRegistry())
	t0 := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	pos := 0
	apply := func(id string, ev domain.Event) {
		pos++
		require.NoError(t, m.Apply(recorded(t, eventstore.Position(pos), domain.Stream(domain.LogExportPrefix, id), ev)))
	}
	for i, x := range []struct{ id, org, ws string }{{"a", "org", "ws-1"}, {"b", "org", "ws-2"}, {"c", "org-2", "ws-3"}, {"d", "org", "ws-1"}} {
		apply(x.id, domain.LogExportCreated{ExportID: x.id, OrganisationID: x.org, WorkspaceID: x.ws, RequestedData: []string{"id"},
			Format: domain.ExportJSONL, At: t0.Add(time.Duration(i) * time.Minute)})
	}
	apply("d", domain.LogExportStarted{ExportID: "d", At: t0.Add(time.Hour)})
	apply("c", domain.LogExportStarted{ExportID: "c", At: t0.Add(2 * time.Hour)})
	apply("b", domain.LogExportStarted{ExportID: "b", At: t0.Add(3 * time.Hour)})
	apply("b", domain.LogExportCompleted{ExportID: "b", FileName: "b.jsonl", At: t0.Add(4 * time.Hour)})

	ctx := context.Background()
	ids := func(xs []domain.LogExport, err error) []string {
		require.NoError(t, err)
		out := []string{}
		for _, x := range xs {
			out = append(out, x.ID)
		}
		return out
	}
	assert.Equal(t, []string{"d", "b", "a"}, ids(m.LogExports(ctx, projections.LogExportFilter{OrganisationID: "org"})))
	assert.Equal(t, []string{"d", "a"}, ids(m.LogExports(ctx, projections.LogExportFilter{OrganisationID: "org", WorkspaceIDs: map[string]bool{"ws-1": true}})))
	assert.Equal(t, []string{"d", "c"}, ids(m.LogExportsInProgress(ctx)))

	x, ok, err := m.LogExport(ctx, "org", "b")
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, domain.ExportSuccess, x.Status)
	_, ok, err = m.LogExport(ctx, "org-2", "b")
	require.NoError(t, err)
	assert.False(t, ok, "another organisation's export")
	_, ok, err = m.LogExport(ctx, "org", "zzz")
	require.NoError(t, err)
	assert.False(t, ok)
}
