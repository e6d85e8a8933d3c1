package httpapi

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A read answers an ETag (the resource's stream revision); a write that sends it back as
// If-Match lands while the resource has not moved, and is refused 412 once it has. A malformed
// If-Match, or a wait header the write cannot honour, is refused before anything is written.
func TestETagAndIfMatch(t *testing.T) {
	api := newTestAPI(t)
	ws := api.seedWorkspace("team-a", nil)
	created := api.Admin(http.MethodPost, "/policies/rate-limits", map[string]any{"name": "per key", "workspace_id": ws,
		"type": "requests", "unit": "rpm", "value": 20, "conditions": []map[string]string{{"key": "workspace_id", "value": ws}},
		"group_by": []map[string]string{{"key": "api_key"}}})
	require.Equal(t, http.StatusOK, created.Status, string(created.Raw))
	path := "/policies/rate-limits/" + created.Str("id")

	read := api.Admin(http.MethodGet, path, nil)
	etag := read.Header.Get("ETag")
	require.Regexp(t, `^"\d+"$`, etag)

	first := api.Admin(http.MethodPut, path, map[string]any{"value": 30}, "If-Match", etag)
	require.Equal(t, http.StatusOK, first.Status, string(first.Raw))
	stale := api.Admin(http.MethodPut, path, map[string]any{"value": 40}, "If-Match", etag)
	require.Equal(t, http.StatusPreconditionFailed, stale.Status, string(stale.Raw))
	assert.Contains(t, stale.ErrorMessage(), "If-Match")
	assert.EqualValues(t, 30, api.Admin(http.MethodGet, path, nil).Body["value"], "the stale write changed nothing")

	fresh := api.Admin(http.MethodGet, path, nil).Header.Get("ETag")
	assert.NotEqual(t, etag, fresh)
	require.Equal(t, http.StatusOK, api.Admin(http.MethodPut, path, map[string]any{"value": 50}, "If-Match", `W/`+fresh).Status)
	require.Equal(t, http.StatusOK, api.Admin(http.MethodPut, path, map[string]any{"value": 60}).Status, "a plain write needs no If-Match")

	bad := api.Admin(http.MethodPut, path, map[string]any{"value": 70}, "If-Match", "yesterday")
	require.Equal(t, http.StatusBadRequest, bad.Status)
	assert.Equal(t, "If-Match", bad.ErrorParam())
	wait := api.Admin(http.MethodPut, path, map[string]any{"value": 70}, WaitHeader, "some")
	require.Equal(t, http.StatusBadRequest, wait.Status)
	assert.Equal(t, WaitHeader, wait.ErrorParam())
	long := api.Admin(http.MethodPut, path, map[string]any{"value": 70}, WaitHeader, "all-instances", WaitTimeoutHeader, "60000")
	require.Equal(t, http.StatusBadRequest, long.Status)
	assert.Equal(t, WaitTimeoutHeader, long.ErrorParam())
	assert.EqualValues(t, 60, api.Admin(http.MethodGet, path, nil).Body["value"], "refused headers wrote nothing")

	// Embedded there are no other instances: the wait is met at once, and /instances says why
	// it lists none.
	require.Equal(t, http.StatusOK, api.Admin(http.MethodPut, path, map[string]any{"value": 80}, WaitHeader, "all-instances").Status)
	inst := api.Admin(http.MethodGet, "/instances", nil)
	require.Equal(t, http.StatusBadRequest, inst.Status)
	assert.Contains(t, inst.ErrorMessage(), "server mode only")
}
