package guardrails

import (
	"context"
	"strings"
	"time"
	"unicode/utf8"
)

// Window overlap bounds: each window repeats this many bytes of the text before the delta,
// so a match no longer than the overlap plus the delta is found whatever the chunking.
const (
	DefaultStreamOverlap = 256
	MaxStreamOverlap     = 64 << 10
)

// StreamOptions tune a StreamScanner.
type StreamOptions struct {
	// Overlap is how many bytes of the text already seen each window repeats before the new
	// delta: 0 means DefaultStreamOverlap; it is capped at MaxStreamOverlap.
	Overlap int
}

// StreamScanner applies the after-request hook's guardrails to a streamed answer. The gateway
// feeds it the answer's text deltas as they arrive (Write) and closes it with Finish.
//
// Each Write runs the Windowed checks (forbidden patterns and words, PII, letter case) on a
// window made of the last Overlap bytes already seen and the new delta, so a match split
// between deltas is found; when one fails in a denying guardrail, Write says to stop the
// stream at once. A windowed check that fails is not run again: each check has one result.
// Finish runs every other check, and the windowed ones that never failed, once on the whole
// text (Input.Stream and Final true), which also finds matches longer than a window.
//
// Async guardrails are left out (RunAsync them on the whole answer), and nothing is rewritten:
// a stream already sent cannot be, so the results' Transformed is always nil. A scanner is
// used by one goroutine.
type StreamScanner struct {
	gs      []Guardrail
	in      Input
	overlap int
	start   time.Time

	text     strings.Builder
	windowed []slot               // windowed checks that have not failed yet
	rest     []slot               // the others, for Finish
	failed   map[slot]CheckResult // windowed checks' failures, by slot
	denied   *HookResult
}

// NewStreamScanner prepares the scanning of one streamed answer to the request in (its
// Request, Model, Metadata...); gs are the after-request hook's guardrails.
func NewStreamScanner(gs []Guardrail, in Input, opts StreamOptions) *StreamScanner {
	overlap := opts.Overlap
	if overlap <= 0 {
		overlap = DefaultStreamOverlap
	}
	overlap = min(overlap, MaxStreamOverlap)
	in.Hook, in.Response, in.Stream = AfterRequest, nil, true
	s := &StreamScanner{gs: gs, in: in, overlap: overlap, start: time.Now(), failed: map[slot]CheckResult{}}
	for gi, g := range gs {
		if g.Actions.Async {
			continue
		}
		for ci, c := range g.Checks {
			if w, ok := c.Check.(Windowed); ok && w.Windowed() {
				s.windowed = append(s.windowed, slot{gi, ci})
			} else {
				s.rest = append(s.rest, slot{gi, ci})
			}
		}
	}
	return s
}

// Write scans the window the delta completes. It returns true, with the hook result naming the
// check that denied, when the stream must stop; once it has, every later call says so again.
func (s *StreamScanner) Write(ctx context.Context, delta string) (HookResult, bool) {
	if s.denied != nil {
		return *s.denied, true
	}
	seen := s.text.String()
	from := max(0, len(seen)-s.overlap)
	for from < len(seen) && !utf8.RuneStart(seen[from]) {
		from++
	}
	window := seen[from:] + delta
	s.text.WriteString(delta)
	if len(s.windowed) == 0 || delta == "" {
		return HookResult{}, false
	}

	in := s.in
	in.Text, in.Final, in.Cut = window, false, from > 0 && wordRuneBefore(seen, from) && wordRuneAt(seen, from)
	out := execute(ctx, s.gs, s.windowed, in, false)
	still := s.windowed[:0]
	for _, sl := range s.windowed {
		if r := out.results[sl]; fails(r) {
			s.failed[sl] = r
		} else {
			still = append(still, sl)
		}
	}
	s.windowed = still
	if out.deniedBy == nil {
		return HookResult{}, false
	}
	results := make(map[slot]CheckResult, len(out.results)+len(s.failed))
	for sl, r := range out.results {
		results[sl] = r
	}
	for sl, r := range s.failed {
		results[sl] = r
	}
	res := s.result(results, out.deniedBy)
	s.denied = &res
	return res, true
}

// Text is the answer's text fed so far.
func (s *StreamScanner) Text() string { return s.text.String() }

// Finish runs the checks that judge the whole answer and returns the hook's result for the
// stream (a denial here comes after the answer was sent: the gateway can only report it).
func (s *StreamScanner) Finish(ctx context.Context) HookResult {
	if s.denied != nil {
		return *s.denied
	}
	in := s.in
	in.Text, in.Final = s.text.String(), true
	out := execute(ctx, s.gs, append(append([]slot{}, s.rest...), s.windowed...), in, false)
	for sl, r := range s.failed {
		out.results[sl] = r
	}
	return s.result(out.results, out.deniedBy)
}

func (s *StreamScanner) result(results map[slot]CheckResult, by *DeniedBy) HookResult {
	res := HookResult{Hook: AfterRequest, Guardrails: assemble(s.gs, results, false, s.start), DeniedBy: by}
	for _, g := range res.Guardrails {
		res.Denied = res.Denied || g.Deny
	}
	if res.Denied && res.DeniedBy == nil {
		res.DeniedBy = firstDenier(s.gs, res.Guardrails)
	}
	return res
}

// isWordRune is what \b takes for a word's: an ASCII letter, digit or underscore.
func isWordRune(r rune) bool {
	return r == '_' || ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z') || ('0' <= r && r <= '9')
}

func wordRuneAt(s string, i int) bool {
	r, _ := utf8.DecodeRuneInString(s[i:])
	return isWordRune(r)
}

func wordRuneBefore(s string, i int) bool {
	r, _ := utf8.DecodeLastRuneInString(s[:i])
	return isWordRune(r)
}

// wholeWords is a window without the word pieces at its ends: the tail of a word the window
// starts inside (cut), and the word at its end, which the next delta may go on with.
func wholeWords(window string, cut bool) string {
	from := 0
	for cut && from < len(window) && wordRuneAt(window, from) {
		_, n := utf8.DecodeRuneInString(window[from:])
		from += n
	}
	end := len(window)
	for end > from && wordRuneBefore(window, end) {
		_, n := utf8.DecodeLastRuneInString(window[:end])
		end -= n
	}
	return window[from:end]
}
