package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/commands"
	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/eventstore"
	"github.com/causeway/causeway/eventstore/sqlite"
	"github.com/causeway/causeway/gateway"
	"github.com/causeway/causeway/gateway/egress"
	"github.com/causeway/causeway/guardrails"
	"github.com/causeway/causeway/projections"
	"github.com/causeway/causeway/projections/memory"
)

// testAPI is the admin API over a real SQLite event store and the in-memory read model, with a
// clock the test moves. AdminKey is the bootstrap organisation admin key (every scope).
type testAPI struct {
	t        testing.TB
	Server   *httptest.Server
	Store    eventstore.Store
	Read     *memory.Model
	Index    *gateway.Index // the gateway's routing index, fed by Read's fold
	Deps     commands.Deps
	AdminKey string
	OrgID    string
	OwnerID  string
	// Admin is the router's admin API: a test may set fields (Analytics, Pricing, Features)
	// before its first request.
	AdminAPI *Admin

	mu  sync.Mutex
	now time.Time
}

const testAdminKey = "cw-test-admin-key-0123456789abcdefghijklmnop"

func newTestAPI(t testing.TB) *testAPI {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "events.db"))
	require.NoError(t, err)
	reg := domain.NewRegistry()
	index := gateway.NewIndex()
	api := &testAPI{t: t, Store: store, Read: memory.New(reg, memory.Options{OnFold: index.Put}), Index: index, AdminKey: testAdminKey,
		now: time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)}
	api.Deps = commands.Deps{Store: store, Registry: reg, Now: api.Now}

	boot, err := commands.NewBootstrapHandler(api.Deps)
	require.NoError(t, err)
	res, err := boot.Handle(ctx, commands.Bootstrap{OrganisationName: "Test org", OwnerEmail: "owner@example.com", AdminKey: testAdminKey})
	require.NoError(t, err)
	api.OrgID, api.OwnerID = res.OrganisationID, res.OwnerUserID

	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = (&projections.Runner{Store: store, Projections: []projections.Projection{api.Read}, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}).Run(ctx)
	}()
	// The first request must find the bootstrap key: wait until the read model has it.
	bootEvents, err2 := store.ReadAll(ctx, eventstore.Start, 10_000)
	require.NoError(t, err2)
	wctx, wcancel := context.WithTimeout(ctx, 5*time.Second)
	defer wcancel()
	require.NoError(t, api.Read.WaitFor(wctx, bootEvents[len(bootEvents)-1].Position))
	secret := bytes.Repeat([]byte("s"), 32)
	app, err := commands.NewApp(commands.AppDeps{Deps: api.Deps, Secret: secret, Memberships: api.Read, Collections: api.Read, Checks: testChecks})
	require.NoError(t, err)
	admin := &Admin{
		Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Read: api.Read, Commands: app, Deps: api.Deps,
		Secret: secret, Now: api.Now, WriteWait: 5 * time.Second,
		Features:     Features{APIAccess: true, Policy: true, UsageLimits: true, AuditLogs: true, Guardrails: true},
		Organisation: api.OrgID, Idempotency: api.Read,
		RecordDenial: func(ctx context.Context, d domain.AccessDenied, md eventstore.Metadata) {
			data, _ := json.Marshal(d)
			_, _ = store.Append(ctx, domain.AuditStream, eventstore.Any, eventstore.EventData{
				ID: uuid.New(), Type: d.EventType(), Data: data, Metadata: md})
		},
	}
	api.AdminAPI = admin
	api.Server = httptest.NewServer(NewRouter(Deps{Admin: admin, Health: &Health{}}))
	t.Cleanup(func() {
		api.Server.Close()
		cancel()
		<-done
		_ = store.Close()
	})
	return api
}

// testChecks is the guardrail engine's validation, as cmd wires it (network checks' URLs
// through an egress guard that allows this machine, for the stand-ins).
var testChecks = func() commands.CheckValidatorFunc {
	reg := guardrails.NewRegistry()
	guardrails.AddNetworkChecks(reg)
	guard, err := egress.New([]string{"127.0.0.1"})
	if err != nil {
		panic(err)
	}
	return commands.EngineChecks(reg, guardrails.Deps{Client: guard.Client(0), CheckURL: guard.CheckURL,
		Secret: []byte("test"), Now: time.Now})
}()

