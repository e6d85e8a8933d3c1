package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/spf13/cobra"
)

// maxEvent bounds one server-sent event of a streamed answer (the gateway's own bound).
const maxEvent = 4 << 20

// promptBody adds the flags of a render's or a run's body: --variables, --var and the
// request's own fields by --data or --file. It answers the body's builder.
func promptBody(cmd *cobra.Command) func(stdin io.Reader, set map[string]any) ([]byte, error) {
	b := withBody(cmd, field{flag: "variables", key: "variables", kind: jsonField,
		usage: `the template's variables as a JSON object (or @file), e.g. {"question":"Where is my order?"}`})
	cmd.Flags().StringArray("var", nil, "one variable, name=value (repeat; a dotted name such as customer.name nests)")
	return func(stdin io.Reader, set map[string]any) ([]byte, error) {
		vars, _ := cmd.Flags().GetStringArray("var")
		for _, p := range vars {
			k, v, ok := strings.Cut(p, "=")
			if !ok || strings.TrimSpace(k) == "" {
				return nil, usagef("--var takes name=value (got %q)", p)
			}
			set["variables."+strings.TrimSpace(k)] = v
		}
		return b.build(stdin, set)
	}
}

const promptBodyHelp = `The body is the template's variables (--variables as JSON, --var name=value one by one, or
both), and any field of a chat completion at its root (temperature, max_tokens, ...) by --data
or --file, which override the version's parameters.`

func (a *app) renderCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "render <prompt>", Short: "the chat body a prompt makes with its variables, without calling a model",
		Long: "Renders a prompt (<prompt>@n, @latest or @<label> for a version other than the default) and prints\n" +
			"the chat completion body it would send: its fields, then its messages.\n\n" + promptBodyHelp,
		Args: args("<prompt>")}
	build := promptBody(cmd)
	cmd.RunE = action(func(cmd *cobra.Command, in []string) error {
		body, err := build(a.opts.Stdin, map[string]any{})
		if err != nil {
			return err
		}
		return a.call(cmd.Context(), http.MethodPost, "/prompts/"+seg(in[0])+"/render", nil, body, view{custom: writeRendered})
	})
	return cmd
}

// writeRendered prints a rendered body's fields, then its messages as a table.
func writeRendered(w io.Writer, doc any) error {
	body, _ := unwrap(doc).(map[string]any)
	var cols []column
	for _, k := range keysOf(body, "messages") {
		cols = append(cols, col(k, k))
	}
	if err := writeObject(w, cols, body); err != nil {
		return err
	}
	messages, ok := body["messages"].([]any)
	if !ok {
		return nil
	}
	fmt.Fprintln(w)
	return writeTable(w, []column{col("ROLE", "role"), {head: "CONTENT", path: "content", format: contentText}}, messages)
}

// contentText writes a message's content: its text, or its text parts joined.
func contentText(v any) string {
	parts, ok := v.([]any)
	if !ok {
		return text(v)
	}
	var texts []string
	for _, p := range parts {
		t, isText := lookup(p, "text").(string)
		if !isText {
			return text(v) // not only text: as JSON
		}
		texts = append(texts, t)
	}
	return text(strings.Join(texts, ""))
}

func (a *app) runCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "run <prompt>", Short: "run a prompt as a chat completion through the gateway and print the answer",
		Long: "Runs a prompt (<prompt>@n, @latest or @<label> for a version other than the default) through the\n" +
			"gateway's whole pipeline and prints the answer's text; -o json prints the answer as the API\n" +
			"gave it. With --stream the text is printed as it arrives (-o json: each chunk, one JSON object\n" +
			"a line). It needs a key with completions.write, and is logged as any request.\n\n" + promptBodyHelp,
		Args: args("<prompt>")}
	build := promptBody(cmd)
	fs := cmd.Flags()
	stream := fs.Bool("stream", false, "print the answer as it arrives")
	fs.String("config", "", "route by this saved config (id or slug) or inline JSON config (x-gateway-config)")
	fs.String("provider", "", "send through this provider or managed provider @slug, not the version's (x-gateway-provider)")
	fs.StringArray("metadata", nil, "metadata to log with the request, key=value (repeat) (x-gateway-metadata)")
	fs.String("trace-id", "", "the request's trace id (x-gateway-trace-id)")
	cmd.RunE = action(func(cmd *cobra.Command, in []string) error {
		header, err := gatewayHeaders(cmd)
		if err != nil {
			return err
		}
		set := map[string]any{}
		if *stream {
			set["stream"] = true
		}
		body, err := build(a.opts.Stdin, set)
		if err != nil {
			return err
		}
		path := "/prompts/" + seg(in[0]) + "/completions"
		if *stream {
			return a.streamAnswer(cmd.Context(), path, body, header)
		}
		raw, err := a.api.doWith(cmd.Context(), http.MethodPost, path, nil, body, header)
		if err != nil {
			return err
		}
		return a.print(raw, view{custom: writeAnswer})
	})
	return cmd
}

