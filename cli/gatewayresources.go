package cli

import (
	"net/http"
	"net/url"

	"github.com/spf13/cobra"
)

// The gateway's resources: saved configs, managed providers, integrations and guardrails.

var (
	configColumns = []column{col("ID", "id"), col("SLUG", "slug"), col("NAME", "name"), col("WORKSPACE", "workspace_id"),
		col("DEFAULT", "is_default"), col("STATUS", "status"), col("VERSION", "version_id")}
	configView = view{object: []column{col("id", "id"), col("slug", "slug"), col("name", "name"),
		col("workspace_id", "workspace_id"), col("is_default", "is_default"), col("status", "status"),
		col("version_id", "version_id"), col("config", "config"), col("created_at", "created_at"),
		col("last_updated_at", "last_updated_at")}}

	providerColumns = []column{col("SLUG", "slug"), col("NAME", "name"), col("PROVIDER", "ai_provider_id"),
		col("INTEGRATION", "integration_id"), col("WORKSPACE", "workspace_id"), col("STATUS", "status"), col("KEY", "masked_key")}
	providerView = view{object: []column{col("id", "id"), col("slug", "slug"), col("name", "name"),
		col("ai_provider_id", "ai_provider_id"), col("integration_id", "integration_id"), col("workspace_id", "workspace_id"),
		col("status", "status"), col("masked_key", "masked_key"), col("configurations", "configurations"),
		col("usage_limits", "usage_limits"), col("rate_limits", "rate_limits"), col("expires_at", "expires_at"),
		col("tags", "tags"), col("note", "note"), col("created_at", "created_at"), col("last_updated_at", "last_updated_at")}}

	integrationColumns = []column{col("SLUG", "slug"), col("NAME", "name"), col("PROVIDER", "ai_provider_id"),
		col("WORKSPACE", "workspace_id"), col("STATUS", "status"), col("KEY", "masked_key")}
	integrationView = view{object: []column{col("id", "id"), col("slug", "slug"), col("name", "name"),
		col("ai_provider_id", "ai_provider_id"), col("description", "description"), col("workspace_id", "workspace_id"),
		col("status", "status"), col("masked_key", "masked_key"), col("configurations", "configurations"),
		col("workspace_count", "workspace_count"), col("tags", "tags"), col("created_at", "created_at"),
		col("last_updated_at", "last_updated_at")}}

	guardrailColumns = []column{col("ID", "id"), col("SLUG", "slug"), col("NAME", "name"), col("WORKSPACE", "workspace_id"),
		col("STATUS", "status"), col("VERSION", "version_id")}
	guardrailView = view{object: []column{col("id", "id"), col("slug", "slug"), col("name", "name"),
		col("workspace_id", "workspace_id"), col("status", "status"), col("version_id", "version_id"),
		col("checks", "checks"), col("actions", "actions"), col("created_at", "created_at"),
		col("last_updated_at", "last_updated_at")}}
)

// resource describes a gateway resource for the commands they share: named in paths by its
// slug (or id), archived by DELETE.
type resource struct {
	name, plural string
	path         string
	columns      []column
	object       view
	create       []field
	update       []field
	// byWorkspace: reads and writes of one take ?workspace_id= (a slug may be used in several
	// workspaces of an organisation).
	byWorkspace bool
	// listFilters are list flags beyond --workspace and --status, by their parameter.
	listFilters map[string]string
	// written is how an update's answer prints: the resource, or (zero) confirmed, for those
	// whose writes answer only their id, slug and version.
	written view
}

