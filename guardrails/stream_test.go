package guardrails

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func streamGuardrails(t *testing.T, deny bool, checks ...Configured) []Guardrail {
	t.Helper()
	return []Guardrail{{ID: "g", Actions: Actions{Deny: deny}, Checks: checks}}
}

func conf(t *testing.T, id string, params P) Configured {
	t.Helper()
	c, err := NewRegistry().Configure(id, "", decoded(t, params), Deps{})
	require.NoError(t, err)
	return c
}

func TestStreamFindsAMatchSplitBetweenDeltas(t *testing.T) {
	cases := []struct {
		name   string
		deltas []string
		denyAt int // index of the delta whose window denies; -1 none
	}{
		{"two deltas", []string{"this is forb", "idden text", " and more"}, 1},
		{"three deltas", []string{"this is for", "bi", "dden text"}, 2},
		{"one letter at a time", strings.Split("a forbidden word", ""), 10},
		{"no match", []string{"this is for", "bidding"}, -1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			gs := streamGuardrails(t, true, conf(t, "default.regexMatch", P{"rule": "forbidden", "not": true}))
			s := NewStreamScanner(gs, Input{Model: "m"}, StreamOptions{})
			deniedAt := -1
			for i, d := range tc.deltas {
				res, stop := s.Write(context.Background(), d)
				if stop {
					deniedAt = i
					assert.True(t, res.Denied)
					assert.Equal(t, &DeniedBy{Guardrail: "g", Check: "default.regexMatch"}, res.DeniedBy)
					break
				}
			}
			assert.Equal(t, tc.denyAt, deniedAt)
			res := s.Finish(context.Background())
			assert.Equal(t, tc.denyAt >= 0, res.Denied)
			require.Len(t, res.Guardrails, 1)
			require.Len(t, res.Guardrails[0].Checks, 1, "one result per check")
		})
	}
}

func TestStreamDenialSticks(t *testing.T) {
	s := NewStreamScanner(streamGuardrails(t, true, conf(t, "default.contains", P{"words": []any{"darn"}, "operator": "none"})), Input{}, StreamOptions{})
	_, stop := s.Write(context.Background(), "oh da")
	assert.False(t, stop)
	first, stop := s.Write(context.Background(), "rn it")
	require.True(t, stop)
	again, stop := s.Write(context.Background(), "more")
	assert.True(t, stop)
	assert.Equal(t, first.DeniedBy, again.DeniedBy)
	assert.Equal(t, first.DeniedBy, s.Finish(context.Background()).DeniedBy)
}

func TestStreamPIIFoundOnceWithoutDuplicates(t *testing.T) {
	pii := conf(t, "default.pii", P{"categories": []any{"email"}})
	s := NewStreamScanner(streamGuardrails(t, false, pii), Input{}, StreamOptions{Overlap: 32})
	for _, d := range []string{"write to jane.d", "oe@exam", "ple.com please", ", again ", "soon", " bye"} {
		_, stop := s.Write(context.Background(), d)
		assert.False(t, stop, "a guardrail without deny never stops the stream")
	}
	res := s.Finish(context.Background())
	require.Len(t, res.Guardrails[0].Checks, 1)
	c := res.Guardrails[0].Checks[0]
	assert.False(t, c.Verdict)
	assert.Equal(t, map[string]int{"EMAIL": 1}, c.Data.(map[string]any)["detected"], "the email in the overlap of later windows is not found again")
	assert.False(t, res.Guardrails[0].Verdict)
	assert.False(t, res.Denied)
	assert.Nil(t, res.Transformed)
}

