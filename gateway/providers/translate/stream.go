package translate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/causeway/causeway/gateway/providers"
	"github.com/causeway/causeway/gateway/sse"
)

// Events translates the events of one streamed answer, for a Family.
type Events interface {
	// Event translates one event into chunks (Chunks.Add); done reports the provider's end of
	// the answer, an error the answer's failure.
	Event(ev sse.Event) (done bool, err error)
	// End is told that the upstream stream ended (eof: at io.EOF, else with a read error)
	// before Event reported done. It returns "" when the answer is whole all the same (only at
	// eof, for a provider without an end marker; it adds any last chunks), else what the
	// answer did not reach, for the error: "message_stop".
	End(eof bool) (missing string)
	// Usage is what the answer reported so far; complete after io.EOF.
	Usage() providers.Usage
}

// Chunks builds the chat.completion.chunk objects of one streamed answer and queues them for
// the stream's Next.
type Chunks struct {
	ID      string
	Model   string
	Created int64

	queue [][]byte
}

// Add queues a chunk of choices.
func (c *Chunks) Add(choices ...ChunkChoice) {
	for i := range choices {
		choices[i].Logprobs = Null
	}
	b, _ := json.Marshal(Chunk{ID: c.ID, Object: "chat.completion.chunk", Created: c.Created, Model: c.Model, Choices: choices})
	c.queue = append(c.queue, b)
}

// AddDelta queues a chunk of one delta of the first choice.
func (c *Chunks) AddDelta(d Delta) { c.Add(ChunkChoice{Delta: d}) }

// AddUsage queues the chunk of usage alone that ends a stream whose client asked for it.
func (c *Chunks) AddUsage(u providers.Usage) {
	b, _ := json.Marshal(Chunk{ID: c.ID, Object: "chat.completion.chunk", Created: c.Created, Model: c.Model,
		Choices: []ChunkChoice{}, Usage: UsageOf(u)})
	c.queue = append(c.queue, b)
}

func (c *Chunks) next() ([]byte, bool) {
	if len(c.queue) == 0 {
		return nil, false
	}
	b := c.queue[0]
	c.queue = c.queue[1:]
	return b, true
}

// stream is a translated streamed answer: server-sent events in, chunks out.
type stream struct {
	ctx      context.Context
	provider string
	key      string
	body     io.ReadCloser
	r        *sse.Reader
	out      *Chunks
	events   Events

	done bool
	err  error
}

func (s *stream) Usage() providers.Usage { return s.events.Usage() }

// Close ends the stream. Before the answer's end it drops the connection, which is how the
// provider learns that the client went away; after it, the rest is drained so the connection
// can be reused.
func (s *stream) Close() error {
	if s.done && s.err == nil {
		_, _ = io.CopyN(io.Discard, s.body, 4<<10)
	}
	return s.body.Close()
}

// Next returns the next chunk. A stream that ends before the answer is whole, or carries an
// error, ends in an error: the caller must never take a truncated answer for a whole one.
func (s *stream) Next() ([]byte, error) {
	for {
		if c, ok := s.out.next(); ok {
			return c, nil
		}
		if s.err != nil {
			return nil, s.err
		}
		if s.done {
			return nil, io.EOF
		}
		ev, err := s.r.Next()
		if err != nil {
			s.err = s.end(err)
			continue
		}
		s.done, s.err = s.events.Event(ev)
	}
}

// end decides what the end of the upstream stream means.
func (s *stream) end(err error) error {
	if s.ctx.Err() != nil {
		return providers.TransportError(s.ctx, s.provider, err, s.key)
	}
	eof := errors.Is(err, io.EOF)
	missing := s.events.End(eof)
	if missing == "" {
		s.done = true
		return nil
	}
	if eof {
		err = io.ErrUnexpectedEOF
	}
	return &providers.ConnectionError{Provider: s.provider,
		Err: fmt.Errorf("the stream ended before %s: %w", missing, providers.RedactError(err, s.key))}
}
