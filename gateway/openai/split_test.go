package openai

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestTopMember(t *testing.T) {
	body := []byte(` {"id":"x","choices":[{"message":{"content":"\"usage\": {}","usage":1}}],` +
		`"usage":{"prompt_tokens":1},"u\u0073age":{"prompt_tokens":2}} `)
	v, ok := TopMember(body, "usage")
	assert.True(t, ok)
	assert.JSONEq(t, `{"prompt_tokens":2}`, string(v), "the last of a repeated name, escapes read, nested ones ignored")
	_, ok = TopMember(body, "missing")
	assert.False(t, ok)
	_, ok = TopMember([]byte(`[{"usage":1}]`), "usage")
	assert.False(t, ok, "not an object")
	_, ok = TopMember([]byte(`  `), "usage")
	assert.False(t, ok)
}
