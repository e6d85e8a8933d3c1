package sse

import (
	"errors"
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func readAll(t *testing.T, s string) ([]Event, error) {
	t.Helper()
	r := NewReader(strings.NewReader(s))
	var out []Event
	for {
		ev, err := r.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return out, err
		}
		out = append(out, ev)
	}
}

func TestReaderFramings(t *testing.T) {
	cases := []struct {
		name string
		in   string
		want []Event
	}{
		{"openai data-only", "data: {\"a\":1}\n\ndata: [DONE]\n\n", []Event{{Data: []byte(`{"a":1}`)}, {Data: []byte("[DONE]")}}},
		{"anthropic named events", "event: message_start\ndata: {}\n\nevent: ping\ndata: {\"type\":\"ping\"}\n\n",
			[]Event{{Name: "message_start", Data: []byte("{}")}, {Name: "ping", Data: []byte(`{"type":"ping"}`)}}},
		{"crlf and cr line ends", "data: a\r\n\r\ndata: b\r\rdata: c\n\n", []Event{{Data: []byte("a")}, {Data: []byte("b")}, {Data: []byte("c")}}},
		{"multi-line data", "data: x\ndata: y\n\n", []Event{{Data: []byte("x\ny")}}},
		{"comments and keep-alives", ": ping\n\ndata: z\n\n", []Event{{Data: []byte("z")}}},
		{"no space after the colon", "data:{}\n\n", []Event{{Data: []byte("{}")}}},
		{"last event without a blank line", "data: end", nil},
		{"last event ended by a newline only", "data: end\n", []Event{{Data: []byte("end")}}},
		{"id field", "id: 7\ndata: q\n\n", []Event{{ID: "7", Data: []byte("q")}}},
		{"event name without data is dropped", "event: x\n\ndata: y\n\n", []Event{{Data: []byte("y")}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := readAll(t, tc.in)
			if tc.want == nil {
				require.ErrorIs(t, err, io.ErrUnexpectedEOF, "a stream cut mid-line is an error, never a silent truncation")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestReaderBoundsEventSize(t *testing.T) {
	big := "data: " + strings.Repeat("x", MaxEventSize+1) + "\n\n"
	_, err := readAll(t, big)
	require.ErrorIs(t, err, ErrEventTooLarge)
}

func TestWriterFlushesEachEvent(t *testing.T) {
	rec := httptest.NewRecorder()
	w := NewWriter(rec)
	require.NoError(t, w.Data([]byte(`{"x":1}`)))
	assert.True(t, rec.Flushed)
	require.NoError(t, w.Done())
	assert.Equal(t, "data: {\"x\":1}\n\ndata: [DONE]\n\n", rec.Body.String())
	assert.Equal(t, "text/event-stream", rec.Header().Get("Content-Type"))
}

// FuzzReader: any input ends in events and an error, never a panic or a hang, and what a
// writer writes reads back the same.
func FuzzReader(f *testing.F) {
	for _, s := range []string{"data: {}\n\n", "event: a\ndata: b\n\n", ": c\n\ndata: [DONE]\n\n", "data: x\r\ndata: y\r\n\r\n", "data:", "\r\r\n\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		r := NewReader(strings.NewReader(string(in)))
		for i := 0; i < len(in)+2; i++ {
			if _, err := r.Next(); err != nil {
				break
			}
		}
		payload := strings.ReplaceAll(strings.ReplaceAll(string(in), "\r", ""), "\x00", "")
		rec := httptest.NewRecorder()
		require.NoError(t, NewWriter(rec).Data([]byte(payload)))
		ev, err := NewReader(rec.Body).Next()
		require.NoError(t, err)
		assert.Equal(t, payload, string(ev.Data))
	})
}
