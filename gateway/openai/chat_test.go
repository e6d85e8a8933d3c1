package openai

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestParseChatBounds walks every bound of 2.2 and of the Limits table (part 8) that applies to
// chat, at its edge and one step past it, and the type of every field the specification names.
func TestParseChatBounds(t *testing.T) {
	cases := []boundCase{
		// messages: at least 1, and each a valid message.
		{"one message", chat(""), accepted, ""},
		{"messages empty", chatMessages(`[]`), "messages", "at least 1"},
		{"messages missing", `{"model":"gpt-4o"}`, "messages", "required"},
		{"messages null", `{"model":"gpt-4o","messages":null}`, "messages", "required"},
		{"messages a string", chatMessages(`"hi"`), "messages", "must be an array"},
		{"message not an object", chatMessages(`[1]`), "messages[0]", "must be an object"},
		{"role missing", chatMessages(`[{"content":"hi"}]`), "messages[0].role", "required"},
		{"role unknown", chatMessages(`[{"role":"robot","content":"hi"}]`), "messages[0].role", "system, developer, user, assistant, tool or function"},
		{"role not a string", chatMessages(`[{"role":1,"content":"hi"}]`), "messages[0].role", "must be a string"},
		{"every role", chatMessages(`[{"role":"system","content":"s"},{"role":"developer","content":"d"},{"role":"user","content":"u"},` +
			`{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},` +
			`{"role":"tool","tool_call_id":"c1","content":"r"},{"role":"function","name":"f","content":null}]`), accepted, ""},
		{"second message broken", chatMessages(`[{"role":"user","content":"a"},{"role":"user"}]`), "messages[1].content", "required"},
		{"user content null", chatMessages(`[{"role":"user","content":null}]`), "messages[0].content", "required"},
		{"user content a number", chatMessages(`[{"role":"user","content":5}]`), "messages[0].content", "a string or an array of content parts"},
		{"content parts", chatMessages(`[{"role":"user","content":[{"type":"text","text":"a"},{"type":"image_url","image_url":{"url":"data:image/png;base64,AA=="}}]}]`), accepted, ""},
		{"content parts empty", chatMessages(`[{"role":"user","content":[]}]`), "messages[0].content", "at least 1"},
		{"content part without type", chatMessages(`[{"role":"user","content":[{"text":"a"}]}]`), "messages[0].content[0].type", "required"},
		{"text part without text", chatMessages(`[{"role":"user","content":[{"type":"text"}]}]`), "messages[0].content[0].text", "required"},
		{"text part text a number", chatMessages(`[{"role":"user","content":[{"type":"text","text":1}]}]`), "messages[0].content[0].text", "must be a string"},
		{"tool message without tool_call_id", chatMessages(`[{"role":"tool","content":"r"}]`), "messages[0].tool_call_id", "required"},
		{"tool message empty tool_call_id", chatMessages(`[{"role":"tool","content":"r","tool_call_id":""}]`), "messages[0].tool_call_id", "empty"},
		{"tool message without content", chatMessages(`[{"role":"tool","tool_call_id":"c1"}]`), "messages[0].content", "required"},
		{"assistant without content or calls", chatMessages(`[{"role":"assistant"}]`), "messages[0].content", "required"},
		{"assistant null content with function_call", chatMessages(`[{"role":"assistant","content":null,"function_call":{"name":"f","arguments":"{}"}}]`), accepted, ""},
		{"assistant with empty tool_calls needs content", chatMessages(`[{"role":"assistant","tool_calls":[]}]`), "messages[0].content", "required"},
		{"tool_calls not an array", chatMessages(`[{"role":"assistant","content":"a","tool_calls":{}}]`), "messages[0].tool_calls", "must be an array"},
		{"function message without name", chatMessages(`[{"role":"function","content":"r"}]`), "messages[0].name", "required"},
		{"name not a string", chatMessages(`[{"role":"user","content":"a","name":7}]`), "messages[0].name", "must be a string"},

		// model: a required, non-empty string.
		{"model missing", `{"messages":[{"role":"user","content":"hi"}]}`, "model", "required"},
		{"model empty", `{"model":"","messages":[{"role":"user","content":"hi"}]}`, "model", "empty"},
		{"model a number", `{"model":4,"messages":[{"role":"user","content":"hi"}]}`, "model", "must be a string"},

		// penalties: -2 to 2.
		{"frequency_penalty -2", chat(`"frequency_penalty":-2`), accepted, ""},
		{"frequency_penalty 2", chat(`"frequency_penalty":2`), accepted, ""},
		{"frequency_penalty -2.01", chat(`"frequency_penalty":-2.01`), "frequency_penalty", "between -2 and 2 (got -2.01)"},
		{"frequency_penalty 2.01", chat(`"frequency_penalty":2.01`), "frequency_penalty", "between -2 and 2 (got 2.01)"},
		{"presence_penalty -2", chat(`"presence_penalty":-2`), accepted, ""},
		{"presence_penalty 2", chat(`"presence_penalty":2`), accepted, ""},
		{"presence_penalty -2.01", chat(`"presence_penalty":-2.01`), "presence_penalty", "between -2 and 2"},
		{"presence_penalty 2.01", chat(`"presence_penalty":2.01`), "presence_penalty", "between -2 and 2"},
		{"presence_penalty a string", chat(`"presence_penalty":"1"`), "presence_penalty", "must be a number"},
		{"penalty null means absent", chat(`"presence_penalty":null`), accepted, ""},

		// logit_bias: token ids to -100..100.
		{"logit_bias -100 and 100", chat(`"logit_bias":{"50256":-100,"15":100}`), accepted, ""},
		{"logit_bias 101", chat(`"logit_bias":{"50256":101}`), "logit_bias", "between -100 and 100 (got 101"},
		{"logit_bias -101", chat(`"logit_bias":{"50256":-101}`), "logit_bias", "between -100 and 100 (got -101"},
		{"logit_bias key not a token id", chat(`"logit_bias":{"hello":1}`), "logit_bias", "token ids"},
		{"logit_bias value a string", chat(`"logit_bias":{"1":"5"}`), "logit_bias", "must be a number"},
		{"logit_bias an array", chat(`"logit_bias":[1]`), "logit_bias", "must be an object"},

		// logprobs and top_logprobs: 0 to 20, and only with logprobs=true.
		{"logprobs a string", chat(`"logprobs":"true"`), "logprobs", "must be a boolean"},
		{"top_logprobs 0", chat(`"logprobs":true,"top_logprobs":0`), accepted, ""},
		{"top_logprobs 20", chat(`"logprobs":true,"top_logprobs":20`), accepted, ""},
		{"top_logprobs 21", chat(`"logprobs":true,"top_logprobs":21`), "top_logprobs", "between 0 and 20 (got 21)"},
		{"top_logprobs -1", chat(`"logprobs":true,"top_logprobs":-1`), "top_logprobs", "between 0 and 20"},
		{"top_logprobs without logprobs", chat(`"top_logprobs":5`), "top_logprobs", "requires logprobs"},
		{"top_logprobs with logprobs false", chat(`"logprobs":false,"top_logprobs":5`), "top_logprobs", "requires logprobs"},

		// max_tokens and max_completion_tokens: integers of at least 1.
		{"max_tokens 1", chat(`"max_tokens":1`), accepted, ""},
		{"max_tokens 0", chat(`"max_tokens":0`), "max_tokens", "at least 1 (got 0)"},
		{"max_tokens 1.5", chat(`"max_tokens":1.5`), "max_tokens", "must be an integer"},
		{"max_completion_tokens 1", chat(`"max_completion_tokens":1`), accepted, ""},
		{"max_completion_tokens 0", chat(`"max_completion_tokens":0`), "max_completion_tokens", "at least 1"},

		// n: 1 to 128, an integer.
		{"n 1", chat(`"n":1`), accepted, ""},
		{"n 128", chat(`"n":128`), accepted, ""},
		{"n 0", chat(`"n":0`), "n", "between 1 and 128 (got 0)"},
		{"n 129", chat(`"n":129`), "n", "between 1 and 128 (got 129)"},
		{"n 1.5", chat(`"n":1.5`), "n", "must be an integer (got 1.5)"},
		{"n a string", chat(`"n":"2"`), "n", "must be an integer, not a string"},
		{"n 2.0 is integral", chat(`"n":2.0`), accepted, ""},
		{"n 1e400 overflows", chat(`"n":1e400`), "n", "finite"},
		{"n 2^70 out of range", chat(`"n":1180591620717411303424`), "n", "out of range"},

		// response_format, seed.
		{"response_format", chat(`"response_format":{"type":"json_object"}`), accepted, ""},
		{"response_format a string", chat(`"response_format":"json"`), "response_format", "must be an object"},
		{"response_format type a number", chat(`"response_format":{"type":1}`), "response_format.type", "must be a string"},
		{"seed negative", chat(`"seed":-42`), accepted, ""},
		{"seed 1.5", chat(`"seed":1.5`), "seed", "must be an integer"},

		// stop: a string or up to 4 strings.
		{"stop a string", chat(`"stop":"\n"`), accepted, ""},
		{"stop 4", chat(`"stop":` + strs(4)), accepted, ""},
		{"stop 5", chat(`"stop":` + strs(5)), "stop", "at most 4 sequences (got 5)"},
		{"stop item a number", chat(`"stop":["a",1]`), "stop[1]", "must be a string"},
		{"stop a number", chat(`"stop":1`), "stop", "a string or an array of strings"},

		// stream and stream_options, which need stream=true.
		{"stream", chat(`"stream":true,"stream_options":{"include_usage":true}`), accepted, ""},
		{"stream a string", chat(`"stream":"true"`), "stream", "must be a boolean"},
		{"stream_options without stream", chat(`"stream_options":{"include_usage":true}`), "stream_options", "only allowed when stream is true"},
		{"stream_options with stream false", chat(`"stream":false,"stream_options":{}`), "stream_options", "only allowed when stream is true"},
		{"stream_options null without stream", chat(`"stream_options":null`), accepted, ""},
		{"include_usage a string", chat(`"stream":true,"stream_options":{"include_usage":"yes"}`), "stream_options.include_usage", "must be a boolean"},

		// thinking: its shape only.
		{"thinking", chat(`"thinking":{"type":"enabled","budget_tokens":2048}`), accepted, ""},
		{"thinking dynamic budget", chat(`"thinking":{"type":"enabled","budget_tokens":-1}`), accepted, ""},
		{"thinking without type", chat(`"thinking":{"budget_tokens":2048}`), "thinking.type", "required"},
		{"thinking budget a string", chat(`"thinking":{"type":"enabled","budget_tokens":"lots"}`), "thinking.budget_tokens", "must be an integer"},
		{"thinking a boolean", chat(`"thinking":true`), "thinking", "must be an object"},

		// temperature 0 to 2, top_p 0 to 1.
		{"temperature 0", chat(`"temperature":0`), accepted, ""},
		{"temperature 2", chat(`"temperature":2`), accepted, ""},
		{"temperature -0.01", chat(`"temperature":-0.01`), "temperature", "between 0 and 2 (got -0.01)"},
		{"temperature 2.01", chat(`"temperature":2.01`), "temperature", "between 0 and 2 (got 2.01)"},
		{"temperature a string", chat(`"temperature":"1"`), "temperature", "must be a number, not a string"},
		{"temperature 1e400", chat(`"temperature":1e400`), "temperature", "finite"},
		{"top_p 0", chat(`"top_p":0`), accepted, ""},
		{"top_p 1", chat(`"top_p":1`), accepted, ""},
		{"top_p 1.01", chat(`"top_p":1.01`), "top_p", "between 0 and 1 (got 1.01)"},
		{"top_p -0.01", chat(`"top_p":-0.01`), "top_p", "between 0 and 1"},

		// tools: at most 128 function tools, valid names.
		{"tools 128", chat(`"tools":` + tools(128)), accepted, ""},
		{"tools 129", chat(`"tools":` + tools(129)), "tools", "at most 128 tools (got 129)"},
		{"tools empty", chat(`"tools":[]`), accepted, ""},
		{"tools an object", chat(`"tools":{}`), "tools", "must be an array"},
		{"tool not function", chat(`"tools":[{"type":"retrieval"}]`), "tools[0].type", `must be "function"`},
		{"tool without type", chat(`"tools":[{"function":{"name":"f"}}]`), "tools[0].type", "required"},
		{"tool without function", chat(`"tools":[{"type":"function"}]`), "tools[0].function", "required"},
		{"tool name 64", chat(`"tools":` + toolNamed(strings.Repeat("a", 64))), accepted, ""},
		{"tool name 65", chat(`"tools":` + toolNamed(strings.Repeat("a", 65))), "tools[0].function.name", "1 to 64 characters"},
		{"tool name empty", chat(`"tools":` + toolNamed("")), "tools[0].function.name", "1 to 64 characters"},
		{"tool name with a dot", chat(`"tools":` + toolNamed("a.b")), "tools[0].function.name", "a-z, A-Z, 0-9"},
		{"tool name dashes and underscores", chat(`"tools":` + toolNamed("get_weather-v2")), accepted, ""},
		{"tool parameters a string", chat(`"tools":[{"type":"function","function":{"name":"f","parameters":"{}"}}]`), "tools[0].function.parameters", "must be an object"},
		{"tool strict a string", chat(`"tools":[{"type":"function","function":{"name":"f","strict":"yes"}}]`), "tools[0].function.strict", "must be a boolean"},
		{"second tool broken", chat(`"tools":[{"type":"function","function":{"name":"f"}},{"type":"function","function":{}}]`), "tools[1].function.name", "required"},

		// tool_choice: none, auto, required, or a function among the tools.
		{"tool_choice auto", chat(`"tools":` + tools(1) + `,"tool_choice":"auto"`), accepted, ""},
		{"tool_choice none", chat(`"tool_choice":"none"`), accepted, ""},
		{"tool_choice required", chat(`"tools":` + tools(1) + `,"tool_choice":"required"`), accepted, ""},
		{"tool_choice unknown string", chat(`"tool_choice":"always"`), "tool_choice", "none, auto, required"},
		{"tool_choice named", chat(`"tools":` + tools(2) + `,"tool_choice":{"type":"function","function":{"name":"f1"}}`), accepted, ""},
		{"tool_choice names no tool", chat(`"tools":` + tools(2) + `,"tool_choice":{"type":"function","function":{"name":"g"}}`), "tool_choice.function.name", "not the name of one of the tools"},
		{"tool_choice named without tools", chat(`"tool_choice":{"type":"function","function":{"name":"f0"}}`), "tool_choice.function.name", "not the name"},
		{"tool_choice wrong type", chat(`"tools":` + tools(1) + `,"tool_choice":{"type":"file_search"}`), "tool_choice.type", `must be "function"`},
		{"tool_choice without function", chat(`"tools":` + tools(1) + `,"tool_choice":{"type":"function"}`), "tool_choice.function", "required"},
		{"tool_choice a number", chat(`"tool_choice":1`), "tool_choice", "a string or an object"},
		{"parallel_tool_calls a string", chat(`"parallel_tool_calls":"yes"`), "parallel_tool_calls", "must be a boolean"},
		{"user a number", chat(`"user":5`), "user", "must be a string"},

		// functions (deprecated): 1 to 128; function_call none, auto or one of them.
		{"functions 1", chat(`"functions":` + functions(1)), accepted, ""},
		{"functions 128", chat(`"functions":` + functions(128)), accepted, ""},
		{"functions 0", chat(`"functions":[]`), "functions", "between 1 and 128 functions (got 0)"},
		{"functions 129", chat(`"functions":` + functions(129)), "functions", "between 1 and 128 functions (got 129)"},
		{"function without name", chat(`"functions":[{"description":"d"}]`), "functions[0].name", "required"},
		{"function_call auto", chat(`"functions":` + functions(1) + `,"function_call":"auto"`), accepted, ""},
		{"function_call named", chat(`"functions":` + functions(2) + `,"function_call":{"name":"f1"}`), accepted, ""},
		{"function_call required is not allowed", chat(`"function_call":"required"`), "function_call", "none, auto"},
		{"function_call names no function", chat(`"functions":` + functions(1) + `,"function_call":{"name":"g"}`), "function_call.name", "not the name of one of the functions"},

		// Fields beyond the specification are the provider's business and pass.
		{"unknown fields kept", chat(`"reasoning_effort":"low","metadata":{"a":"b"},"x_vendor":[1,{"y":null}]`), accepted, ""},
		{"keys are exact: Temperature is not temperature", chat(`"Temperature":9`), accepted, ""},
		{"repeated key", chat(`"n":2,"n":500`), "n", "more than once"},
		{"repeated key, same value", chat(`"model":"gpt-4o"`), "model", "more than once"},
		{"repeated key in a message", chatMessages(`[{"role":"user","role":"system","content":"a"}]`), "messages[0].role", "more than once"},
		{"repeated key in a large object", chat(`"logit_bias":{` + biasEntries(40) + `,"3":1}`), "logit_bias.3", "more than once"},
		{"repeated key spelled with an escape", chat(`"n":1,"\u006e":2`), "n", "more than once"},
		{"repeated key in tool_choice", chat(`"tools":` + tools(1) + `,"tool_choice":{"type":"function","type":"function"}`), "tool_choice.type", "more than once"},
		{"repeated key in a content part", chatMessages(`[{"role":"user","content":[{"type":"text","text":"a","text":"b"}]}]`), "messages[0].content[0].text", "more than once"},
		{"repeated key where nothing is checked", chat(`"tools":[{"type":"function","function":{"name":"f","parameters":{"a":1,"a":2}}}]`), accepted, ""},

		// The body itself.
		{"empty body", ``, "", "empty"},
		{"whitespace body", " \n", "", "empty"},
		{"not JSON", `{"model":`, "", "not valid JSON"},
		{"garbage", `hello`, "", "not valid JSON"},
		{"an array", `[1]`, "", "must be a JSON object, not an array"},
		{"null", `null`, "", "must be a JSON object, not null"},
		{"trailing data", chat("") + `{}`, "", "not valid JSON"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req, err := ParseChat([]byte(tc.body))
			checkCase(t, tc, err)
			if err == nil {
				assert.Equal(t, tc.body, string(req.Raw), "the raw body is kept as sent")
			}
		})
	}
}

