package openai

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/gateway/providers/providertest"
)

// standInStream posts body to the OpenAI stand-in at path and returns the data payloads of
// its streamed answer.
func standInStream(t *testing.T, path, body string) [][]byte {
	t.Helper()
	s := providertest.NewOpenAI(t)
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, s.URL+path, bytes.NewReader([]byte(body)))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer sk-standin")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return readStream(t, raw)
}

// withoutMember returns a JSON object without its top-level member name.
func withoutMember(t *testing.T, body []byte, name string) []byte {
	t.Helper()
	var m map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(body, &m))
	delete(m, name)
	out, err := json.Marshal(m)
	require.NoError(t, err)
	return out
}

func requireValidJSON(t *testing.T, b []byte) {
	t.Helper()
	require.True(t, json.Valid(b), "%s", b)
}
