// Package sse reads and writes server-sent events (the text/event-stream format of the HTML
// standard): the framing of every streamed answer, from providers and to clients. It imports
// only the standard library.
package sse

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net/http"
	"strings"
)

// Event is one dispatched event.
type Event struct {
	Name string // the event: field; empty means "message"
	Data []byte // the data: lines joined by "\n"
	ID   string
}

// MaxEventSize bounds one event, so that a provider cannot make the gateway buffer without
// limit.
const MaxEventSize = 4 << 20

// ErrEventTooLarge: an event grew past MaxEventSize.
var ErrEventTooLarge = errors.New("sse: event larger than 4 MiB")

// Reader reads events from a stream.
type Reader struct {
	r    *bufio.Reader
	name string
	id   string
	data bytes.Buffer
	has  bool // a data line was seen for the pending event
}

// NewReader reads events from r.
func NewReader(r io.Reader) *Reader { return &Reader{r: bufio.NewReaderSize(r, 32<<10)} }

// Next returns the next event, or io.EOF at the end of the stream. An event cut off by the end
// of the stream (no blank line after it) is dispatched, as providers often end that way;
// a stream cut off mid-line returns io.ErrUnexpectedEOF.
func (r *Reader) Next() (Event, error) {
	for {
		line, err := r.readLine()
		if err != nil {
			if errors.Is(err, io.EOF) && r.has {
				return r.dispatch(), nil
			}
			return Event{}, err
		}
		if line == "" {
			if r.has {
				return r.dispatch(), nil
			}
			r.name = ""
			continue
		}
		if strings.HasPrefix(line, ":") {
			continue // a comment, such as a keep-alive
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "data":
			if r.has {
				r.data.WriteByte('\n')
			}
			if r.data.Len()+len(value) > MaxEventSize {
				return Event{}, ErrEventTooLarge
			}
			r.data.WriteString(value)
			r.has = true
		case "event":
			r.name = value
		case "id":
			if !strings.ContainsRune(value, 0) {
				r.id = value
			}
		}
	}
}

func (r *Reader) dispatch() Event {
	ev := Event{Name: r.name, Data: bytes.Clone(r.data.Bytes()), ID: r.id}
	r.name, r.has = "", false
	r.data.Reset()
	return ev
}

// readLine reads one line without its terminator (\n, \r\n or \r).
func (r *Reader) readLine() (string, error) {
	var b strings.Builder
	for {
		c, err := r.r.ReadByte()
		if err != nil {
			if errors.Is(err, io.EOF) && b.Len() > 0 {
				return "", io.ErrUnexpectedEOF
			}
			return "", err
		}
		switch c {
		case '\n':
			return b.String(), nil
		case '\r':
			if next, err := r.r.Peek(1); err == nil && next[0] == '\n' {
				_, _ = r.r.ReadByte()
			}
			return b.String(), nil
		}
		if b.Len() >= MaxEventSize {
			return "", ErrEventTooLarge
		}
		b.WriteByte(c)
	}
}

// Writer writes data-only events to a client and flushes each at once.
type Writer struct {
	w       io.Writer
	flusher http.Flusher
}

// NewWriter prepares w for an event stream: the headers, and a flush per event.
func NewWriter(w http.ResponseWriter) *Writer {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("Connection", "keep-alive")
	h.Set("X-Accel-Buffering", "no") // proxies in front must not buffer the stream
	f, _ := w.(http.Flusher)
	return &Writer{w: w, flusher: f}
}

// Data writes one data-only event (a multi-line payload becomes several data: lines) and
// flushes it.
func (w *Writer) Data(payload []byte) error {
	var buf bytes.Buffer
	for _, line := range bytes.Split(payload, []byte("\n")) {
		buf.WriteString("data: ")
		buf.Write(line)
		buf.WriteByte('\n')
	}
	buf.WriteByte('\n')
	if _, err := w.w.Write(buf.Bytes()); err != nil {
		return err
	}
	if w.flusher != nil {
		w.flusher.Flush()
	}
	return nil
}

// Done writes the final data: [DONE] event.
func (w *Writer) Done() error { return w.Data([]byte("[DONE]")) }
