package cli

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
)

// Prompts, their partials, labels and collections: named in paths by id or slug (a label by
// id or name), and a prompt with @n, @latest, @default or @<label> after it. Their routes take
// a workspace as an id or a slug, so --workspace is sent as it is given.

var (
	promptColumns = []column{col("ID", "id"), col("SLUG", "slug"), col("NAME", "name"), col("MODEL", "model"),
		col("COLLECTION", "collection_id"), col("WORKSPACE", "workspace_id"), col("STATUS", "status"), col("UPDATED", "last_updated_at")}
	promptView = view{object: []column{col("id", "id"), col("slug", "slug"), col("name", "name"),
		col("collection_id", "collection_id"), col("workspace_id", "workspace_id"), col("status", "status"),
		col("default_version", "default_version"), col("version", "prompt_version"), col("version_id", "prompt_version_id"),
		col("version_description", "prompt_version_description"), col("version_label_id", "prompt_version_label_id"),
		col("model", "model"), col("virtual_key", "virtual_key"), col("parameters", "parameters"), col("string", "string"),
		col("functions", "functions"), col("tools", "tools"), col("tool_choice", "tool_choice"),
		col("template_metadata", "template_metadata"), col("is_raw_template", "is_raw_template"),
		col("created_at", "created_at"), col("last_updated_at", "last_updated_at")}}
	promptVersionColumns = []column{col("VERSION", "prompt_version"), col("DEFAULT", "is_default"), col("LABEL", "label_id"),
		col("MODEL", "prompt_template.model"), col("DESCRIPTION", "prompt_description"), col("CREATED BY", "created_by"),
		col("CREATED", "created_at"), col("ID", "id")}
)

// promptVersionFields are the flags of a prompt version's fields: sending any of them makes a
// new version. metadataKey is the version metadata's field, which the reference spells
// template_metadata on create and prompt_metadata on update.
func promptVersionFields(metadataKey string) []field {
	return []field{
		{flag: "string", key: "string", kind: longTextField,
			usage: `the template (Mustache): a JSON array of chat messages, or text sent as one user message (or @file)`},
		{flag: "parameters", key: "parameters", kind: jsonField, usage: `the model's parameters as JSON (or @file), e.g. {"temperature":0.3}`},
		{flag: "model", key: "model", usage: "the model it is sent to"},
		{flag: "virtual-key", key: "virtual_key", usage: "the managed provider (slug) it is sent through"},
		{flag: "version-description", key: "version_description", usage: "what the version changes"},
		{flag: "functions", key: "functions", kind: jsonField, usage: "functions as JSON (or @file)"},
		{flag: "tools", key: "tools", kind: jsonField, usage: "tools as JSON (or @file)"},
		{flag: "tool-choice", key: "tool_choice", kind: jsonField, usage: `the tool choice as JSON (or @file), e.g. "auto"`},
		// Not --metadata, which elsewhere is the gateway's request metadata (key=value).
		{flag: "template-metadata", key: metadataKey, kind: jsonField, usage: "the version's metadata as a JSON object (or @file)"},
		{flag: "raw-template", key: "is_raw_template", kind: boolField, usage: "the template is sent as it is, not rendered"},
	}
}

// promptListFlags adds the filters the prompt resources' lists take.
func promptListFlags(cmd *cobra.Command, plural string, collection bool) {
	workspaceFlag(cmd, "only the "+plural+" of this workspace")
	cmd.Flags().String("search", "", "only "+plural+" whose name or slug holds this")
	if collection {
		cmd.Flags().String("collection", "", "only the "+plural+" of this collection (id or slug)")
	}
}

// promptListQuery is the query of a prompt resources' list: its filters, and --page,
// --page-size and --status where the command has them.
func promptListQuery(cmd *cobra.Command) url.Values {
	params := map[string]string{"search": "search", "workspace": "workspace_id"}
	for flag, param := range map[string]string{"collection": "collection_id", "status": "status"} {
		if cmd.Flags().Lookup(flag) != nil {
			params[flag] = param
		}
	}
	return listQuery(cmd, params)
}