var (
	configResource = resource{name: "config", plural: "configs", path: "/configs", columns: configColumns, object: configView,
		create: []field{
			{flag: "name", key: "name", usage: "the config's name"},
			{flag: "slug", key: "slug", usage: "the config's slug, which x-gateway-config names"},
			{flag: "config", key: "config", kind: jsonField, usage: `the config as JSON (or @file), e.g. {"provider":"@my-openai"}`},
			{flag: "default", key: "is_default", kind: boolField, usage: "make it its workspace's default config"},
		},
		update: []field{
			{flag: "name", key: "name", usage: "the config's name"},
			{flag: "config", key: "config", kind: jsonField, usage: "the config as JSON (or @file): a new version"},
			{flag: "default", key: "is_default", kind: boolField, usage: "make it (or, =false, no longer) its workspace's default"},
		}}
	providerResource = resource{name: "provider", plural: "providers", path: "/providers", columns: providerColumns,
		object: providerView, written: providerView, byWorkspace: true,
		listFilters: map[string]string{"integration": "integration_id", "provider": "ai_provider_id"},
		create: []field{
			{flag: "name", key: "name", usage: "the provider's name"},
			{flag: "slug", key: "slug", usage: "the provider's slug: requests name it as @slug"},
			{flag: "provider", key: "ai_provider_id", usage: "the AI provider (openai, anthropic, ...) for a provider with a key of its own"},
			{flag: "key", key: "key", usage: "the provider's API key, sealed before it is stored (--file keeps it off the command line)"},
			{flag: "custom-host", key: "configurations.custom_host", usage: "the provider's base URL, when not its usual one"},
			{flag: "integration", key: "integration_slug", usage: "or the integration (by slug) whose credential it uses"},
			{flag: "note", key: "note", usage: "a note"},
			{flag: "usage-limits", key: "usage_limits", kind: jsonField, usage: `a budget as JSON, e.g. {"type":"cost","credit_limit":100} (or @file)`},
			{flag: "rate-limits", key: "rate_limits", kind: jsonField, usage: "rate limits as JSON (or @file)"},
		},
		update: []field{
			{flag: "name", key: "name", usage: "the provider's name"},
			{flag: "key", key: "key", usage: "a new API key for the provider"},
			{flag: "custom-host", key: "configurations.custom_host", usage: "the provider's base URL"},
			{flag: "note", key: "note", usage: "a note"},
			{flag: "usage-limits", key: "usage_limits", kind: jsonField, usage: "a budget as JSON (or @file)"},
			{flag: "rate-limits", key: "rate_limits", kind: jsonField, usage: "rate limits as JSON (or @file)"},
			{flag: "reset-usage", key: "reset_usage", kind: boolField, usage: "start the provider's usage again from zero"},
		}}
	integrationResource = resource{name: "integration", plural: "integrations", path: "/integrations",
		columns: integrationColumns, object: integrationView,
		listFilters: map[string]string{"provider": "ai_provider_id", "type": "type"}}
	guardrailResource = resource{name: "guardrail", plural: "guardrails", path: "/guardrails", columns: guardrailColumns,
		object: guardrailView,
		create: []field{
			{flag: "name", key: "name", usage: "the guardrail's name"},
			{flag: "slug", key: "slug", usage: "the guardrail's slug, which configs name"},
			{flag: "checks", key: "checks", kind: jsonField, usage: `the checks as JSON (or @file), e.g. [{"id":"default.regexMatch","parameters":{"rule":"secret"}}]`},
			{flag: "actions", key: "actions", kind: jsonField, usage: `what a failed check does, as JSON (or @file), e.g. {"deny":true}`},
		},
		update: []field{
			{flag: "name", key: "name", usage: "the guardrail's name"},
			{flag: "checks", key: "checks", kind: jsonField, usage: "the checks as JSON (or @file): a new version"},
			{flag: "actions", key: "actions", kind: jsonField, usage: "the actions as JSON (or @file)"},
		}}
)

func (a *app) configsCmd() *cobra.Command {
	return a.resourceCmd(configResource, "saved configs: routing, fallbacks, caching", true)
}

func (a *app) providersCmd() *cobra.Command {
	return a.resourceCmd(providerResource, "managed providers (virtual keys): provider credentials kept by the gateway", true)
}

func (a *app) integrationsCmd() *cobra.Command {
	return a.resourceCmd(integrationResource, "integrations: provider credentials shared with workspaces", false)
}

