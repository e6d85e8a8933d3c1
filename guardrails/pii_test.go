package guardrails

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPIIDetection(t *testing.T) {
	jwt := "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
	cases := []struct {
		category string
		text     string
		found    int    // matches of the category
		redacted string // the text redacted, when found
	}{
		{"email", "write to jane.doe+tag@example.co.uk today", 1, "write to [REDACTED:EMAIL] today"},
		{"email", "a@b.io and B_C@mail.example.com.", 2, "[REDACTED:EMAIL] and [REDACTED:EMAIL]."},
		{"email", "follow @handle, ping me @ 5", 0, ""},
		{"email", "user@localhost or x@y", 0, ""},
		{"email", "john..doe@example.com", 0, ""},

		{"phone", "call +44 20 7946 0958 now", 1, "call [REDACTED:PHONE] now"},
		{"phone", "(415) 555-0132 or 415.555.0199", 2, "[REDACTED:PHONE] or [REDACTED:PHONE]"},
		{"phone", "US: +1 415 555 0132", 1, "US: [REDACTED:PHONE]"},
		{"phone", "on 2024-05-12 at 10:30", 0, ""},
		{"phone", "order 4155550132 shipped", 0, ""},
		{"phone", "ext 555-0132", 0, ""},
		{"phone", "3+4567890123 is a sum", 0, ""},
		{"phone", "+12 is not a number", 0, ""},
		{"phone", "ISBN 978-3-16-148410-0", 0, ""},

		{"credit_card", "card 4111 1111 1111 1111 exp", 1, "card [REDACTED:CREDIT_CARD] exp"},
		{"credit_card", "5555-5555-5555-4444", 1, "[REDACTED:CREDIT_CARD]"},
		{"credit_card", "amex 378282246310005", 1, "amex [REDACTED:CREDIT_CARD]"},
		{"credit_card", "4111 1111 1111 1111 2029", 1, "[REDACTED:CREDIT_CARD] 2029"},
		{"credit_card", "4111 1111 1111 1112", 0, ""},
		{"credit_card", "1234 5678 9012 3456", 0, ""},
		{"credit_card", "0000 0000 0000 0000", 0, ""},
		{"credit_card", "id 9999999999999995", 0, ""},

		{"iban", "IBAN DE89 3704 0044 0532 0130 00 please", 1, "IBAN [REDACTED:IBAN] please"},
		{"iban", "GB82WEST12345698765432", 1, "[REDACTED:IBAN]"},
		{"iban", "FR14 2004 1010 0505 0001 3M02 606", 1, "[REDACTED:IBAN]"},
		{"iban", "DE89 3704 0044 0532 0130 00 ABCD", 1, "[REDACTED:IBAN] ABCD"},
		{"iban", "DE89 3704 0044 0532 0130 01", 0, ""},
		{"iban", "XX12 3456 7890 1234 5678", 0, ""},
		{"iban", "GB82 WEST 1234", 0, ""},
		{"iban", "xDE89 3704 0044 0532 0130 00", 0, ""},
		{"iban", "DE89370400440532013000x", 0, ""},

		{"national_id", "SSN 123-45-6789.", 1, "SSN [REDACTED:NATIONAL_ID]."},
		{"national_id", "ssn 123 45 6789", 1, "ssn [REDACTED:NATIONAL_ID]"},
		{"national_id", "NINO AB 12 34 56 C", 1, "NINO [REDACTED:NATIONAL_ID]"},
		{"national_id", "JG103759A", 1, "[REDACTED:NATIONAL_ID]"},
		{"national_id", "078-05-1120 000-12-3456 666-12-3456 923-45-6789 123-00-6789 123-45-0000", 0, ""},
		{"national_id", "part 1-123-45-6789", 0, ""},
		{"national_id", "QQ 12 34 56 C, GB123456A, AB123456E", 0, ""},
		{"national_id", "AB123456Cx xJG103759A", 0, ""},
		{"credit_card", "ref a4111111111111111", 0, ""},

		{"api_key", "key sk-proj-AbC123dEf456GhI789jKl012MnO345 ok", 1, "key [REDACTED:API_KEY] ok"},
		{"api_key", "sk-ant-api03-abcdefghijklmnopqrstuvwxyz012345", 1, "[REDACTED:API_KEY]"},
		{"api_key", "AKIAIOSFODNN7EXAMPLE", 1, "[REDACTED:API_KEY]"},
		{"api_key", "ghp_" + strings.Repeat("aB3", 12), 1, "[REDACTED:API_KEY]"},
		{"api_key", "AIzaSyD-abcdefghijklmnopqrstuvwxyz12345", 1, "[REDACTED:API_KEY]"},
		{"api_key", "xoxb-1234567890-abcdefghij", 1, "[REDACTED:API_KEY]"},
		{"api_key", "sk_live_" + strings.Repeat("a1", 12), 1, "[REDACTED:API_KEY]"},
		{"api_key", "Authorization: Bearer " + jwt, 1, "Authorization: Bearer [REDACTED:API_KEY]"},
		{"api_key", "-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----", 1, "[REDACTED:API_KEY]"},
		{"api_key", "use sk-learn-compatible-estimators-list", 0, ""},
		{"api_key", "AKIA1234 ghp_short eyJhbGciOi.eyJub3Q.notajwtatall", 0, ""},
		{"api_key", "eyJub3RoaW5nIjoxfQ.eyJzdWIiOiIxIn0.abcdefghijklmnop", 0, ""},
	}
	for _, tc := range cases {
		t.Run(tc.category+"/"+tc.text, func(t *testing.T) {
			c := build(t, "default.pii", P{"categories": []any{tc.category}})
			v, err := c.Run(context.Background(), text(tc.text))
			require.NoError(t, err)
			detected := v.Data.(map[string]any)["detected"].(map[string]int)
			assert.Equal(t, tc.found, detected[strings.ToUpper(tc.category)], "detected %v", detected)
			assert.Equal(t, tc.found == 0, v.Pass)

			// Every category at once finds the same here (no category steals another's).
			all := findPII(tc.text, map[string]bool{"email": true, "phone": true, "credit_card": true, "iban": true, "national_id": true, "api_key": true})
			if tc.found == 0 {
				for _, m := range all {
					assert.NotEqual(t, tc.category, m.category)
				}
				return
			}
			assert.Equal(t, tc.redacted, redactMatches(tc.text, all))
		})
	}
}