// workspaceRefBody is the body's workspace_id from --workspace as given (an id or a slug),
// when given: it wins over the body's own.
func workspaceRefBody(cmd *cobra.Command) map[string]any {
	set := map[string]any{}
	if ws := workspace(cmd); ws != "" {
		set["workspace_id"] = ws
	}
	return set
}

// said is the view of a write whose answer is empty ({}): a line saying what was done.
func said(format string, args ...any) view {
	return view{custom: func(w io.Writer, _ any) error {
		_, err := fmt.Fprintf(w, format+"\n", args...)
		return err
	}}
}

// versionNumber reads a version number given on the command line.
func versionNumber(cmd *cobra.Command, raw string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(raw))
	if err != nil || n < 1 {
		return 0, usagef("%s: <version> must be a version's number, a whole number from 1 (got %q)", cmd.CommandPath(), raw)
	}
	return n, nil
}

// versioned holds the commands that prompts and partials share: make-default, label and
// unlabel, on the resource at path/<ref>.
type versioned struct {
	name string // prompt or partial
	path string // /prompts or /prompts/partials
}

func (v versioned) makeDefaultCmd(a *app) *cobra.Command {
	ref := "<" + v.name + ">"
	return &cobra.Command{Use: "make-default " + ref + " <version>", Short: "make a version (by number) the one served",
		Args: args(ref, "<version>"),
		RunE: action(func(cmd *cobra.Command, in []string) error {
			n, err := versionNumber(cmd, in[1])
			if err != nil {
				return err
			}
			body := fmt.Appendf(nil, `{"version":%d}`, n)
			return a.call(cmd.Context(), http.MethodPut, v.path+"/"+seg(in[0])+"/makeDefault", nil, body,
				said("%s %s: version %d is the default", v.name, in[0], n))
		})}
}

func (v versioned) labelCmds(a *app) []*cobra.Command {
	ref := "<" + v.name + ">"
	label := &cobra.Command{Use: "label " + ref + " <version> <label>",
		Short: "point a label (by name or id) at a version (by number or id), taking it from the version it was on",
		Args:  args(ref, "<version>", "<label>"),
		RunE: action(func(cmd *cobra.Command, in []string) error {
			id := in[2]
			if !isUUID(id) {
				var l struct {
					ID string `json:"id"`
				}
				if err := a.api.getJSON(cmd.Context(), "/labels/"+seg(id), nil, &l); err != nil {
					return fmt.Errorf("label %q: %w", id, err)
				}
				id = l.ID
			}
			body := fmt.Appendf(nil, `{"label_id":%q}`, id)
			return a.call(cmd.Context(), http.MethodPut, v.path+"/"+seg(in[0])+"/versions/"+seg(in[1]), nil, body,
				said("%s %s: version %s is labelled %s", v.name, in[0], in[1], in[2]))
		})}
	unlabel := &cobra.Command{Use: "unlabel " + ref + " <version>", Short: "take a version's label away",
		Args: args(ref, "<version>"),
		RunE: action(func(cmd *cobra.Command, in []string) error {
			return a.call(cmd.Context(), http.MethodPut, v.path+"/"+seg(in[0])+"/versions/"+seg(in[1]), nil,
				[]byte(`{"label_id":null}`), said("%s %s: version %s has no label", v.name, in[0], in[1]))
		})}
	return []*cobra.Command{label, unlabel}
}

