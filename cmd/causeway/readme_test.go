package main

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/gateway/providers/providertest"
	"github.com/causeway/causeway/internal/syncbuf"
)

// readmeBlock is one fenced block of the README: its info string and its text.
type readmeBlock struct {
	info, text string
	line       int
}

// readmeBlocks splits markdown into its fenced blocks, and reports where the walk-through
// marker sits among them (the index of the first block after it).
func readmeBlocks(t *testing.T, md string) (blocks []readmeBlock, walkthrough int) {
	t.Helper()
	walkthrough = -1
	lines := strings.Split(md, "\n")
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if strings.TrimSpace(l) == "<!-- walkthrough -->" {
			walkthrough = len(blocks)
			continue
		}
		if strings.HasPrefix(l, "## ") && walkthrough >= 0 && !strings.HasPrefix(l, "## Five minutes") {
			// The walk-through ends at the next section: later blocks are reference.
			return blocks, walkthrough
		}
		info, ok := strings.CutPrefix(l, "```")
		if !ok {
			continue
		}
		start := i + 1
		for i++; i < len(lines) && lines[i] != "```"; i++ {
		}
		blocks = append(blocks, readmeBlock{info: strings.TrimSpace(info), text: strings.Join(lines[start:i], "\n"), line: start})
	}
	return blocks, walkthrough
}

// matchOutput compares what a block printed with the README's text block after it. Lines are
// compared without trailing spaces; "..." in a line of the README stands for anything.
func matchOutput(want, got string) bool {
	w := strings.Split(strings.TrimRight(want, "\n"), "\n")
	g := strings.Split(strings.TrimRight(got, "\n"), "\n")
	if len(w) != len(g) {
		return false
	}
	for i := range w {
		parts := strings.Split(strings.TrimRight(w[i], " "), "...")
		for j := range parts {
			parts[j] = regexp.QuoteMeta(parts[j])
		}
		if !regexp.MustCompile("^" + strings.Join(parts, ".*") + "$").MatchString(strings.TrimRight(g[i], " ")) {
			return false
		}
	}
	return true
}

// TestReadmeWalkthrough runs the README's five-minute walk-through, as written, against the
// real binary: the start command's environment, then every sh block after the walk-through
// marker in one bash session (set -euo pipefail), each block's output compared with the text
// block that follows it. Two things are supplied from outside: the model server (a stand-in
// speaking OpenAI's dialect, as Ollama does, named by OLLAMA_URL as the README allows) and the
// port (a free one instead of 8787, which a developer's own Causeway may hold). The one block
// marked "internet" (a hosted provider) is checked with bash -n only.
func TestReadmeWalkthrough(t *testing.T) {
	for _, tool := range []string{"bash", "curl", "jq", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("the README walk-through needs %s", tool)
			}
			t.Skipf("the README walk-through needs %s", tool)
		}
	}
	md, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	require.NoError(t, err)
	blocks, walk := readmeBlocks(t, string(md))
	require.GreaterOrEqual(t, walk, 1, "the README marks its walk-through with <!-- walkthrough --> after the start command")

	// The start command: the README's environment for `make run`.
	var start string
	for _, b := range blocks[:walk] {
		if b.info == "sh" && strings.Contains(b.text, "make run") && strings.Contains(b.text, "CAUSEWAY_ALLOWED_HOSTS") {
			start = b.text
		}
	}
	require.NotEmpty(t, start, "the walk-through starts Causeway with CAUSEWAY_ALLOWED_HOSTS=... make run")
	vars := map[string]string{}
	for _, f := range strings.Fields(start) {
		if k, v, ok := strings.Cut(f, "="); ok {
			vars[k] = v
		}
	}

	dir := t.TempDir()
	bin := causewayBinary(t)

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	// Ollama asks for no credential; the OpenAI stand-in wants one, so a proxy in front of it
	// supplies one, as Ollama's own server needs none.
	standIn := providertest.NewOpenAI(t)
	target, err := url.Parse(standIn.URL)
	require.NoError(t, err)
	proxy := httputil.NewSingleHostReverseProxy(target)
	direct := proxy.Director
	proxy.Director = func(r *http.Request) { direct(r); r.Header.Set("Authorization", "Bearer ollama") }
	ollama := httptest.NewServer(proxy)
	t.Cleanup(ollama.Close)

	serve := exec.Command(bin, "serve")
	serve.Dir = dir
	serve.Env = append(os.Environ(), "CAUSEWAY_ADDR="+addr, "CAUSEWAY_DATA_DIR="+filepath.Join(dir, "data"),
		"CAUSEWAY_BOOTSTRAP_ADMIN_KEY=", "CAUSEWAY_SECRET_KEY=")
	for k, v := range vars {
		serve.Env = append(serve.Env, k+"="+v)
	}
	serveLog := &syncbuf.Buffer{}
	serve.Stdout, serve.Stderr = serveLog, serveLog
	require.NoError(t, serve.Start())
	t.Cleanup(func() {
		_ = serve.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = serve.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = serve.Process.Kill()
		}
	})
	ready := false
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if resp, err := http.Get("http://" + addr + "/v1/health"); err == nil {
			resp.Body.Close()
			ready = true
			break
		}
	}
	require.True(t, ready, "causeway did not start: %s", serveLog.String())

	// One bash session: each sh block after a marker line, so that variables carry over.
	var script strings.Builder
	script.WriteString("set -euo pipefail\n")
	type step struct {
		block  readmeBlock
		expect *readmeBlock
	}
	var steps []step
	for i := walk; i < len(blocks); i++ {
		b := blocks[i]
		switch {
		case b.info == "sh":
			s := step{block: b}
			if i+1 < len(blocks) && blocks[i+1].info == "text" {
				s.expect = &blocks[i+1]
			}
			steps = append(steps, s)
		case strings.HasPrefix(b.info, "sh internet"):
			check := exec.Command("bash", "-n")
			check.Stdin = strings.NewReader(b.text)
			out, err := check.CombinedOutput()
			assert.NoError(t, err, "README line %d: %s", b.line, out)
		}
	}
	require.NotEmpty(t, steps)
	for i, s := range steps {
		script.WriteString("echo '@@step " + string(rune('A'+i)) + "'\n")
		script.WriteString(strings.ReplaceAll(s.block.text, "localhost:8787", addr) + "\n")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	run := exec.CommandContext(ctx, "bash")
	run.Dir = dir
	run.Env = append(os.Environ(), "OLLAMA_URL="+ollama.URL)
	run.Stdin = strings.NewReader(script.String())
	var stdout, stderr bytes.Buffer
	run.Stdout, run.Stderr = &stdout, &stderr
	runErr := run.Run()

	outputs := map[int]string{}
	cur := -1
	for _, l := range strings.SplitAfter(stdout.String(), "\n") {
		if name, ok := strings.CutPrefix(strings.TrimSpace(l), "@@step "); ok && len(name) == 1 {
			cur = int(name[0] - 'A')
			continue
		}
		if cur >= 0 {
			outputs[cur] += l
		}
	}
	if runErr != nil {
		t.Fatalf("the walk-through failed in the block at README line %d: %v\nstderr: %s\nstdout: %s\nserver: %s",
			steps[max(cur, 0)].block.line, runErr, stderr.String(), stdout.String(), serveLog.String())
	}
	for i, s := range steps {
		if s.expect == nil {
			continue
		}
		assert.True(t, matchOutput(s.expect.text, outputs[i]),
			"README line %d: the block printed\n%s\nbut the README shows\n%s", s.block.line, outputs[i], s.expect.text)
	}
}