func TestStreamRunsWholeAnswerChecksOnceAtTheEnd(t *testing.T) {
	var calls atomic.Int32
	var final Input
	whole := configured("whole", func(_ context.Context, in Input) (Verdict, error) {
		calls.Add(1)
		final = in
		return Verdict{Pass: true}, nil
	})
	gs := []Guardrail{
		{ID: "shape", Actions: Actions{Deny: true}, Checks: []Configured{
			whole,
			conf(t, "default.endsWith", P{"suffix": "Done"}),
			conf(t, "default.wordCount", P{"minWords": 3, "maxWords": 5}),
			conf(t, "default.jsonSchema", P{"schema": P{"type": "object", "required": []any{"a"}}}),
		}},
	}
	s := NewStreamScanner(gs, Input{Model: "m"}, StreamOptions{})
	for _, d := range []string{`{"a": `, `1} is `, "it. Do", "ne"} {
		_, stop := s.Write(context.Background(), d)
		require.False(t, stop)
	}
	assert.Zero(t, calls.Load(), "whole-answer checks do not run on windows")
	res := s.Finish(context.Background())
	assert.Equal(t, int32(1), calls.Load())
	assert.Equal(t, `{"a": 1} is it. Done`, final.Text)
	assert.True(t, final.Stream)
	assert.True(t, final.Final)
	assert.Equal(t, AfterRequest, final.Hook)
	assert.True(t, res.Guardrails[0].Verdict, "%+v", res.Guardrails[0].Checks)
	assert.False(t, res.Denied)
}

func TestStreamFinishFindsMatchesLongerThanAWindow(t *testing.T) {
	long := strings.Repeat("x", 40)
	gs := streamGuardrails(t, true, conf(t, "default.regexMatch", P{"rule": long, "not": true}))
	s := NewStreamScanner(gs, Input{}, StreamOptions{Overlap: 16})
	for i := 0; i < 4; i++ {
		_, stop := s.Write(context.Background(), strings.Repeat("x", 10))
		require.False(t, stop, "40 bytes never fit a 16+10 byte window")
	}
	res := s.Finish(context.Background())
	assert.True(t, res.Denied, "the whole text is read at the end")
}

func TestStreamWindowsCutOnRuneBoundaries(t *testing.T) {
	var windows []string
	rec := Configured{ID: "rec", Check: windowedFunc(func(_ context.Context, in Input) (Verdict, error) {
		if !in.Final {
			windows = append(windows, in.Text)
		}
		return Verdict{Pass: true}, nil
	})}
	s := NewStreamScanner(streamGuardrails(t, false, rec), Input{}, StreamOptions{Overlap: 3})
	s.Write(context.Background(), "ééé")
	s.Write(context.Background(), "z")
	require.Len(t, windows, 2)
	assert.Equal(t, "éz", windows[1], "3 bytes back would split an é: the window starts at the next rune")
	assert.Equal(t, "éééz", s.Text())
}

type windowedFunc checkFunc

func (f windowedFunc) Run(ctx context.Context, in Input) (Verdict, error) { return f(ctx, in) }
func (windowedFunc) Windowed() bool                                       { return true }

// A rule with word boundaries matches whole words in a stream as in the whole answer: a word
// the next delta goes on with, or whose head the window's overlap cut off, is not a word of
// its own. An anchored rule is judged on the whole answer only: a window's ends are not the
// text's.
func TestStreamWindowsKeepWordsAndAnchorsWhole(t *testing.T) {
	cases := []struct {
		name    string
		rule    string
		overlap int
		deltas  []string
		denyAt  int // index of the delta whose window denies; -1 none
		denied  bool
	}{
		{"a word that goes on", `\bbad\b`, 0, []string{"this is bad", "ge of honour"}, -1, false},
		{"a word that ends", `\bbad\b`, 0, []string{"this is bad", " news"}, 1, true},
		{"a word that ends the answer", `\bbad\b`, 0, []string{"this is ", "bad"}, -1, true},
		{"a word the overlap cut into", `\bsic\b`, 3, []string{"classic", " text"}, -1, false},
		{"a word after the cut", `\btext\b`, 6, []string{"classic", " text", "."}, 2, true},
		{"begin anchor", `^bad`, 0, []string{"good ", "bad news"}, -1, false},
		{"end anchor", `bad$`, 0, []string{"bad", " news"}, -1, false},
		{"end anchor at the end", `bad$`, 0, []string{"news: ", "bad"}, -1, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			gs := streamGuardrails(t, true, conf(t, "default.regexMatch", P{"rule": tc.rule, "not": true}))
			s := NewStreamScanner(gs, Input{Model: "m"}, StreamOptions{Overlap: tc.overlap})
			deniedAt := -1
			for i, d := range tc.deltas {
				if _, stop := s.Write(context.Background(), d); stop {
					deniedAt = i
					break
				}
			}
			assert.Equal(t, tc.denyAt, deniedAt)
			assert.Equal(t, tc.denied, s.Finish(context.Background()).Denied, "the whole answer decides in the end")
		})
	}
}
