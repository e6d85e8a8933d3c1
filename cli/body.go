package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
)

// fieldKind is how a body flag's text becomes a JSON value.
type fieldKind int

const (
	textField     fieldKind = iota // a string
	numberField                    // a number, as written
	intField                       // a whole number
	boolField                      // true or false; the flag alone means true
	listField                      // strings, comma-separated or the flag repeated
	jsonField                      // any JSON value, or @file for the JSON in a file
	pairsField                     // key=value, repeated: [{"key": k, "value": v}, ...]
	keysField                      // keys, comma-separated or repeated: [{"key": k}, ...]
	longTextField                  // a string, or @file for a file's text (a template)
)

// field is a flag that sets one field of a request body: key is its dotted path in the body
// (usage_limits.credit_limit).
type field struct {
	flag  string
	key   string
	kind  fieldKind
	usage string
}

// fieldValue is a body flag's value as given, read when the body is built.
type fieldValue struct {
	kind fieldKind
	raw  []string
}

func (v *fieldValue) String() string { return strings.Join(v.raw, ",") }

func (v *fieldValue) Set(s string) error {
	switch v.kind {
	case listField, pairsField, keysField:
		v.raw = append(v.raw, s)
	default:
		v.raw = []string{s}
	}
	return nil
}

func (v *fieldValue) Type() string {
	return [...]string{"string", "number", "int", "bool", "list", "json", "key=value", "keys", "text"}[v.kind]
}

// bodySpec is a command's body: --data or --file for the whole of it, and a flag for each
// common field.
type bodySpec struct {
	cmd    *cobra.Command
	data   string
	file   string
	fields []field
	values map[string]*fieldValue
}

// withBody adds --data, --file and the fields' flags to cmd.
func withBody(cmd *cobra.Command, fields ...field) *bodySpec {
	b := &bodySpec{cmd: cmd, fields: fields, values: map[string]*fieldValue{}}
	fs := cmd.Flags()
	fs.StringVar(&b.data, "data", "", "the request body as JSON; flags given beside it set their fields in it")
	fs.StringVar(&b.file, "file", "", "read the request body (JSON) from a file, - for stdin")
	cmd.MarkFlagsMutuallyExclusive("data", "file")
	for _, f := range fields {
		v := &fieldValue{kind: f.kind}
		b.values[f.flag] = v
		fl := fs.VarPF(v, f.flag, "", f.usage)
		if f.kind == boolField {
			fl.NoOptDefVal = "true"
		}
	}
	return b
}

// build is the body to send: --data's or --file's JSON, with each field flag given set in it,
// then set (the command's own values, which win).
func (b *bodySpec) build(stdin io.Reader, set map[string]any) ([]byte, error) {
	var doc any = map[string]any{}
	source := ""
	switch {
	case b.data != "":
		source = "--data"
		var err error
		if doc, err = parseJSON([]byte(b.data)); err != nil {
			return nil, usagef("--data is not JSON: %v", err)
		}
	case b.file != "":
		source = "--file " + b.file
		raw, err := readFile(b.file, stdin)
		if err != nil {
			return nil, err
		}
		if doc, err = parseJSON(raw); err != nil {
			return nil, usagef("%s is not JSON: %v", source, err)
		}
	}
	changes := map[string]any{}
	for _, f := range b.fields {
		if !flagChanged(b.cmd.Flags(), f.flag) {
			continue
		}
		v, err := f.value(b.values[f.flag].raw, stdin)
		if err != nil {
			return nil, err
		}
		changes[f.key] = v
	}
	for k, v := range set {
		changes[k] = v
	}
	obj, isObject := doc.(map[string]any)
	if !isObject {
		if len(changes) > 0 {
			return nil, usagef("%s must be a JSON object for flags to set fields in it", source)
		}
		return json.Marshal(doc)
	}
	// In order, so that a field is set before the fields within it (variables before
	// variables.tone): both are kept.
	paths := make([]string, 0, len(changes))
	for k := range changes {
		paths = append(paths, k)
	}
	sort.Strings(paths)
	for _, k := range paths {
		setPath(obj, k, changes[k])
	}
	return json.Marshal(obj)
}

// value turns a flag's text into its JSON value; a mistake names the flag.
func (f field) value(raw []string, stdin io.Reader) (any, error) {
	one := ""
	if len(raw) > 0 {
		one = raw[len(raw)-1]
	}
	switch f.kind {
	case numberField:
		n, err := strconv.ParseFloat(strings.TrimSpace(one), 64)
		if err != nil {
			return nil, usagef("--%s must be a number (got %q)", f.flag, one)
		}
		return json.Number(strconv.FormatFloat(n, 'f', -1, 64)), nil
	case intField:
		n, err := strconv.ParseInt(strings.TrimSpace(one), 10, 64)
		if err != nil {
			return nil, usagef("--%s must be a whole number (got %q)", f.flag, one)
		}
		return n, nil
	case boolField:
		v, err := strconv.ParseBool(strings.TrimSpace(one))
		if err != nil {
			return nil, usagef("--%s must be true or false (got %q)", f.flag, one)
		}
		return v, nil
	case listField:
		return splitList(raw), nil
	case keysField:
		out := []map[string]string{}
		for _, k := range splitList(raw) {
			out = append(out, map[string]string{"key": k})
		}
		return out, nil
	case pairsField:
		out := []map[string]string{}
		for _, p := range raw {
			k, v, ok := strings.Cut(p, "=")
			if !ok || strings.TrimSpace(k) == "" {
				return nil, usagef("--%s takes key=value (got %q)", f.flag, p)
			}
			out = append(out, map[string]string{"key": strings.TrimSpace(k), "value": v})
		}
		return out, nil
	case longTextField:
		if name, ok := strings.CutPrefix(one, "@"); ok {
			raw, err := readFile(name, stdin)
			return string(raw), err
		}
		return one, nil
	case jsonField:
		src := []byte(one)
		if name, ok := strings.CutPrefix(one, "@"); ok {
			var err error
			if src, err = readFile(name, stdin); err != nil {
				return nil, err
			}
		}
		v, err := parseJSON(src)
		if err != nil {
			return nil, usagef("--%s is not JSON: %v", f.flag, err)
		}
		return v, nil
	}
	return one, nil
}

// parseJSON reads one JSON value, numbers kept as written, and nothing after it.
func parseJSON(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("more follows the JSON value")
	}
	return v, nil
}

// splitList reads values given comma-separated, repeated, or both.
func splitList(raw []string) []string {
	out := []string{}
	for _, r := range raw {
		for _, s := range strings.Split(r, ",") {
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, s)
			}
		}
	}
	return out
}

// readFile reads a file, or stdin for "-".
func readFile(name string, stdin io.Reader) ([]byte, error) {
	if name == "-" {
		raw, err := io.ReadAll(stdin)
		if err != nil {
			return nil, fmt.Errorf("reading stdin: %w", err)
		}
		return bytes.TrimSpace(raw), nil
	}
	raw, err := os.ReadFile(name)
	if err != nil {
		return nil, usagef("%v", err)
	}
	return raw, nil
}

// setPath sets a dotted path in obj, making the objects on the way.
func setPath(obj map[string]any, path string, v any) {
	parts := strings.Split(path, ".")
	for _, p := range parts[:len(parts)-1] {
		next, ok := obj[p].(map[string]any)
		if !ok {
			next = map[string]any{}
			obj[p] = next
		}
		obj = next
	}
	obj[parts[len(parts)-1]] = v
}
