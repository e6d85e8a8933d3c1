package httpapi

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/gorilla/mux"

	"github.com/causeway/causeway/commands"
	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/projections"
)

// LogExportReader is what the export routes read: part of projections.Reader, which both read
// models implement (in memory and on PostgreSQL).
type LogExportReader interface {
	LogExport(ctx context.Context, orgID, id string) (domain.LogExport, bool, error)
	LogExports(ctx context.Context, f projections.LogExportFilter) ([]domain.LogExport, error)
}

var _ LogExportReader = projections.Reader(nil)

// logExportBody is the create and update body of the reference: workspace_id, filters (the
// GenerationsFilterSchema), requested_data, and the format and description.
type logExportBody struct {
	WorkspaceID   string         `json:"workspace_id"`
	Filters       *exportFilters `json:"filters"`
	RequestedData []string       `json:"requested_data"`
	Format        *string        `json:"format"`
	Description   *string        `json:"description"`
}

// exportFilters decodes the filters as strictly as the body, naming a wrong field by its path
// under filters.
type exportFilters struct{ domain.LogExportFilters }

func (f *exportFilters) UnmarshalJSON(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	err := dec.Decode(&f.LogExportFilters)
	var typeErr *json.UnmarshalTypeError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &typeErr) && typeErr.Field != "":
		p := "filters." + typeErr.Field
		return domain.Invalid(p, "%s must be %s, not %s", p, jsonKind(typeErr.Type.Kind().String()), typeErr.Value)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		p := "filters." + strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		return domain.Invalid(p, "unknown field %q", p)
	}
	return domain.Invalid("filters", "filters must be an object of the filters of the reference")
}

// logExportAnswer is the reference's ExportItem, with the format and the outcome of the run.
type logExportAnswer struct {
	domain.LogExport
	Object string `json:"object"`
}

func logExportView(x domain.LogExport) logExportAnswer {
	if x.RequestedData == nil {
		x.RequestedData = []string{}
	}
	ms := func(t time.Time) time.Time { return t.UTC().Truncate(time.Millisecond) }
	msPtr := func(t *time.Time) *time.Time {
		if t == nil {
			return nil
		}
		v := ms(*t)
		return &v
	}
	x.CreatedAt, x.LastUpdatedAt = ms(x.CreatedAt), ms(x.LastUpdatedAt)
	x.StartedAt, x.FinishedAt = msPtr(x.StartedAt), msPtr(x.FinishedAt)
	return logExportAnswer{LogExport: x, Object: "export"}
}

// exportAnswer is the reference's UpdateExportResponse; total is the export's row count,
// known once it has succeeded.
func exportAnswer(id string, total int64) map[string]any {
	return map[string]any{"id": id, "total": total, "object": "export"}
}

// downloadLinkTTL is how long a download link works.
const downloadLinkTTL = time.Hour

// Content types of the export formats.
var exportContentTypes = map[string]string{
	domain.ExportJSONL: "application/x-ndjson",
	domain.ExportCSV:   "text/csv; charset=utf-8",
}

// logExports answers the export routes' common refusals: the feature switched off, or
// exports not set up (no log store, export directory or readable exports).
func (a *Admin) logExports() (LogExportReader, error) {
	if !a.Features.DataExports {
		return nil, domain.Errorf(domain.CodeDisabled, "log exports are turned off (DATA_EXPORTS_ENABLED=OFF)")
	}
	exports, ok := a.Read.(LogExportReader)
	if !ok || a.Analytics == nil || a.ExportDir == "" {
		return nil, domain.Errorf(domain.CodeDisabled, "log exports are not set up on this server: they need a request log store and an export directory")
	}
	return exports, nil
}

// noExportFilters refuses an export body without filters.
func noExportFilters() error {
	return domain.Invalid("filters", "filters is required; send {} to export every row")
}

func logExportID(r *http.Request) (string, error) {
	id := mux.Vars(r)["exportId"]
	if !isUUID(id) {
		return "", domain.Invalid("exportId", "exportId must be a UUID")
	}
	return id, nil
}

