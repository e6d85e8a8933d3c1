package commands

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/eventstore"
	"github.com/causeway/causeway/projections/memory"
)

// exportWorld is an event store holding three workspaces of two organisations, and its read
// model. (The export worker's tests, in package workers, add a log store and files.)
type exportWorld struct {
	t    *testing.T
	d    Deps
	read *memory.Model
	ctx  context.Context // as the system actor of org-1
}

const (
	exportOrg = "org-1"
	exportWS  = "ws-1"
)

// exportClock is when exports start.
var exportClock = time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)

func newExportWorld(t *testing.T) *exportWorld {
	t.Helper()
	d := testDeps(t)
	d.Now = func() time.Time { return exportClock }
	w := &exportWorld{t: t, d: d, read: memory.New(d.Registry),
		ctx: WithRequest(context.Background(), Request{Actor: domain.System(exportOrg), RequestID: "test"})}
	for _, ws := range []struct{ org, id, slug string }{{exportOrg, exportWS, "team-a"}, {exportOrg, "ws-2", "team-b"}, {"org-2", "ws-3", "team-c"}} {
		_, err := appendEvents(w.ctx, d, domain.Stream(domain.WorkspacePrefix, ws.id), eventstore.NoStream, []domain.Event{
			domain.WorkspaceCreated{WorkspaceID: ws.id, OrganisationID: ws.org, Name: ws.slug, Slug: ws.slug, At: exportClock}})
		require.NoError(t, err)
	}
	w.fold()
	return w
}

// fold brings the read model up to the store.
func (w *exportWorld) fold() {
	w.t.Helper()
	evs, err := w.d.Store.(eventstore.Store).ReadAll(context.Background(), w.read.Position(), 10_000)
	require.NoError(w.t, err)
	for _, ev := range evs {
		require.NoError(w.t, w.read.Apply(ev))
	}
}

// started creates and starts an export of exportWS, and returns it as the worker will see it.
func (w *exportWorld) started(c CreateLogExport) domain.LogExport {
	w.t.Helper()
	if c.WorkspaceID == "" {
		c.WorkspaceID = exportWS
	}
	res, err := must(NewCreateLogExportHandler(w.d)).Handle(w.ctx, c)
	require.NoError(w.t, err)
	_, err = must(NewStartLogExportHandler(w.d)).Handle(w.ctx, StartLogExport{ExportID: res.ID})
	require.NoError(w.t, err)
	w.fold()
	return w.export(res.ID)
}

func (w *exportWorld) export(id string) domain.LogExport {
	w.t.Helper()
	w.fold()
	x, ok, err := w.read.LogExport(context.Background(), exportOrg, id)
	require.NoError(w.t, err)
	require.True(w.t, ok)
	return x
}

func must[H any](h H, err error) H {
	if err != nil {
		panic(err)
	}
	return h
}

func ptrTo[T any](v T) *T { return &v }

