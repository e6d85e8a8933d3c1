package openai

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/domain"
)

// untouchable is a body that fails the test if anyone reads it.
type untouchable struct{ t *testing.T }

func (u untouchable) Read([]byte) (int, error) {
	u.t.Error("the body was read although its Content-Length is over the limit")
	return 0, errors.New("must not be read")
}
func (untouchable) Close() error { return nil }

// counting counts the bytes read from it.
type counting struct {
	r    io.Reader
	read int64
}

func (c *counting) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.read += int64(n)
	return n, err
}
func (*counting) Close() error { return nil }

type failing struct{}

func (failing) Read([]byte) (int, error) { return 0, io.ErrUnexpectedEOF }
func (failing) Close() error             { return nil }

func requireTooLarge(t *testing.T, err error, limit string) {
	t.Helper()
	var de *domain.Error
	require.ErrorAs(t, err, &de)
	assert.Equal(t, domain.CodeTooLarge, de.Code)
	assert.Contains(t, de.Message, "limit of "+limit+" bytes", "the message names the limit")
}

func TestReadBodyRefusesADeclaredLengthOverTheLimitBeforeReading(t *testing.T) {
	r := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", nil)
	r.Body = untouchable{t}
	r.ContentLength = 1025
	_, err := ReadBody(r.Body, r.ContentLength, 1024)
	requireTooLarge(t, err, "1024")
}

func TestReadBody(t *testing.T) {
	const limit = 1024
	cases := []struct {
		name     string
		body     string
		declared int64 // Content-Length; -1 is chunked
		tooLarge bool
	}{
		{"declared, at the limit", strings.Repeat("a", limit), limit, false},
		{"declared, under the limit", "{}", 2, false},
		{"chunked, at the limit", strings.Repeat("a", limit), -1, false},
		{"chunked, one byte over", strings.Repeat("a", limit+1), -1, true},
		{"chunked, far over", strings.Repeat("a", 10*limit), -1, true},
		{"declared short but longer", strings.Repeat("a", 2*limit), 10, true},
		{"empty", "", 0, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			body := &counting{r: strings.NewReader(tc.body)}
			r := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", nil)
			r.Body = body
			r.ContentLength = tc.declared
			got, err := ReadBody(r.Body, r.ContentLength, limit)
			assert.LessOrEqual(t, body.read, int64(limit+1), "reading stops once past the limit")
			if tc.tooLarge {
				requireTooLarge(t, err, "1024")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.body, string(got))
		})
	}
}

func TestReadBodyEdges(t *testing.T) {
	t.Run("no body", func(t *testing.T) {
		r := httptest.NewRequest(http.MethodPost, "/", nil)
		r.Body = nil
		got, err := ReadBody(r.Body, r.ContentLength, 10)
		require.NoError(t, err)
		assert.Empty(t, got)
	})
	t.Run("no limit configured: the default", func(t *testing.T) {
		r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader("{}"))
		r.ContentLength = DefaultMaxBodyBytes + 1
		_, err := ReadBody(r.Body, r.ContentLength, 0)
		requireTooLarge(t, err, "33554432")
	})
	t.Run("a read error is not a size error", func(t *testing.T) {
		r := httptest.NewRequest(http.MethodPost, "/", nil)
		r.Body = failing{}
		r.ContentLength = -1
		_, err := ReadBody(r.Body, r.ContentLength, 10)
		assert.Equal(t, domain.CodeInvalid, domain.ErrorCode(err))
		assert.ErrorIs(t, err, io.ErrUnexpectedEOF)
	})
	t.Run("a server-wide MaxBytesReader with a lower limit", func(t *testing.T) {
		r := httptest.NewRequest(http.MethodPost, "/", nil)
		r.Body = http.MaxBytesReader(nil, io.NopCloser(strings.NewReader(strings.Repeat("a", 100))), 50)
		r.ContentLength = -1
		_, err := ReadBody(r.Body, r.ContentLength, 1000)
		requireTooLarge(t, err, "50")
	})
}

// TestReadBodyOverHTTP sends real requests to a local server: a declared length over the limit
// and a chunked body that grows past it are both refused with 413.
func TestReadBodyOverHTTP(t *testing.T) {
	const limit = 4096
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Seen-Content-Length", strconv.FormatInt(r.ContentLength, 10))
		body, err := ReadBody(r.Body, r.ContentLength, limit)
		switch domain.ErrorCode(err) {
		case domain.CodeTooLarge:
			w.WriteHeader(http.StatusRequestEntityTooLarge)
		case domain.CodeInternal: // no error
			_, _ = w.Write(body)
		default:
			w.WriteHeader(http.StatusBadRequest)
		}
	}))
	defer srv.Close()

	cases := []struct {
		name    string
		size    int
		chunked bool
		status  int
	}{
		{"declared at the limit", limit, false, http.StatusOK},
		{"declared over the limit", limit + 1, false, http.StatusRequestEntityTooLarge},
		{"chunked at the limit", limit, true, http.StatusOK},
		{"chunked over the limit", 64 * limit, true, http.StatusRequestEntityTooLarge},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			payload := bytes.Repeat([]byte("x"), tc.size)
			var body io.Reader = bytes.NewReader(payload)
			if tc.chunked {
				// A reader of unknown length makes the client send Transfer-Encoding: chunked.
				body = io.MultiReader(bytes.NewReader(payload))
			}
			req, err := http.NewRequest(http.MethodPost, srv.URL+"/v1/chat/completions", body)
			require.NoError(t, err)
			if tc.chunked {
				require.Equal(t, int64(0), req.ContentLength, "sent without a length")
				req.ContentLength = -1
			}
			resp, err := srv.Client().Do(req)
			require.NoError(t, err)
			defer resp.Body.Close()
			assert.Equal(t, tc.status, resp.StatusCode)
			if tc.chunked {
				assert.Equal(t, "-1", resp.Header.Get("X-Seen-Content-Length"), "the server saw no length")
			}
			if tc.status == http.StatusOK {
				got, err := io.ReadAll(resp.Body)
				require.NoError(t, err)
				assert.Equal(t, payload, got)
			}
		})
	}
}
