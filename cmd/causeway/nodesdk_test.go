package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/gateway/providers/providertest"
)

// The official OpenAI Node SDK, at the version testdata/nodesdk/package.json pins, used
// through Causeway as a client application would: chat, a stream, embeddings, and each kind
// of error surfacing as the SDK's typed error with Causeway's message. It needs node and npm;
// without them it is skipped, and in CI (CI set) it fails.
func TestOpenAINodeSDK(t *testing.T) {
	node, nodeErr := exec.LookPath("node")
	npm, npmErr := exec.LookPath("npm")
	if nodeErr != nil || npmErr != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("node and npm are needed for the OpenAI Node SDK test in CI")
		}
		t.Skip("node or npm not found: the OpenAI Node SDK test is skipped")
	}
	modules := installNodeSDK(t, npm)

	g := newGoverned(t, startGateway(t))
	missing := providertest.NewOpenAI(t)
	missing.Script(providertest.Answer{Status: http.StatusNotFound, Header: http.Header{"Content-Type": {"text/plain; charset=utf-8"}}, Body: "404 page not found\n"})
	limitedID, limited := g.key(nil)
	freshMinute(t)
	policy := g.admin(http.MethodPost, "/policies/rate-limits", map[string]any{"workspace_id": g.ws, "type": "requests", "unit": "rpm", "value": 1,
		"conditions": []map[string]string{{"key": "api_key", "value": limitedID}}, "group_by": []map[string]string{{"key": "api_key"}}})["id"].(string)

	// The script runs from a directory of its own that sees the cached node_modules.
	dir := t.TempDir()
	script, err := os.ReadFile(filepath.Join("testdata", "nodesdk", "sdk.mjs"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "sdk.mjs"), script, 0o600))
	require.NoError(t, os.Symlink(modules, filepath.Join(dir, "node_modules")))

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "sdk.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GATEWAY_URL="+g.m.URL(), "GATEWAY_KEY="+gatewayKey, "LIMITED_KEY="+limited,
		"PROVIDER_HOST="+g.oa.BaseURL(), "PROVIDER_404_HOST="+missing.BaseURL())
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "node sdk.mjs: %s", stderr.String())

	type result struct {
		OK      bool            `json:"ok"`
		Name    string          `json:"name"`
		Message string          `json:"message"`
		Is      map[string]bool `json:"is"`
		Status  int             `json:"status"`
		Type    *string         `json:"type"`
		Code    any             `json:"code"`
		Param   *string         `json:"param"`
		Error   map[string]any  `json:"error"`
		Source  *string         `json:"source"`

		Content     string `json:"content"`
		TotalTokens int    `json:"total_tokens"`
		Chunks      int    `json:"chunks"`
		Count       int    `json:"count"`
		Dims        int    `json:"dims"`
	}
	t.Logf("the SDK's results: %s", stdout.String())
	var results map[string]result
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &results), "%s\n%s", stdout.String(), stderr.String())
	str := func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	}

	chat := results["chat"]
	require.True(t, chat.OK, "chat: %+v", chat)
	assert.Equal(t, providertest.Reply, chat.Content)
	assert.Positive(t, chat.TotalTokens)

	stream := results["stream"]
	require.True(t, stream.OK, "stream: %+v", stream)
	assert.Greater(t, stream.Chunks, 1, "streamed chunk by chunk")
	assert.Equal(t, providertest.StreamText(5), stream.Content)

	emb := results["embeddings"]
	require.True(t, emb.OK, "embeddings: %+v", emb)
	assert.Equal(t, 2, emb.Count)
	assert.Positive(t, emb.Dims)

	validation := results["validation"]
	require.False(t, validation.OK)
	assert.True(t, validation.Is["BadRequestError"], "%+v", validation)
	assert.Equal(t, http.StatusBadRequest, validation.Status)
	assert.Equal(t, "messages", str(validation.Param))
	assert.Equal(t, "invalid_request_error", str(validation.Type))
	assert.Equal(t, "gateway", str(validation.Source))

	notFound := results["provider404"]
	require.False(t, notFound.OK)
	assert.True(t, notFound.Is["NotFoundError"], "%+v", notFound)
	assert.Equal(t, http.StatusNotFound, notFound.Status)
	assert.Equal(t, "404 openai answered 404: 404 page not found", notFound.Message, "the provider's words, named as the provider's")
	assert.Equal(t, "provider_error", str(notFound.Type))
	assert.Equal(t, "provider", str(notFound.Source))
	assert.Equal(t, "openai", notFound.Error["provider"])
	assert.EqualValues(t, http.StatusNotFound, notFound.Error["status"])

	auth := results["auth"]
	require.False(t, auth.OK)
	assert.True(t, auth.Is["AuthenticationError"], "%+v", auth)
	assert.Equal(t, http.StatusUnauthorized, auth.Status)
	assert.Equal(t, "401 invalid API key", auth.Message)
	assert.Equal(t, "gateway", str(auth.Source))

	limit := results["ratelimit"]
	require.False(t, limit.OK, "the policy of one request a minute refused a call: %+v", limit)
	assert.True(t, limit.Is["RateLimitError"], "%+v", limit)
	assert.Equal(t, http.StatusTooManyRequests, limit.Status)
	assert.Regexp(t, `^429 rate limit of 1 request per minute reached \(rate_limit_policy:`+policy+`@v1\); retry after (\d+s|1m)$`, limit.Message, "a refusal as a minute opens waits the whole minute")
	assert.Equal(t, "gateway", str(limit.Source))
}

// installNodeSDK installs testdata/nodesdk/package.json's packages once per version of that
// file, into the user's cache (or the temporary directory), and returns its node_modules. An
// install is made beside and renamed into place, so concurrent runs never see half of one.
func installNodeSDK(t *testing.T, npm string) string {
	t.Helper()
	pkg, err := os.ReadFile(filepath.Join("testdata", "nodesdk", "package.json"))
	require.NoError(t, err)
	sum := sha256.Sum256(pkg)
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	dir := filepath.Join(base, "causeway-nodesdk", hex.EncodeToString(sum[:8]))
	modules := filepath.Join(dir, "node_modules")
	if _, err := os.Stat(filepath.Join(modules, "openai", "package.json")); err == nil {
		return modules
	}
	require.NoError(t, os.MkdirAll(filepath.Dir(dir), 0o755))
	tmp, err := os.MkdirTemp(filepath.Dir(dir), filepath.Base(dir)+".install-")
	require.NoError(t, err)
	defer os.RemoveAll(tmp) // gone after the rename, or what a failed install left
	require.NoError(t, os.WriteFile(filepath.Join(tmp, "package.json"), pkg, 0o644))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, npm, "install", "--no-audit", "--no-fund")
	cmd.Dir = tmp
	if out, err := cmd.CombinedOutput(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("npm install: %v\n%s", err, out)
		}
		t.Skipf("npm install failed (is the npm registry reachable?): %v\n%s", err, out)
	}
	if err := os.Rename(tmp, dir); err != nil {
		// Another run installed it first: use that one.
		_, statErr := os.Stat(filepath.Join(modules, "openai", "package.json"))
		require.NoError(t, statErr, "rename the install into place: %v", err)
	}
	return modules
}