func TestPIIRedactsEveryMessage(t *testing.T) {
	req := json.RawMessage(`{"model":"m","max_tokens":100,"messages":[
		{"role":"system","content":"Escalate to ops@example.com"},
		{"role":"user","content":[{"type":"text","text":"my card is 4111 1111 1111 1111"},{"type":"image_url","image_url":{"url":"https://x/a.png"}}]},
		{"role":"user","content":"and my key AKIAIOSFODNN7EXAMPLE"}]}`)
	c := build(t, "default.pii", P{"redact": true})
	assert.True(t, c.(Transformer).Transforms())
	v, err := c.Run(context.Background(), Input{Hook: BeforeRequest, Request: req})
	require.NoError(t, err)
	assert.True(t, v.Pass)
	require.NotNil(t, v.Transformed)
	s := string(v.Transformed)
	assert.Contains(t, s, "Escalate to [REDACTED:EMAIL]")
	assert.Contains(t, s, "my card is [REDACTED:CREDIT_CARD]")
	assert.Contains(t, s, "and my key [REDACTED:API_KEY]")
	assert.Contains(t, s, `"max_tokens":100`)
	assert.Contains(t, s, `"url":"https://x/a.png"`)
	assert.NotContains(t, s, "4111")
	assert.Equal(t, map[string]int{"EMAIL": 1, "CREDIT_CARD": 1, "API_KEY": 1}, v.Data.(map[string]any)["detected"])

	answer := json.RawMessage(`{"choices":[{"message":{"role":"assistant","content":"SSN 123-45-6789"}},{"message":{"content":"ok"}}]}`)
	v, err = c.Run(context.Background(), Input{Hook: AfterRequest, Response: answer})
	require.NoError(t, err)
	assert.True(t, v.Pass)
	assert.Equal(t, "SSN [REDACTED:NATIONAL_ID]", ExtractText(AfterRequest, v.Transformed))

	v, err = c.Run(context.Background(), Input{Hook: AfterRequest, Response: json.RawMessage(`{"choices":[{"message":{"content":"clean"}}]}`)})
	require.NoError(t, err)
	assert.True(t, v.Pass)
	assert.Nil(t, v.Transformed, "nothing found, nothing rewritten")
}

func TestPIIWithoutRedactFails(t *testing.T) {
	c := build(t, "default.pii", P{"categories": []any{"EMAIL_ADDRESS", "SSN"}})
	assert.False(t, c.(Transformer).Transforms())
	v, err := c.Run(context.Background(), before(chatRequest("m", "mail a@b.io", "ok", "fine")))
	require.NoError(t, err)
	assert.False(t, v.Pass, "earlier messages are read too")
	assert.Nil(t, v.Transformed)
	assert.NotContains(t, v.Explanation+toJSON(t, v.Data), "a@b.io", "what was found is not repeated")
}

func TestPIIOnAStreamCannotRedact(t *testing.T) {
	c := build(t, "default.pii", P{"redact": true})
	v, err := c.Run(context.Background(), Input{Hook: AfterRequest, Stream: true, Text: "mail a@b.io"})
	require.NoError(t, err)
	assert.False(t, v.Pass)
	assert.Contains(t, v.Explanation, "cannot be redacted")
}

func toJSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

func TestLuhnAndMod97(t *testing.T) {
	assert.True(t, luhn("79927398713"))
	assert.False(t, luhn("79927398710"))
	assert.True(t, mod97("GB82WEST12345698765432"))
	assert.False(t, mod97("GB82WEST12345698765433"))
}
