package cli

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
)

// call sends one request and prints its answer as v says.
func (a *app) call(ctx context.Context, method, path string, query url.Values, body []byte, v view) error {
	raw, err := a.api.do(ctx, method, path, query, body)
	if err != nil {
		return err
	}
	return a.print(raw, v)
}

// get is call for a GET.
func (a *app) get(ctx context.Context, path string, query url.Values, v view) error {
	return a.call(ctx, http.MethodGet, path, query, nil, v)
}

// seg escapes one path segment (an id or a slug given on the command line).
func seg(s string) string { return url.PathEscape(s) }

var uuidPattern = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

func isUUID(s string) bool { return uuidPattern.MatchString(s) }

// workspaceRef is a workspace's id and slug.
type workspaceRef struct{ id, slug string }

// workspaceFlag adds --workspace to cmd: a workspace's id or slug.
func workspaceFlag(cmd *cobra.Command, usage string) {
	cmd.Flags().String("workspace", "", usage+" (id or slug)")
}

// workspace is the workspace --workspace names, if any.
func workspace(cmd *cobra.Command) string {
	v, _ := cmd.Flags().GetString("workspace")
	return strings.TrimSpace(v)
}

// lookupWorkspace reads the workspace ref names (by id or slug), once a run.
func (a *app) lookupWorkspace(ctx context.Context, ref string) (workspaceRef, error) {
	if w, ok := a.workspaces[ref]; ok {
		return w, nil
	}
	var ws struct {
		ID   string `json:"id"`
		Slug string `json:"slug"`
	}
	if err := a.api.getJSON(ctx, "/workspaces/"+seg(ref), nil, &ws); err != nil {
		return workspaceRef{}, fmt.Errorf("workspace %q: %w", ref, err)
	}
	w := workspaceRef{id: ws.ID, slug: ws.Slug}
	a.workspaces[ref] = w
	return w, nil
}

// workspaceID is the id of the workspace ref names: ref itself when it is an id, else the id
// of the workspace with that slug (the admin routes' workspace_id filters and bodies take ids).
func (a *app) workspaceID(ctx context.Context, ref string) (string, error) {
	if ref == "" || isUUID(ref) {
		return ref, nil
	}
	w, err := a.lookupWorkspace(ctx, ref)
	return w.id, err
}

// workspaceSlug is the slug of the workspace ref names: ref itself when it is not an id (the
// traffic routes, logs and analytics, filter by workspace_slug).
func (a *app) workspaceSlug(ctx context.Context, ref string) (string, error) {
	if ref == "" || !isUUID(ref) {
		return ref, nil
	}
	w, err := a.lookupWorkspace(ctx, ref)
	return w.slug, err
}

// workspaceQuery sets workspace_id in q from the command line's workspace, if it names one.
func (a *app) workspaceQuery(ctx context.Context, cmd *cobra.Command, q url.Values) error {
	id, err := a.workspaceID(ctx, workspace(cmd))
	if err != nil {
		return err
	}
	if id != "" {
		q.Set("workspace_id", id)
	}
	return nil
}

// workspaceBody is the body's workspace_id from --workspace, when given: it wins over the
// body's own.
func (a *app) workspaceBody(ctx context.Context, cmd *cobra.Command) (map[string]any, error) {
	set := map[string]any{}
	id, err := a.workspaceID(ctx, workspace(cmd))
	if err != nil {
		return nil, err
	}
	if id != "" {
		set["workspace_id"] = id
	}
	return set, nil
}

// pageFlags adds --page and --page-size to a list command.
func pageFlags(cmd *cobra.Command) {
	cmd.Flags().Int("page", 0, "the page to show, from 0")
	cmd.Flags().Int("page-size", 0, "rows a page (the API's default when left out)")
}

// pageQuery sets current_page and page_size in q from --page and --page-size.
func pageQuery(cmd *cobra.Command, q url.Values) {
	for flag, param := range map[string]string{"page": "current_page", "page-size": "page_size"} {
		if flagChanged(cmd.Flags(), flag) {
			n, _ := cmd.Flags().GetInt(flag)
			q.Set(param, strconv.Itoa(n))
		}
	}
}

// statusFlag adds --status to a list command of resources that can be archived.
func statusFlag(cmd *cobra.Command) {
	cmd.Flags().String("status", "", "active (the default), archived, or both comma-separated")
}

// stringQuery sets param in q from a string flag, when given.
func stringQuery(cmd *cobra.Command, q url.Values, flag, param string) {
	if flagChanged(cmd.Flags(), flag) {
		v, _ := cmd.Flags().GetString(flag)
		q.Set(param, v)
	}
}

// listQuery is the query of a list command: --page, --page-size, and each string flag given,
// by its parameter.
func listQuery(cmd *cobra.Command, params map[string]string) url.Values {
	q := url.Values{}
	pageQuery(cmd, q)
	for flag, param := range params {
		stringQuery(cmd, q, flag, param)
	}
	return q
}

// done is the view of an answer that only confirms a write: the fields of those named that it
// has (unwrapped from {"success": true, "data": ...}).
func done(fields ...string) view {
	return view{custom: func(w io.Writer, doc any) error {
		obj, _ := unwrap(doc).(map[string]any)
		var cols []column
		for _, f := range fields {
			if _, ok := obj[f]; ok {
				cols = append(cols, col(f, f))
			}
		}
		return writeObject(w, cols, obj)
	}}
}

// confirmed is done for the fields a write's answer names its resource by.
var confirmed = done("id", "slug", "version_id", "status", "deleted")
