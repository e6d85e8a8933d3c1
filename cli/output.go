package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
)

// column is one column of a table (or one line of an object's table): its heading and the
// dotted path of the value in each item, and how to write the value when not as text does.
type column struct {
	head   string
	path   string
	format func(any) string
}

func col(head, path string) column { return column{head: head, path: path} }

// view is how a command's answer prints as a table: a list's items as rows (list), or one
// object as lines of name and value (object), or by a function of its own (custom).
type view struct {
	list   []column
	object []column
	custom func(w io.Writer, doc any) error
}

// print writes an answer: as the API's JSON, indented, with -o json; else as the view says.
func (a *app) print(raw []byte, v view) error {
	if a.output == "json" {
		return writeJSON(a.opts.Stdout, raw)
	}
	doc, err := decode(raw)
	if err != nil {
		return fmt.Errorf("the answer is not JSON: %w", err)
	}
	switch {
	case v.custom != nil:
		return v.custom(a.opts.Stdout, doc)
	case v.list != nil:
		items, total := listItems(doc)
		if err := writeTable(a.opts.Stdout, v.list, items); err != nil {
			return err
		}
		if total > len(items) {
			fmt.Fprintf(a.opts.Stderr, "(%d of %d shown: --page and --page-size for the others)\n", len(items), total)
		}
		return nil
	default:
		return writeObject(a.opts.Stdout, v.object, unwrap(doc))
	}
}

// writeJSON writes raw JSON indented, keys in the order the API wrote them.
func writeJSON(w io.Writer, raw []byte) error {
	var buf bytes.Buffer
	if err := json.Indent(&buf, bytes.TrimSpace(raw), "", "  "); err != nil {
		return fmt.Errorf("the answer is not JSON: %w", err)
	}
	buf.WriteByte('\n')
	_, err := w.Write(buf.Bytes())
	return err
}

// decode reads JSON keeping numbers as the API wrote them.
func decode(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var doc any
	err := dec.Decode(&doc)
	return doc, err
}

// listItems is a list answer's items ({"data": [...]}, or a bare array) and its total.
func listItems(doc any) ([]any, int) {
	if items, ok := doc.([]any); ok {
		return items, len(items)
	}
	m, _ := doc.(map[string]any)
	items, _ := m["data"].([]any)
	total := len(items)
	if n, ok := m["total"].(json.Number); ok {
		if t, err := n.Int64(); err == nil {
			total = int(t)
		}
	}
	return items, total
}

// unwrap is the object of an answer that wraps it as {"success": true, "data": {...}} (saved
// configs answer so), else the answer itself.
func unwrap(doc any) any {
	if m, ok := doc.(map[string]any); ok {
		if inner, ok := m["data"].(map[string]any); ok && m["success"] != nil {
			return inner
		}
	}
	return doc
}

// writeTable writes items as rows under the columns' headings.
func writeTable(w io.Writer, cols []column, items []any) error {
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	heads := make([]string, len(cols))
	for i, c := range cols {
		heads[i] = c.head
	}
	fmt.Fprintln(tw, strings.Join(heads, "\t"))
	for _, it := range items {
		cells := make([]string, len(cols))
		for i, c := range cols {
			cells[i] = c.cell(it)
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	return tw.Flush()
}

// writeObject writes one object as lines of a name and its value.
func writeObject(w io.Writer, cols []column, obj any) error {
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	for _, c := range cols {
		fmt.Fprintf(tw, "%s\t%s\n", c.head, c.cell(obj))
	}
	return tw.Flush()
}

func (c column) cell(item any) string {
	v := lookup(item, c.path)
	if c.format != nil {
		return c.format(v)
	}
	return text(v)
}

// lookup follows a dotted path into decoded JSON; nil where it leads nowhere.
func lookup(v any, path string) any {
	if path == "" {
		return v
	}
	for _, part := range strings.Split(path, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[part]
	}
	return v
}

// text writes a value for a table cell: "-" for nothing, lists of scalars joined with commas,
// anything else structured as compact JSON. Tabs and line breaks become spaces, which would
// otherwise break the table.
func text(v any) string {
	var s string
	switch x := v.(type) {
	case nil:
		return "-"
	case string:
		s = x
	case json.Number:
		s = x.String()
	case bool:
		s = fmt.Sprint(x)
	case []any:
		parts := make([]string, 0, len(x))
		for _, e := range x {
			switch e.(type) {
			case map[string]any, []any:
				raw, _ := json.Marshal(x)
				return clean(string(raw))
			}
			parts = append(parts, text(e))
		}
		s = strings.Join(parts, ",")
	case map[string]any:
		if len(x) == 0 {
			return "-"
		}
		raw, _ := json.Marshal(x)
		s = string(raw)
	default:
		s = fmt.Sprint(x)
	}
	if s == "" {
		return "-"
	}
	return clean(s)
}

func clean(s string) string {
	return strings.NewReplacer("\t", " ", "\n", " ", "\r", " ").Replace(s)
}

// count writes the number of items of a list value.
func count(v any) string {
	items, _ := v.([]any)
	return fmt.Sprint(len(items))
}

// keysOf are an object's keys, sorted, leaving out those in skip.
func keysOf(m map[string]any, skip ...string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		if !slices.Contains(skip, k) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return keys
}