func TestParseChatExposesWhatTheGatewayNeeds(t *testing.T) {
	body := `{
	  "model": "gpt-4o-mini",
	  "messages": [
	    {"role": "system", "content": "Be brief."},
	    {"role": "user", "name": "ann", "content": [{"type": "text", "text": "What is"}, {"type": "image_url", "image_url": {"url": "https://example.com/a.png"}}, {"type": "text", "text": "this?"}]},
	    {"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "look", "arguments": "{\"q\":1}"}}]},
	    {"role": "tool", "tool_call_id": "call_1", "content": "a cat"}
	  ],
	  "stream": true,
	  "stream_options": {"include_usage": true},
	  "n": 3,
	  "max_tokens": 100,
	  "tools": [{"type": "function", "function": {"name": "look"}}, {"type": "function", "function": {"name": "search"}}],
	  "thinking": {"type": "enabled", "budget_tokens": 1024},
	  "user": "user-7",
	  "vendor_extra": {"keep": "me"}
	}`
	req, err := ParseChat([]byte(body))
	require.NoError(t, err)
	assert.Equal(t, "gpt-4o-mini", req.Model)
	assert.True(t, req.Stream)
	assert.True(t, req.StreamOptions.IncludeUsage)
	assert.Equal(t, 3, req.N)
	assert.Equal(t, 100, req.MaxTokens)
	assert.Equal(t, 100, req.OutputLimit())
	assert.Equal(t, []string{"look", "search"}, req.ToolNames())
	require.NotNil(t, req.Thinking)
	assert.Equal(t, "enabled", req.Thinking.Type)
	require.NotNil(t, req.Thinking.BudgetTokens)
	assert.Equal(t, 1024, *req.Thinking.BudgetTokens)
	assert.Equal(t, "user-7", req.User)
	assert.Equal(t, body, string(req.Raw))
	require.Len(t, req.Messages, 4)
	assert.Equal(t, Message{Role: "system", Text: "Be brief."}, req.Messages[0])
	assert.Equal(t, Message{Role: "user", Name: "ann", Text: "What is\nthis?", Content: []Part{
		{Type: "text", Text: "What is"},
		{Type: "image_url", ImageURL: &ImageURL{URL: "https://example.com/a.png"}},
		{Type: "text", Text: "this?"},
	}}, req.Messages[1])
	assert.Equal(t, "assistant", req.Messages[2].Role)
	assert.Equal(t, "", req.Messages[2].Text)
	assert.Equal(t, []ToolCall{{ID: "call_1", Type: "function", Function: FunctionCall{Name: "look", Arguments: `{"q":1}`}}}, req.Messages[2].ToolCalls)
	assert.Equal(t, Message{Role: "tool", Text: "a cat", ToolCallID: "call_1"}, req.Messages[3])
}

