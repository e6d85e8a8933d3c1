package openai

import (
	"bytes"
	"errors"
	"io"
	"net/http"

	"github.com/causeway/causeway/domain"
)

// DefaultMaxBodyBytes is the body limit used when none is configured. It leaves room for a
// chat message carrying a 20 MB image (the inline image guardrail's default) encoded in base64.
const DefaultMaxBodyBytes int64 = 32 << 20

// preallocMax bounds what ReadBody allocates before the bytes arrive.
const preallocMax = 64 << 10

// ReadBody reads a request body (contentLength is the declared length, -1 when unknown),
// refusing with CodeTooLarge a body longer than limit bytes (limit <= 0 means
// DefaultMaxBodyBytes). A declared Content-Length over the limit is refused at once,
// before a byte is read; a body without one (chunked) is read until it passes the limit and no
// further, as http.MaxBytesReader does.
func ReadBody(body io.Reader, contentLength, limit int64) ([]byte, error) {
	if limit <= 0 {
		limit = DefaultMaxBodyBytes
	}
	if contentLength > limit {
		return nil, tooLarge(limit)
	}
	if body == nil || body == http.NoBody {
		return []byte{}, nil
	}
	var buf bytes.Buffer
	if contentLength > 0 {
		// Room for the declared size, plus the byte that detects a body longer than declared,
		// but never more than preallocMax up front: a client that declares a large body and
		// sends it slowly (or never) must not hold memory it has not filled.
		buf.Grow(int(min(contentLength, preallocMax)) + 1)
	}
	// Reading limit+1 bytes tells a body of exactly limit bytes from a longer one.
	n, err := buf.ReadFrom(io.LimitReader(body, limit+1))
	if n > limit {
		return nil, tooLarge(limit)
	}
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			// A server-wide http.MaxBytesReader with a lower limit stopped the read first.
			return nil, tooLarge(mbe.Limit)
		}
		return nil, &domain.Error{Code: domain.CodeInvalid, Message: "the request body could not be read", Err: err}
	}
	return buf.Bytes(), nil
}

func tooLarge(limit int64) *domain.Error {
	return domain.Errorf(domain.CodeTooLarge, "the request body is larger than the limit of %d bytes", limit)
}