// registerLogExports adds the log export routes. Every route needs the logs.export scope;
// organisation keys reach every workspace's exports, workspace keys their own workspace's.
//
// Download answers, as the reference does, a signed_url: a link to this server's
// /logs/exports/{id}/file route that works without an API key until it expires (an hour), so
// a browser or a plain HTTP client can fetch the file, which is streamed from the export
// directory as an attachment.
func (a *Admin) registerLogExports(r *mux.Router) {
	type exportHandler func(w http.ResponseWriter, r *http.Request, exports LogExportReader) (int, any, error)
	on := func(h exportHandler) http.Handler {
		return a.route("log_export", func(w http.ResponseWriter, r *http.Request) (int, any, error) {
			exports, err := a.logExports()
			if err != nil {
				return 0, nil, err
			}
			return h(w, r, exports)
		})
	}
	// writes serves a write route: the export store is the commands', not the route's.
	writes := func(h handler) http.Handler {
		return on(func(w http.ResponseWriter, r *http.Request, _ LogExportReader) (int, any, error) { return h(w, r) })
	}
	// visible reads an export the actor may see, or answers 404 as if it did not exist.
	visible := func(r *http.Request, exports LogExportReader) (domain.LogExport, error) {
		actor := actorFrom(r.Context())
		if err := requireScope(actor, "logs.export"); err != nil {
			return domain.LogExport{}, err
		}
		id, err := logExportID(r)
		if err != nil {
			return domain.LogExport{}, err
		}
		x, err := a.reads().VisibleLogExport(r.Context(), actor, id)
		if err != nil {
			return domain.LogExport{}, err
		}
		return x, nil
	}

	r.Handle("/logs/exports", writes(write(a, a.Commands.CreateLogExport, nowhere,
		func(r *http.Request, _ struct{}, b logExportBody) (commands.CreateLogExport, error) {
			if b.Filters == nil {
				return commands.CreateLogExport{}, noExportFilters()
			}
			// An export holds every matching row of its workspace: a user who may see only their own
			// keys' logs there (membersViewAllData, managersViewAllData) may not export them.
			actor := actorFrom(r.Context())
			ws := b.WorkspaceID
			if ws == "" {
				ws = actor.WorkspaceID
			}
			_, only, err := a.reads().OwnKeysOnly(r.Context(), actor, []string{ws})
			if err != nil {
				return commands.CreateLogExport{}, err
			}
			if only {
				return commands.CreateLogExport{}, domain.Errorf(domain.CodeForbidden,
					"your role sees only the logs of your own API keys in this workspace (membersViewAllData or managersViewAllData is off), so it cannot export them")
			}
			c := commands.CreateLogExport{WorkspaceID: b.WorkspaceID, Filters: b.Filters.LogExportFilters, RequestedData: b.RequestedData}
			if b.Format != nil {
				c.Format = *b.Format
			}
			if b.Description != nil {
				c.Description = *b.Description
			}
			return c, nil
		},
		func(_ *http.Request, _ struct{}, _ commands.CreateLogExport, res commands.Result) (int, any, error) {
			return http.StatusOK, exportAnswer(res.ID, 0), nil
		}))).Methods(http.MethodPost)

	r.Handle("/logs/exports", on(func(w http.ResponseWriter, r *http.Request, exports LogExportReader) (int, any, error) {
		actor := actorFrom(r.Context())
		if err := requireScope(actor, "logs.export"); err != nil {
			return 0, nil, err
		}
		var views []logExportAnswer
		found, err := a.reads().LogExports(r.Context(), actor, r.URL.Query().Get("workspace_id"))
		if err != nil {
			return 0, nil, err
		}
		for _, x := range found {
			views = append(views, logExportView(x))
		}
		list, err := page(r, views)
		return http.StatusOK, list, err
	})).Methods(http.MethodGet)

	r.Handle("/logs/exports/{exportId}", on(func(w http.ResponseWriter, r *http.Request, exports LogExportReader) (int, any, error) {
		x, err := visible(r, exports)
		if err != nil {
			return 0, nil, err
		}
		return http.StatusOK, logExportView(x), nil
	})).Methods(http.MethodGet)

	r.Handle("/logs/exports/{exportId}", writes(write(a, a.Commands.UpdateLogExport, logExportID,
		func(_ *http.Request, id string, b logExportBody) (commands.UpdateLogExport, error) {
			if b.Filters == nil {
				return commands.UpdateLogExport{}, noExportFilters()
			}
			return commands.UpdateLogExport{ExportID: id, WorkspaceID: b.WorkspaceID,
				Filters: &b.Filters.LogExportFilters, RequestedData: b.RequestedData, Format: b.Format, Description: b.Description}, nil
		},
		func(_ *http.Request, id string, _ commands.UpdateLogExport, _ commands.Result) (int, any, error) {
			return http.StatusOK, exportAnswer(id, 0), nil
		}))).Methods(http.MethodPut)

	r.Handle("/logs/exports/{exportId}/start", writes(pathWrite(a, a.Commands.StartLogExport, logExportID,
		func(id string) commands.StartLogExport { return commands.StartLogExport{ExportID: id} },
		func(string) any { return map[string]string{"message": "export started", "object": "export"} },
	))).Methods(http.MethodPost)

	r.Handle("/logs/exports/{exportId}/cancel", writes(pathWrite(a, a.Commands.CancelLogExport, logExportID,
		func(id string) commands.CancelLogExport { return commands.CancelLogExport{ExportID: id} },
		func(string) any { return map[string]string{"message": "export cancelled", "object": "export"} },
	))).Methods(http.MethodPost)

	r.Handle("/logs/exports/{exportId}/download", on(func(w http.ResponseWriter, r *http.Request, exports LogExportReader) (int, any, error) {
		x, err := visible(r, exports)
		if err != nil {
			return 0, nil, err
		}
		if x.Status != domain.ExportSuccess {
			return 0, nil, domain.Errorf(domain.CodeConflict, "log export %s is %s; it can be downloaded once it has succeeded", x.ID, x.Status)
		}
		if len(a.Secret) == 0 {
			return 0, nil, domain.Errorf(domain.CodeDisabled, "download links need the server secret, which is not set")
		}
		expires := a.Now().Add(downloadLinkTTL).UTC().Truncate(time.Second)
		link := a.baseURL(r) + BasePath + "/logs/exports/" + x.ID + "/file?token=" +
			url.QueryEscape(a.downloadToken(x.OrganisationID, x.ID, expires))
		return http.StatusOK, map[string]any{"signed_url": link, "expires_at": expires}, nil
	})).Methods(http.MethodGet)

	r.Handle("/logs/exports/{exportId}/file", http.HandlerFunc(a.serveLogExportFile)).Methods(http.MethodGet, http.MethodHead)
}