// Commands scope an export from the actor: a workspace key's own workspace, whatever the body
// says; the workspace_slug filter may only repeat it.
func TestLogExportCommandsScopeFromTheActor(t *testing.T) {
	w := newExportWorld(t)
	key := domain.Actor{Kind: domain.ActorAPIKey, ID: "k", OrganisationID: exportOrg, KeyType: domain.KeyWorkspaceService,
		WorkspaceID: exportWS, Scopes: []string{"logs.export"}, OrgRole: domain.RoleMember,
		WorkspaceRoles: map[string]domain.Role{exportWS: domain.RoleManager}}
	as := func(a domain.Actor) context.Context { return WithRequest(context.Background(), Request{Actor: a}) }
	create := must(NewCreateLogExportHandler(w.d))

	res, err := create.Handle(as(key), CreateLogExport{RequestedData: []string{"id"}})
	require.NoError(t, err)
	w.fold()
	x := w.export(res.ID)
	assert.Equal(t, exportWS, x.WorkspaceID)
	assert.Equal(t, "k", x.CreatedBy)

	_, err = create.Handle(as(key), CreateLogExport{WorkspaceID: "ws-2", RequestedData: []string{"id"}})
	assert.Equal(t, domain.CodeForbidden, domain.ErrorCode(err))

	noScope := key
	noScope.Scopes = []string{"logs.view"}
	_, err = create.Handle(as(noScope), CreateLogExport{RequestedData: []string{"id"}})
	assert.Equal(t, domain.CodeForbidden, domain.ErrorCode(err))

	_, err = create.Handle(w.ctx, CreateLogExport{WorkspaceID: "ws-3", RequestedData: []string{"id"}})
	assert.Equal(t, domain.CodeNotFound, domain.ErrorCode(err), "another organisation's workspace")

	_, err = create.Handle(w.ctx, CreateLogExport{WorkspaceID: exportWS, RequestedData: []string{"id"},
		Filters: domain.LogExportFilters{WorkspaceSlug: "team-b"}})
	assert.Equal(t, domain.CodeInvalid, domain.ErrorCode(err))
	_, err = create.Handle(w.ctx, CreateLogExport{WorkspaceID: exportWS, RequestedData: []string{"id"},
		Filters: domain.LogExportFilters{WorkspaceSlug: "team-a"}})
	assert.NoError(t, err)

	other := key
	other.WorkspaceID, other.WorkspaceRoles = "ws-2", map[string]domain.Role{"ws-2": domain.RoleManager}
	_, err = must(NewStartLogExportHandler(w.d)).Handle(as(other), StartLogExport{ExportID: res.ID})
	assert.Equal(t, domain.CodeForbidden, domain.ErrorCode(err))
	_, err = must(NewUpdateLogExportHandler(w.d)).Handle(as(key), UpdateLogExport{ExportID: res.ID, WorkspaceID: "ws-2",
		Description: ptrTo("x")})
	assert.Equal(t, domain.CodeInvalid, domain.ErrorCode(err), "an export does not move workspace")
	_, err = must(NewCancelLogExportHandler(w.d)).Handle(WithRequest(context.Background(),
		Request{Actor: domain.System("org-2")}), CancelLogExport{ExportID: res.ID})
	assert.Equal(t, domain.CodeNotFound, domain.ErrorCode(err), "another organisation's export")
}

// How an export ended is the export worker's to record: the system actor of the export's
// organisation. A completion another run recorded first is no conflict; one after a cancel is.
func TestLogExportOutcomeIsTheWorkers(t *testing.T) {
	w := newExportWorld(t)
	complete, fail := must(NewCompleteLogExportHandler(w.d)), must(NewFailLogExportHandler(w.d))
	admin := WithRequest(context.Background(), Request{Actor: domain.Actor{Kind: domain.ActorUser, ID: "u",
		OrganisationID: exportOrg, OrgRole: domain.RoleOwner}})
	other := WithRequest(context.Background(), Request{Actor: domain.System("org-2")})

	x := w.started(CreateLogExport{RequestedData: []string{"id"}})
	done := CompleteLogExport{ExportID: x.ID, Rows: 3, Bytes: 30, FileName: x.ID + ".jsonl"}
	_, err := complete.Handle(admin, done)
	assert.Equal(t, domain.CodeForbidden, domain.ErrorCode(err))
	_, err = fail.Handle(admin, FailLogExport{ExportID: x.ID, Reason: "r"})
	assert.Equal(t, domain.CodeForbidden, domain.ErrorCode(err))
	_, err = complete.Handle(other, done)
	assert.Equal(t, domain.CodeNotFound, domain.ErrorCode(err), "another organisation's export")

	res, err := complete.Handle(w.ctx, done)
	require.NoError(t, err)
	assert.NotZero(t, res.Position)
	got := w.export(x.ID)
	assert.Equal(t, domain.ExportSuccess, got.Status)
	assert.Equal(t, int64(3), got.RowCount)
	res, err = complete.Handle(w.ctx, done)
	require.NoError(t, err, "completed first by another run")
	assert.Zero(t, res.Position, "nothing recorded twice")
	_, err = fail.Handle(w.ctx, FailLogExport{ExportID: x.ID, Reason: "r"})
	assert.Equal(t, domain.CodeConflict, domain.ErrorCode(err))

	y := w.started(CreateLogExport{RequestedData: []string{"id"}})
	_, err = must(NewCancelLogExportHandler(w.d)).Handle(w.ctx, CancelLogExport{ExportID: y.ID})
	require.NoError(t, err)
	_, err = complete.Handle(w.ctx, CompleteLogExport{ExportID: y.ID, FileName: y.ID + ".jsonl"})
	assert.Equal(t, domain.CodeConflict, domain.ErrorCode(err), "a cancel wins")
}