func (a *app) guardrailsCmd() *cobra.Command {
	return a.resourceCmd(guardrailResource, "guardrails: checks on requests and answers", true)
}

// resourceCmd is list and get for r, and create, update and archive when writes is set.
func (a *app) resourceCmd(r resource, short string, writes bool) *cobra.Command {
	ref := "<" + r.name + ">"
	list := &cobra.Command{Use: "list", Short: "list " + r.plural, Args: args()}
	workspaceFlag(list, "only the "+r.plural+" of this workspace")
	pageFlags(list)
	statusFlag(list)
	params := map[string]string{"status": "status"}
	for flag, param := range r.listFilters {
		list.Flags().String(flag, "", "only "+r.plural+" whose "+param+" is this")
		params[flag] = param
	}
	list.RunE = action(func(cmd *cobra.Command, _ []string) error {
		q := listQuery(cmd, params)
		if err := a.workspaceQuery(cmd.Context(), cmd, q); err != nil {
			return err
		}
		return a.get(cmd.Context(), r.path, q, view{list: r.columns})
	})

	// query is the query naming one resource: its workspace, where a slug needs one.
	query := func(cmd *cobra.Command) (url.Values, error) {
		q := url.Values{}
		if !r.byWorkspace {
			return q, nil
		}
		return q, a.workspaceQuery(cmd.Context(), cmd, q)
	}
	get := &cobra.Command{Use: "get " + ref, Short: "show a " + r.name + " (by slug or id)", Args: args(ref),
		RunE: action(func(cmd *cobra.Command, in []string) error {
			q, err := query(cmd)
			if err != nil {
				return err
			}
			return a.get(cmd.Context(), r.path+"/"+seg(in[0]), q, r.object)
		})}
	if r.byWorkspace {
		workspaceFlag(get, "the "+r.name+"'s workspace, where its slug is used in several")
	}
	commands := []*cobra.Command{list, get}
	if !writes {
		return group(r.plural, short, commands...)
	}

	create := &cobra.Command{Use: "create", Short: "create a " + r.name, Args: args()}
	workspaceFlag(create, "the "+r.name+"'s workspace")
	createBody := withBody(create, r.create...)
	create.RunE = action(func(cmd *cobra.Command, _ []string) error {
		set, err := a.workspaceBody(cmd.Context(), cmd)
		if err != nil {
			return err
		}
		body, err := createBody.build(a.opts.Stdin, set)
		if err != nil {
			return err
		}
		return a.call(cmd.Context(), http.MethodPost, r.path, nil, body, confirmed)
	})

	update := &cobra.Command{Use: "update " + ref, Short: "change a " + r.name, Args: args(ref)}
	updateBody := withBody(update, r.update...)
	if r.byWorkspace {
		workspaceFlag(update, "the "+r.name+"'s workspace, where its slug is used in several")
	}
	update.RunE = action(func(cmd *cobra.Command, in []string) error {
		q, err := query(cmd)
		if err != nil {
			return err
		}
		body, err := updateBody.build(a.opts.Stdin, nil)
		if err != nil {
			return err
		}
		v := r.written
		if v.custom == nil && v.object == nil {
			v = confirmed
		}
		return a.call(cmd.Context(), http.MethodPut, r.path+"/"+seg(in[0]), q, body, v)
	})

	archive := &cobra.Command{Use: "archive " + ref, Short: "archive a " + r.name, Args: args(ref),
		RunE: action(func(cmd *cobra.Command, in []string) error {
			q, err := query(cmd)
			if err != nil {
				return err
			}
			return a.call(cmd.Context(), http.MethodDelete, r.path+"/"+seg(in[0]), q, nil, confirmed)
		})}
	if r.byWorkspace {
		workspaceFlag(archive, "the "+r.name+"'s workspace, where its slug is used in several")
	}
	return group(r.plural, short, append(commands, create, update, archive)...)
}
