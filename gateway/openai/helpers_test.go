package openai

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/domain"
)

// boundCase is one row of a validation table: a body, and either no error (param "-") or a
// refusal naming param, whose message contains msg.
type boundCase struct {
	name  string
	body  string
	param string // "-" for accepted
	msg   string
}

const accepted = "-"

func checkCase(t *testing.T, tc boundCase, err error) {
	t.Helper()
	if tc.param == accepted {
		require.NoError(t, err)
		return
	}
	requireInvalid(t, err, tc.param, tc.msg)
}

func requireInvalid(t *testing.T, err error, param, msg string) {
	t.Helper()
	require.Error(t, err)
	var de *domain.Error
	require.ErrorAs(t, err, &de)
	assert.Equal(t, domain.CodeInvalid, de.Code, de.Message)
	assert.Equal(t, param, de.Param, de.Message)
	if param != "" {
		assert.Contains(t, de.Message, param, "the message names the field")
	}
	if msg != "" {
		assert.Contains(t, de.Message, msg)
	}
}

// chat is a valid chat body with extra top-level members appended.
func chat(extra string) string {
	body := `{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}]`
	if extra != "" {
		body += "," + extra
	}
	return body + "}"
}

// chatMessages is a chat body with the given messages array.
func chatMessages(messages string) string {
	return `{"model":"gpt-4o","messages":` + messages + `}`
}

func completion(extra string) string {
	body := `{"model":"gpt-3.5-turbo-instruct","prompt":"Say this is a test"`
	if extra != "" {
		body += "," + extra
	}
	return body + "}"
}

// tools is a JSON array of n function tools named f0, f1, ...
func tools(n int) string {
	items := make([]string, n)
	for i := range items {
		items[i] = fmt.Sprintf(`{"type":"function","function":{"name":"f%d","parameters":{"type":"object"}}}`, i)
	}
	return "[" + strings.Join(items, ",") + "]"
}

// functions is a JSON array of n deprecated function definitions named f0, f1, ...
func functions(n int) string {
	items := make([]string, n)
	for i := range items {
		items[i] = fmt.Sprintf(`{"name":"f%d"}`, i)
	}
	return "[" + strings.Join(items, ",") + "]"
}

// strs is a JSON array of n strings.
func strs(n int) string {
	items := make([]string, n)
	for i := range items {
		items[i] = fmt.Sprintf(`"s%d"`, i)
	}
	return "[" + strings.Join(items, ",") + "]"
}

func toolNamed(name string) string {
	return `[{"type":"function","function":{"name":"` + name + `"}}]`
}

// biasEntries is n logit_bias entries, token ids 0 to n-1.
func biasEntries(n int) string {
	items := make([]string, n)
	for i := range items {
		items[i] = fmt.Sprintf(`"%d":1`, i)
	}
	return strings.Join(items, ",")
}