// gatewayHeaders are the gateway headers a run's flags set.
func gatewayHeaders(cmd *cobra.Command) (http.Header, error) {
	h := http.Header{}
	for flag, name := range map[string]string{"config": "x-gateway-config", "provider": "x-gateway-provider",
		"trace-id": "x-gateway-trace-id"} {
		if v, _ := cmd.Flags().GetString(flag); v != "" {
			h.Set(name, v)
		}
	}
	if pairs, _ := cmd.Flags().GetStringArray("metadata"); len(pairs) > 0 {
		meta := map[string]string{}
		for _, p := range pairs {
			k, v, ok := strings.Cut(p, "=")
			if !ok || strings.TrimSpace(k) == "" {
				return nil, usagef("--metadata takes key=value (got %q)", p)
			}
			meta[strings.TrimSpace(k)] = v
		}
		raw, _ := json.Marshal(meta)
		h.Set("x-gateway-metadata", string(raw))
	}
	return h, nil
}

// writeAnswer prints a chat completion's text: each choice's message (its tool calls as JSON
// when it has no text), choices after the first under their index.
func writeAnswer(w io.Writer, doc any) error {
	choices, _ := lookup(doc, "choices").([]any)
	if len(choices) == 0 {
		return fmt.Errorf("the answer has no choices: -o json shows it whole")
	}
	for i, c := range choices {
		if len(choices) > 1 {
			fmt.Fprintf(w, "[%d]\n", i)
		}
		msg := lookup(c, "message")
		content := lookup(msg, "content")
		if content == nil {
			content = lookup(c, "text") // a text completion's
		}
		var out string
		switch {
		case content != nil && content != "":
			out = rawText(content)
		case lookup(msg, "tool_calls") != nil:
			raw, _ := json.Marshal(lookup(msg, "tool_calls"))
			out = "tool_calls: " + string(raw)
		}
		if _, err := fmt.Fprintln(w, out); err != nil {
			return err
		}
	}
	return nil
}

// rawText is a message's content as it was written, line breaks kept (a table cell's text()
// would flatten them).
func rawText(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case []any:
		var b strings.Builder
		for _, p := range x {
			if t, ok := lookup(p, "text").(string); ok {
				b.WriteString(t)
			}
		}
		return b.String()
	}
	raw, _ := json.Marshal(v)
	return string(raw)
}

// streamAnswer runs a streamed completion and prints its text as each chunk arrives, or
// with -o json each chunk on a line. An error event in the stream ends it with an error.
func (a *app) streamAnswer(ctx context.Context, path string, body []byte, header http.Header) error {
	header.Set("Accept", "text/event-stream")
	resp, err := a.api.stream(ctx, http.MethodPost, path, body, header)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		// Not streamed after all (a cached answer may be whole): print it as a whole one.
		raw, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
		if err != nil {
			return err
		}
		return a.print(raw, view{custom: writeAnswer})
	}
	out := a.opts.Stdout
	wrote := false
	err = readEvents(resp.Body, func(data []byte) (bool, error) {
		if string(data) == "[DONE]" {
			return false, nil
		}
		doc, err := decode(data)
		if err != nil {
			return false, fmt.Errorf("a streamed chunk is not JSON: %w", err)
		}
		if e, ok := lookup(doc, "error").(map[string]any); ok {
			return false, fmt.Errorf("the stream ended with an error: %s (code %s)", text(e["message"]), text(e["code"]))
		}
		if a.output == "json" {
			var buf bytes.Buffer
			if err := json.Compact(&buf, data); err != nil {
				return false, err
			}
			buf.WriteByte('\n')
			_, err := out.Write(buf.Bytes())
			return true, err
		}
		choices, _ := lookup(doc, "choices").([]any)
		for _, c := range choices {
			delta := lookup(c, "delta")
			piece := lookup(delta, "content")
			if piece == nil {
				piece = lookup(c, "text")
			}
			if s := rawText(piece); piece != nil && s != "" {
				if _, err := io.WriteString(out, s); err != nil {
					return false, err
				}
				wrote = true
			}
		}
		return true, nil
	})
	if wrote {
		fmt.Fprintln(out)
	}
	return err
}

// readEvents reads server-sent events and hands each event's data to fn, until fn answers
// false, the stream ends or an error.
func readEvents(r io.Reader, fn func(data []byte) (bool, error)) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxEvent)
	var data []byte
	has := false
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 {
			if !has {
				continue
			}
			more, err := fn(data)
			if err != nil || !more {
				return err
			}
			data, has = data[:0], false
			continue
		}
		if rest, ok := bytes.CutPrefix(line, []byte("data:")); ok {
			if has {
				data = append(data, '\n')
			}
			data = append(data, bytes.TrimPrefix(rest, []byte(" "))...)
			has = true
		}
		// event:, id:, retry: and comments carry nothing a chat stream needs.
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("reading the stream: %w", err)
	}
	if has {
		_, err := fn(data)
		return err
	}
	return nil
}