// Now is the test clock.
func (a *testAPI) Now() time.Time {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.now
}

// Advance moves the test clock.
func (a *testAPI) Advance(d time.Duration) {
	a.mu.Lock()
	a.now = a.now.Add(d)
	a.mu.Unlock()
}

// response is an answer: its status, headers and decoded JSON body.
type response struct {
	Status int
	Header http.Header
	Body   map[string]any
	Raw    []byte
}

// Do sends a request with the given key (empty: none) and JSON body (nil: none).
func (a *testAPI) Do(method, path, key string, body any, headers ...string) response {
	a.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = bytes.NewBufferString(b)
	default:
		raw, err := json.Marshal(b)
		require.NoError(a.t, err)
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, a.Server.URL+"/v1"+path, rd)
	require.NoError(a.t, err)
	if key != "" {
		req.Header.Set("x-gateway-api-key", key)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(a.t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(a.t, err)
	out := response{Status: resp.StatusCode, Header: resp.Header, Raw: raw}
	if len(raw) > 0 {
		_ = json.Unmarshal(raw, &out.Body)
	}
	return out
}

// Admin sends a request as the bootstrap admin key.
func (a *testAPI) Admin(method, path string, body any, headers ...string) response {
	a.t.Helper()
	return a.Do(method, path, a.AdminKey, body, headers...)
}

// ErrorParam returns the error's param, and ErrorMessage its message.
func (r response) ErrorParam() string {
	e, _ := r.Body["error"].(map[string]any)
	p, _ := e["param"].(string)
	return p
}

func (r response) ErrorMessage() string {
	e, _ := r.Body["error"].(map[string]any)
	m, _ := e["message"].(string)
	return m
}

// Data returns a list answer's items.
func (r response) Data() []map[string]any {
	items, _ := r.Body["data"].([]any)
	out := make([]map[string]any, 0, len(items))
	for _, it := range items {
		m, _ := it.(map[string]any)
		out = append(out, m)
	}
	return out
}

// Str returns a string field of the body.
func (r response) Str(field string) string {
	s, _ := r.Body[field].(string)
	return s
}

// seedEvents appends events to stream as the system and waits until the read model has them:
// for setting up state that a test is not about.
func (a *testAPI) seedEvents(stream string, events ...domain.Event) {
	a.t.Helper()
	ctx := commands.WithRequest(context.Background(), commands.Request{Actor: domain.System(a.OrgID), RequestID: "seed"})
	data := make([]eventstore.EventData, len(events))
	for i, ev := range events {
		raw, err := json.Marshal(ev)
		require.NoError(a.t, err)
		data[i] = eventstore.EventData{ID: uuid.New(), Type: ev.EventType(), Data: raw,
			Metadata: eventstore.Metadata{ActorID: "system", ActorKind: eventstore.ActorSystem, OrganisationID: a.OrgID}}
	}
	res, err := a.Store.Append(ctx, stream, eventstore.Any, data...)
	require.NoError(a.t, err)
	wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	require.NoError(a.t, a.Read.WaitFor(wctx, res.Position))
}

// seedWorkspace creates an active workspace with the given members and returns its id.
func (a *testAPI) seedWorkspace(slug string, members map[string]domain.Role) string {
	a.t.Helper()
	id := uuid.NewString()
	evs := []domain.Event{domain.WorkspaceCreated{WorkspaceID: id, OrganisationID: a.OrgID, Name: slug, Slug: slug, At: a.Now()}}
	for user, role := range members {
		evs = append(evs, domain.WorkspaceMemberAdded{WorkspaceID: id, UserID: user, Role: role, At: a.Now()})
	}
	a.seedEvents(domain.Stream(domain.WorkspacePrefix, id), evs...)
	return id
}

// seedUser creates an organisation member and returns its id.
func (a *testAPI) seedUser(email string, role domain.Role) string {
	a.t.Helper()
	id := uuid.NewString()
	a.seedEvents(domain.Stream(domain.UserPrefix, id), domain.UserJoined{UserID: id, OrganisationID: a.OrgID,
		Email: email, Role: role, At: a.Now()})
	return id
}