func TestReadmeOutputMatching(t *testing.T) {
	assert.True(t, matchOutput("200 ...403 \nbudget_exceeded\n", "200 200 403 403 \nbudget_exceeded\n"))
	assert.True(t, matchOutput("cw-...", "cw-Abc"))
	assert.False(t, matchOutput("200 ...403", "200 200 429"))
	assert.False(t, matchOutput("a\nb", "a"))
}

// TestReadmeListsEveryScopeHeaderAndVariable holds the README's reference tables to the code:
// every scope of the catalogue, every gateway header and every environment variable the
// configuration reads must be documented.
func TestReadmeListsEveryScopeHeaderAndVariable(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	require.NoError(t, err)
	md := string(raw)

	scopes := md[strings.Index(md, "### Scopes"):]
	scopes = scopes[:strings.Index(scopes[1:], "\n### ")+1]
	for _, s := range domain.AllScopes() {
		resource, verb, _ := strings.Cut(s, ".")
		found := false
		for _, line := range strings.Split(scopes, "\n") {
			if strings.HasPrefix(line, "| `"+resource+".") &&
				(strings.Contains(line, "`"+s+"`") || strings.Contains(line, "`."+verb+"`")) {
				found = true
			}
		}
		assert.True(t, found, "the README's scope table lacks %s", s)
	}

	src, err := os.ReadFile(filepath.Join("..", "..", "gateway", "headers.go"))
	require.NoError(t, err)
	for _, m := range regexp.MustCompile(`= "(x-gateway-[a-z-]+)"`).FindAllStringSubmatch(string(src), -1) {
		assert.Contains(t, md, "`"+m[1]+"`", "the README's header table lacks %s", m[1])
	}

	for _, file := range []string{"config.go", "app.go", "tracing.go"} {
		src, err := os.ReadFile(file)
		require.NoError(t, err)
		for _, m := range regexp.MustCompile(`"([A-Z][A-Z0-9]*_[A-Z0-9_]+)"`).FindAllStringSubmatch(string(src), -1) {
			assert.Contains(t, md, "`"+m[1]+"`", "the README lacks the variable %s (%s)", m[1], file)
		}
	}
}
