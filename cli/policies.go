package cli

import (
	"net/http"

	"github.com/spf13/cobra"
)

// policy describes one kind of policy for the commands they share.
type policy struct {
	use, short string
	path       string
	columns    []column
	object     []column
	create     []field
	update     []field
	listFlags  func(cmd *cobra.Command) map[string]string
	getFlags   func(cmd *cobra.Command) map[string]string
}

// Condition and group_by flags, which both kinds of policy take at creation.
var policyScopeFields = []field{
	{flag: "name", key: "name", usage: "the policy's name"},
	{flag: "condition", key: "conditions", kind: pairsField,
		usage: "which requests the policy applies to, key=value (repeat): api_key, workspace_id, endpoint_type, metadata.<field>"},
	{flag: "group-by", key: "group_by", kind: keysField,
		usage: "what the policy counts apart (repeat or comma-separate): api_key, workspace_id, metadata.<field>"},
	{flag: "conditions", key: "conditions", kind: jsonField, usage: "conditions as JSON (or @file), instead of --condition"},
}

var (
	rateLimitPolicy = policy{
		use: "rate-limits", short: "rate-limit policies", path: "/policies/rate-limits",
		columns: []column{col("ID", "id"), col("NAME", "name"), col("TYPE", "type"), col("UNIT", "unit"), col("VALUE", "value"),
			col("WORKSPACE", "workspace_id"), col("STATUS", "status")},
		object: []column{col("id", "id"), col("name", "name"), col("type", "type"), col("unit", "unit"), col("value", "value"),
			col("conditions", "conditions"), col("group_by", "group_by"), col("workspace_id", "workspace_id"),
			col("status", "status"), col("created_at", "created_at"), col("last_updated_at", "last_updated_at")},
		create: append([]field{
			{flag: "type", key: "type", usage: "what is counted: requests or tokens"},
			{flag: "unit", key: "unit", usage: "the window: rpm, rph, rpd or rpw"},
			{flag: "value", key: "value", kind: numberField, usage: "how many a window allows"},
		}, policyScopeFields...),
		update: []field{
			{flag: "name", key: "name", usage: "the policy's name"},
			{flag: "unit", key: "unit", usage: "the window: rpm, rph, rpd or rpw"},
			{flag: "value", key: "value", kind: numberField, usage: "how many a window allows"},
		},
	}
	usageLimitPolicy = policy{
		use: "usage-limits", short: "usage-limit policies (budgets)", path: "/policies/usage-limits",
		columns: []column{col("ID", "id"), col("NAME", "name"), col("TYPE", "type"), col("CREDIT LIMIT", "credit_limit"),
			col("ALERT AT", "alert_threshold"), col("RESET", "periodic_reset"), col("WORKSPACE", "workspace_id"), col("STATUS", "status")},
		object: []column{col("id", "id"), col("name", "name"), col("type", "type"), col("credit_limit", "credit_limit"),
			col("alert_threshold", "alert_threshold"), col("periodic_reset", "periodic_reset"),
			col("periodic_reset_days", "periodic_reset_days"), col("next_usage_reset_at", "next_usage_reset_at"),
			col("conditions", "conditions"), col("group_by", "group_by"), col("workspace_id", "workspace_id"),
			col("status", "status"), col("value_key_usage_map", "value_key_usage_map"),
			col("created_at", "created_at"), col("last_updated_at", "last_updated_at")},
		create: append([]field{
			{flag: "type", key: "type", usage: "what the budget counts: cost (USD) or tokens"},
			{flag: "credit-limit", key: "credit_limit", kind: numberField, usage: "the budget"},
			{flag: "alert-threshold", key: "alert_threshold", kind: numberField, usage: "usage at which an alert is sent"},
			{flag: "periodic-reset", key: "periodic_reset", usage: "when usage starts again from zero: weekly or monthly"},
			{flag: "periodic-reset-days", key: "periodic_reset_days", kind: intField, usage: "or every this many days"},
		}, policyScopeFields...),
		update: []field{
			{flag: "name", key: "name", usage: "the policy's name"},
			{flag: "credit-limit", key: "credit_limit", kind: numberField, usage: "the budget"},
			{flag: "alert-threshold", key: "alert_threshold", kind: numberField, usage: "usage at which an alert is sent"},
			{flag: "periodic-reset", key: "periodic_reset", usage: "when usage starts again from zero: weekly or monthly"},
			{flag: "periodic-reset-days", key: "periodic_reset_days", kind: intField, usage: "or every this many days"},
			{flag: "reset-usage-for", key: "reset_usage_for_value", usage: "start one value key's usage again from zero"},
		},
		listFlags: func(cmd *cobra.Command) map[string]string {
			cmd.Flags().String("type", "", "only policies of this type: cost or tokens")
			return map[string]string{"type": "type"}
		},
		getFlags: func(cmd *cobra.Command) map[string]string {
			cmd.Flags().String("include-usage", "", "true: with the usage of each value key")
			return map[string]string{"include-usage": "include_usage"}
		},
	}
)