func (a *app) promptsCmd() *cobra.Command {
	list := &cobra.Command{Use: "list", Short: "list prompts", Args: args(),
		RunE: action(func(cmd *cobra.Command, _ []string) error {
			return a.get(cmd.Context(), "/prompts", promptListQuery(cmd), view{list: promptColumns})
		})}
	promptListFlags(list, "prompts", true)
	pageFlags(list)
	statusFlag(list)

	get := &cobra.Command{Use: "get <prompt>", Short: "show a prompt in its default version (or <prompt>@n, @latest, @<label>)",
		Args: args("<prompt>"),
		RunE: action(func(cmd *cobra.Command, in []string) error {
			return a.get(cmd.Context(), "/prompts/"+seg(in[0]), listQuery(cmd, map[string]string{"status": "status"}), promptView)
		})}
	statusFlag(get)

	create := &cobra.Command{Use: "create", Short: "create a prompt in a collection", Args: args(),
		Long: `Creates a prompt: its first version, the default, is made of the version flags (--string,
--parameters, --model, --virtual-key, ...). --collection names the collection it is filed in
(id or slug; "default" for the workspace's default collection).`}
	workspaceFlag(create, "the prompt's workspace")
	createBody := withBody(create, append([]field{
		{flag: "name", key: "name", usage: "the prompt's name"},
		{flag: "slug", key: "slug", usage: "the prompt's slug (made from the name when left out)"},
		{flag: "collection", key: "collection_id", usage: `the collection it is filed in (id or slug; "default": the workspace's)`},
	}, promptVersionFields("template_metadata")...)...)
	create.RunE = action(func(cmd *cobra.Command, _ []string) error {
		body, err := createBody.build(a.opts.Stdin, workspaceRefBody(cmd))
		if err != nil {
			return err
		}
		return a.call(cmd.Context(), http.MethodPost, "/prompts", nil, body, confirmed)
	})

	update := &cobra.Command{Use: "update <prompt>", Short: "change a prompt: a version field sent makes a new version",
		Long: `Changes a prompt. Its name and collection change in place; sending any version field (--string,
--parameters, --model, ...) makes a new version, which is not served until make-default makes
it the default. With --patch the version fields not sent are the latest version's; without it
the new version holds only what is sent (and needs --string, --parameters and --virtual-key).`,
		Args: args("<prompt>")}
	updateBody := withBody(update, append([]field{
		{flag: "name", key: "name", usage: "the prompt's name"},
		{flag: "collection", key: "collection_id", usage: "move it to this collection (id or slug)"},
		{flag: "patch", key: "patch", kind: boolField, usage: "fill the version fields not sent from the latest version"},
	}, promptVersionFields("prompt_metadata")...)...)
	update.RunE = action(func(cmd *cobra.Command, in []string) error {
		body, err := updateBody.build(a.opts.Stdin, nil)
		if err != nil {
			return err
		}
		return a.call(cmd.Context(), http.MethodPut, "/prompts/"+seg(in[0]), nil, body, done("id", "slug", "prompt_version_id"))
	})

	del := &cobra.Command{Use: "delete <prompt>", Aliases: []string{"archive"}, Short: "delete (archive) a prompt", Args: args("<prompt>"),
		RunE: action(func(cmd *cobra.Command, in []string) error {
			return a.call(cmd.Context(), http.MethodDelete, "/prompts/"+seg(in[0]), nil, nil, said("prompt %s archived", in[0]))
		})}

	versions := &cobra.Command{Use: "versions <prompt>", Short: "list a prompt's versions, newest first", Args: args("<prompt>"),
		RunE: action(func(cmd *cobra.Command, in []string) error {
			return a.get(cmd.Context(), "/prompts/"+seg(in[0])+"/versions", nil, view{list: promptVersionColumns})
		})}

	version := &cobra.Command{Use: "version <prompt> <version>", Short: "show one version of a prompt (by number or id)",
		Args: args("<prompt>", "<version>"),
		RunE: action(func(cmd *cobra.Command, in []string) error {
			return a.get(cmd.Context(), "/prompts/"+seg(in[0])+"/versions/"+seg(in[1]), nil, promptView)
		})}

	v := versioned{name: "prompt", path: "/prompts"}
	return group("prompts", "prompt templates: versions, labels, render and run; partials",
		append([]*cobra.Command{list, get, create, update, del, versions, version, v.makeDefaultCmd(a)},
			append(v.labelCmds(a), a.renderCmd(), a.runCmd(), a.partialsCmd())...)...)
}
