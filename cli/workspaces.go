package cli

import (
	"net/http"

	"github.com/spf13/cobra"
)

var (
	workspaceColumns = []column{col("ID", "id"), col("SLUG", "slug"), col("NAME", "name"), col("STATUS", "status"),
		col("BUDGET", "budget_status"), col("CREATED", "created_at")}
	workspaceView = view{object: []column{col("id", "id"), col("slug", "slug"), col("name", "name"),
		col("description", "description"), col("status", "status"), col("budget_status", "budget_status"),
		col("current_usage", "current_usage"), col("usage_limits", "usage_limits"), col("rate_limits", "rate_limits"),
		col("periodic_reset", "periodic_reset"), col("next_usage_reset_at", "next_usage_reset_at"),
		{head: "members", path: "users", format: count}, col("created_at", "created_at"), col("last_updated_at", "last_updated_at")}}
	memberColumns = []column{col("ID", "id"), col("EMAIL", "email"), col("FIRST NAME", "first_name"),
		col("LAST NAME", "last_name"), col("ROLE", "role"), col("ORG ROLE", "org_role")}
)

func (a *app) workspacesCmd() *cobra.Command {
	list := &cobra.Command{Use: "list", Short: "list the workspaces", Args: args(),
		RunE: action(func(cmd *cobra.Command, _ []string) error {
			q := listQuery(cmd, map[string]string{"name": "name", "status": "status"})
			return a.get(cmd.Context(), "/workspaces", q, view{list: workspaceColumns})
		})}
	pageFlags(list)
	statusFlag(list)
	list.Flags().String("name", "", "only workspaces whose name holds this")

	get := &cobra.Command{Use: "get <workspace>", Short: "show a workspace (by id or slug) and its members", Args: args("<workspace>"),
		RunE: action(func(cmd *cobra.Command, in []string) error {
			return a.get(cmd.Context(), "/workspaces/"+seg(in[0]), nil, workspaceView)
		})}

	create := &cobra.Command{Use: "create", Short: "create a workspace", Args: args()}
	createBody := withBody(create, workspaceFields(true)...)
	create.RunE = action(func(cmd *cobra.Command, _ []string) error {
		body, err := createBody.build(a.opts.Stdin, nil)
		if err != nil {
			return err
		}
		return a.call(cmd.Context(), http.MethodPost, "/workspaces", nil, body, workspaceView)
	})

	update := &cobra.Command{Use: "update <workspace>", Short: "change a workspace's name, description, limits or reset", Args: args("<workspace>")}
	updateBody := withBody(update, workspaceFields(false)...)
	update.RunE = action(func(cmd *cobra.Command, in []string) error {
		body, err := updateBody.build(a.opts.Stdin, nil)
		if err != nil {
			return err
		}
		return a.call(cmd.Context(), http.MethodPut, "/workspaces/"+seg(in[0]), nil, body, workspaceView)
	})

	archive := &cobra.Command{Use: "archive <workspace>", Short: "archive a workspace", Args: args("<workspace>"),
		RunE: action(func(cmd *cobra.Command, in []string) error {
			return a.call(cmd.Context(), http.MethodDelete, "/workspaces/"+seg(in[0]), nil, nil, workspaceView)
		})}

	return group("workspaces", "workspaces and their members", list, get, create, update, archive, a.membersCmd())
}

func workspaceFields(create bool) []field {
	fields := []field{
		{flag: "name", key: "name", usage: "the workspace's name"},
		{flag: "description", key: "description", usage: "what the workspace is for"},
		{flag: "usage-limits", key: "usage_limits", kind: jsonField, usage: `budgets as JSON, e.g. [{"type":"cost","credit_limit":100}] (or @file)`},
		{flag: "rate-limits", key: "rate_limits", kind: jsonField, usage: `rate limits as JSON, e.g. [{"type":"requests","unit":"rpm","value":60}] (or @file)`},
		{flag: "periodic-reset", key: "periodic_reset", usage: "when usage starts again from zero: weekly or monthly"},
		{flag: "periodic-reset-days", key: "periodic_reset_days", kind: intField, usage: "or every this many days"},
	}
	if create {
		fields = append(fields, field{flag: "slug", key: "slug", usage: "the workspace's slug (made from the name when left out)"})
	}
	return fields
}

func (a *app) membersCmd() *cobra.Command {
	path := func(cmd *cobra.Command) (string, error) {
		ref := workspace(cmd)
		if ref == "" {
			return "", usagef("%s needs --workspace", cmd.CommandPath())
		}
		return "/workspaces/" + seg(ref) + "/users", nil
	}

	list := &cobra.Command{Use: "list", Short: "list a workspace's members", Args: args(),
		RunE: action(func(cmd *cobra.Command, _ []string) error {
			p, err := path(cmd)
			if err != nil {
				return err
			}
			q := listQuery(cmd, map[string]string{"role": "role", "email": "email"})
			return a.get(cmd.Context(), p, q, view{list: memberColumns})
		})}
	workspaceFlag(list, "the workspace")
	pageFlags(list)
	list.Flags().String("role", "", "only members of this role: admin, manager or member")
	list.Flags().String("email", "", "only the member with this email")

	add := &cobra.Command{Use: "add", Short: "add users to a workspace", Args: args()}
	workspaceFlag(add, "the workspace")
	addBody := withBody(add)
	users := add.Flags().StringSlice("user", nil, "a user's id to add (repeat, or comma-separate, for several)")
	role := add.Flags().String("role", "member", "the role the users get: admin, manager or member")
	add.RunE = action(func(cmd *cobra.Command, _ []string) error {
		p, err := path(cmd)
		if err != nil {
			return err
		}
		set := map[string]any{}
		if len(*users) > 0 {
			var list []map[string]string
			for _, u := range *users {
				list = append(list, map[string]string{"id": u, "role": *role})
			}
			set["users"] = list
		} else if addBody.data == "" && addBody.file == "" {
			return usagef("%s needs --user (or --data/--file with the body)", cmd.CommandPath())
		}
		body, err := addBody.build(a.opts.Stdin, set)
		if err != nil {
			return err
		}
		return a.call(cmd.Context(), http.MethodPost, p, nil, body, view{list: memberColumns})
	})

	remove := &cobra.Command{Use: "remove <user-id>", Short: "remove a member from a workspace", Args: args("<user-id>"),
		RunE: action(func(cmd *cobra.Command, in []string) error {
			p, err := path(cmd)
			if err != nil {
				return err
			}
			return a.call(cmd.Context(), http.MethodDelete, p+"/"+seg(in[0]), nil, nil, done("id", "workspace_id", "status"))
		})}
	workspaceFlag(remove, "the workspace")

	return group("members", "a workspace's members", list, add, remove)
}