// baseURL is how clients reach this service: PublicURL, or the request's own scheme and host.
func (a *Admin) baseURL(r *http.Request) string {
	if a.PublicURL != "" {
		return strings.TrimSuffix(a.PublicURL, "/")
	}
	scheme := "http"
	if r.TLS != nil || strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https") {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// downloadKey is the download links' own key, derived from the server secret so that it
// signs nothing else.
func (a *Admin) downloadKey() []byte {
	m := hmac.New(sha256.New, a.Secret)
	m.Write([]byte("causeway log export download links"))
	return m.Sum(nil)
}

// downloadToken signs which export of which organisation may be fetched, until when.
func (a *Admin) downloadToken(orgID, id string, expires time.Time) string {
	payload := orgID + "\n" + id + "\n" + strconv.FormatInt(expires.Unix(), 10)
	m := hmac.New(sha256.New, a.downloadKey())
	m.Write([]byte(payload))
	enc := base64.RawURLEncoding
	return enc.EncodeToString([]byte(payload)) + "." + enc.EncodeToString(m.Sum(nil))
}

// checkDownloadToken returns the organisation a token grants export id of, if the token is
// genuine, for that export, and not expired.
func (a *Admin) checkDownloadToken(id, token string) (string, error) {
	refused := domain.Errorf(domain.CodeForbidden, "this download link is not valid; ask for a new one")
	raw, sig, ok := strings.Cut(token, ".")
	if !ok || len(a.Secret) == 0 {
		return "", refused
	}
	enc := base64.RawURLEncoding
	payload, err1 := enc.DecodeString(raw)
	got, err2 := enc.DecodeString(sig)
	if err1 != nil || err2 != nil {
		return "", refused
	}
	m := hmac.New(sha256.New, a.downloadKey())
	m.Write(payload)
	if !hmac.Equal(got, m.Sum(nil)) {
		return "", refused
	}
	parts := strings.Split(string(payload), "\n")
	if len(parts) != 3 || parts[1] != id {
		return "", refused
	}
	exp, err := strconv.ParseInt(parts[2], 10, 64)
	if err != nil {
		return "", refused
	}
	if !a.Now().Before(time.Unix(exp, 0)) {
		return "", domain.Errorf(domain.CodeForbidden, "this download link has expired; ask for a new one")
	}
	return parts[0], nil
}

// serveLogExportFile streams an export's file to whoever holds a valid download link; the
// link stands in for the API key, as a pre-signed URL does.
func (a *Admin) serveLogExportFile(w http.ResponseWriter, r *http.Request) {
	if err := a.streamLogExportFile(w, r); err != nil {
		WriteError(w, r, a.Log, err)
	}
}

func (a *Admin) streamLogExportFile(w http.ResponseWriter, r *http.Request) error {
	if !a.Features.APIAccess {
		return domain.Errorf(domain.CodeDisabled, "the admin API is turned off (API_ACCESS_ENABLED=OFF)")
	}
	if _, err := a.logExports(); err != nil {
		return err
	}
	id, err := logExportID(r)
	if err != nil {
		return err
	}
	orgID, err := a.checkDownloadToken(id, r.URL.Query().Get("token"))
	if err != nil {
		return err
	}
	x, err := a.reads().LogExport(r.Context(), orgID, id)
	if err != nil {
		return err
	}
	if x.Status != domain.ExportSuccess {
		return domain.Errorf(domain.CodeConflict, "log export %s is %s; it can be downloaded once it has succeeded", x.ID, x.Status)
	}
	f, err := os.Open(filepath.Join(a.ExportDir, filepath.Base(x.FileName)))
	if errors.Is(err, os.ErrNotExist) {
		return domain.Errorf(domain.CodeNotFound, "the file of log export %s is no longer there", id)
	}
	if err != nil {
		return err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", exportContentTypes[x.Format])
	w.Header().Set("Content-Disposition", `attachment; filename="`+filepath.Base(x.FileName)+`"`)
	w.Header().Set("Cache-Control", "private, no-store")
	http.ServeContent(w, r, x.FileName, info.ModTime(), f)
	return nil
}