func TestParseChatDefaults(t *testing.T) {
	req, err := ParseChat([]byte(chat("")))
	require.NoError(t, err)
	assert.Equal(t, 1, req.N, "n defaults to 1")
	assert.False(t, req.Stream)
	assert.False(t, req.StreamOptions.IncludeUsage)
	assert.Zero(t, req.OutputLimit(), "no limit sent: the model's own")
	assert.Nil(t, req.Tools)
	assert.Nil(t, req.Thinking)

	req, err = ParseChat([]byte(chat(`"max_tokens":50,"max_completion_tokens":70`)))
	require.NoError(t, err)
	assert.Equal(t, 70, req.OutputLimit(), "max_completion_tokens replaces max_tokens")
}

// TestParseChatReportsTheFirstProblem: with several broken fields, the answer is stable: the
// first field in the parser's order, and within an object the first in the body's order.
func TestParseChatReportsTheFirstProblem(t *testing.T) {
	body := `{"model":"","messages":[],"n":0,"temperature":9,"logit_bias":{"9":500,"1":500}}`
	for range 20 {
		_, err := ParseChat([]byte(body))
		requireInvalid(t, err, "messages", "")
	}
	body = chat(`"logit_bias":{"9":500,"1":500,"5":-500}`)
	for range 20 {
		_, err := ParseChat([]byte(body))
		requireInvalid(t, err, "logit_bias", "token 9)")
	}
}