func (a *app) policiesCmd() *cobra.Command {
	return group("policies", "rate-limit and usage-limit (budget) policies",
		a.policyCmd(rateLimitPolicy), a.policyCmd(usageLimitPolicy))
}

func (a *app) policyCmd(p policy) *cobra.Command {
	list := &cobra.Command{Use: "list", Short: "list " + p.short, Args: args()}
	workspaceFlag(list, "only the policies of this workspace")
	pageFlags(list)
	statusFlag(list)
	params := map[string]string{"status": "status"}
	if p.listFlags != nil {
		for k, v := range p.listFlags(list) {
			params[k] = v
		}
	}
	list.RunE = action(func(cmd *cobra.Command, _ []string) error {
		q := listQuery(cmd, params)
		if err := a.workspaceQuery(cmd.Context(), cmd, q); err != nil {
			return err
		}
		return a.get(cmd.Context(), p.path, q, view{list: p.columns})
	})

	get := &cobra.Command{Use: "get <policy-id>", Short: "show a policy", Args: args("<policy-id>")}
	statusFlag(get)
	getParams := map[string]string{"status": "status"}
	if p.getFlags != nil {
		for k, v := range p.getFlags(get) {
			getParams[k] = v
		}
	}
	get.RunE = action(func(cmd *cobra.Command, in []string) error {
		return a.get(cmd.Context(), p.path+"/"+seg(in[0]), listQuery(cmd, getParams), view{object: p.object})
	})

	create := &cobra.Command{Use: "create", Short: "create a policy", Args: args()}
	workspaceFlag(create, "the policy's workspace")
	createBody := withBody(create, p.create...)
	create.MarkFlagsMutuallyExclusive("condition", "conditions")
	create.RunE = action(func(cmd *cobra.Command, _ []string) error {
		set, err := a.workspaceBody(cmd.Context(), cmd)
		if err != nil {
			return err
		}
		body, err := createBody.build(a.opts.Stdin, set)
		if err != nil {
			return err
		}
		return a.call(cmd.Context(), http.MethodPost, p.path, nil, body, confirmed)
	})

	update := &cobra.Command{Use: "update <policy-id>", Short: "change a policy", Args: args("<policy-id>")}
	updateBody := withBody(update, p.update...)
	update.RunE = action(func(cmd *cobra.Command, in []string) error {
		body, err := updateBody.build(a.opts.Stdin, nil)
		if err != nil {
			return err
		}
		return a.call(cmd.Context(), http.MethodPut, p.path+"/"+seg(in[0]), nil, body, view{object: p.object})
	})

	del := &cobra.Command{Use: "delete <policy-id>", Short: "delete (archive) a policy", Args: args("<policy-id>"),
		RunE: action(func(cmd *cobra.Command, in []string) error {
			return a.call(cmd.Context(), http.MethodDelete, p.path+"/"+seg(in[0]), nil, nil, confirmed)
		})}

	return group(p.use, p.short, list, get, create, update, del)
}
