package openai

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestParseCompletionBounds walks every bound of 2.4 and of the Limits table (part 8) that
// applies to text completions, at its edge and one step past it.
func TestParseCompletionBounds(t *testing.T) {
	cases := []boundCase{
		{"minimal", completion(""), accepted, ""},
		{"model missing", `{"prompt":"a"}`, "model", "required"},
		{"model a number", `{"model":1,"prompt":"a"}`, "model", "must be a string"},

		// prompt: a string, strings, token ids or arrays of token ids.
		{"prompt missing", `{"model":"m"}`, "prompt", "required"},
		{"prompt empty string", `{"model":"m","prompt":""}`, accepted, ""},
		{"prompt strings", `{"model":"m","prompt":["a","b"]}`, accepted, ""},
		{"prompt token ids", `{"model":"m","prompt":[1212,318,257]}`, accepted, ""},
		{"prompt token id arrays", `{"model":"m","prompt":[[1212,318],[257]]}`, accepted, ""},
		{"prompt empty array", `{"model":"m","prompt":[]}`, "prompt", "empty array"},
		{"prompt empty token array", `{"model":"m","prompt":[[]]}`, "prompt[0]", "empty array"},
		{"prompt mixed", `{"model":"m","prompt":["a",1]}`, "prompt[1]", "must be a string like prompt[0], not a number"},
		{"prompt negative token", `{"model":"m","prompt":[1,-2]}`, "prompt[1]", "at least 0"},
		{"prompt fractional token", `{"model":"m","prompt":[[1,2.5]]}`, "prompt[0][1]", "must be an integer"},
		{"prompt a number", `{"model":"m","prompt":5}`, "prompt", "a string, an array of strings"},
		{"prompt objects", `{"model":"m","prompt":[{}]}`, "prompt", "a string, an array of strings"},

		// best_of: 0 to 20, greater than n, not streamed.
		{"best_of 0", completion(`"best_of":0`), accepted, ""},
		{"best_of 20", completion(`"best_of":20`), accepted, ""},
		{"best_of 21", completion(`"best_of":21`), "best_of", "between 0 and 20 (got 21)"},
		{"best_of -1", completion(`"best_of":-1`), "best_of", "between 0 and 20"},
		{"best_of greater than n", completion(`"best_of":3,"n":2`), accepted, ""},
		{"best_of equal to n", completion(`"best_of":2,"n":2`), "best_of", "greater than n (got best_of 2 and n 2)"},
		{"best_of below n", completion(`"best_of":1,"n":2`), "best_of", "greater than n"},
		{"best_of 0 with n", completion(`"best_of":0,"n":1`), "best_of", "greater than n"},
		{"best_of and n both the default 1", completion(`"best_of":1,"n":1`), accepted, ""},
		{"best_of with stream", completion(`"best_of":2,"stream":true`), "best_of", "cannot be used with stream"},
		{"best_of 1 with stream", completion(`"best_of":1,"stream":true`), accepted, ""},
		{"best_of a string", completion(`"best_of":"2"`), "best_of", "must be an integer"},

		{"echo", completion(`"echo":true`), accepted, ""},
		{"echo a string", completion(`"echo":"yes"`), "echo", "must be a boolean"},

		// penalties.
		{"frequency_penalty -2", completion(`"frequency_penalty":-2`), accepted, ""},
		{"frequency_penalty 2", completion(`"frequency_penalty":2`), accepted, ""},
		{"frequency_penalty -2.01", completion(`"frequency_penalty":-2.01`), "frequency_penalty", "between -2 and 2"},
		{"frequency_penalty 2.01", completion(`"frequency_penalty":2.01`), "frequency_penalty", "between -2 and 2"},
		{"presence_penalty -2", completion(`"presence_penalty":-2`), accepted, ""},
		{"presence_penalty 2", completion(`"presence_penalty":2`), accepted, ""},
		{"presence_penalty -2.01", completion(`"presence_penalty":-2.01`), "presence_penalty", "between -2 and 2"},
		{"presence_penalty 2.01", completion(`"presence_penalty":2.01`), "presence_penalty", "between -2 and 2"},

		// logit_bias.
		{"logit_bias -100 and 100", completion(`"logit_bias":{"50256":-100,"1":100}`), accepted, ""},
		{"logit_bias 101", completion(`"logit_bias":{"50256":101}`), "logit_bias", "between -100 and 100"},
		{"logit_bias -101", completion(`"logit_bias":{"50256":-101}`), "logit_bias", "between -100 and 100"},

		// logprobs: an integer from 0 to 5 here.
		{"logprobs 0", completion(`"logprobs":0`), accepted, ""},
		{"logprobs 5", completion(`"logprobs":5`), accepted, ""},
		{"logprobs 6", completion(`"logprobs":6`), "logprobs", "between 0 and 5 (got 6)"},
		{"logprobs -1", completion(`"logprobs":-1`), "logprobs", "between 0 and 5"},
		{"logprobs a boolean", completion(`"logprobs":true`), "logprobs", "must be an integer, not a boolean"},

		// max_tokens: at least 0.
		{"max_tokens 0", completion(`"max_tokens":0`), accepted, ""},
		{"max_tokens -1", completion(`"max_tokens":-1`), "max_tokens", "at least 0 (got -1)"},
		{"max_tokens 2.5", completion(`"max_tokens":2.5`), "max_tokens", "must be an integer"},

		// n: 1 to 128.
		{"n 1", completion(`"n":1`), accepted, ""},
		{"n 128", completion(`"n":128`), accepted, ""},
		{"n 0", completion(`"n":0`), "n", "between 1 and 128"},
		{"n 129", completion(`"n":129`), "n", "between 1 and 128"},
		{"n a string", completion(`"n":"2"`), "n", "must be an integer"},

		{"seed", completion(`"seed":7`), accepted, ""},
		{"seed a string", completion(`"seed":"7"`), "seed", "must be an integer"},

		// stop: up to 4.
		{"stop 4", completion(`"stop":` + strs(4)), accepted, ""},
		{"stop 5", completion(`"stop":` + strs(5)), "stop", "at most 4"},

		// stream_options only with stream.
		{"stream with options", completion(`"stream":true,"stream_options":{"include_usage":true}`), accepted, ""},
		{"stream_options without stream", completion(`"stream_options":{"include_usage":true}`), "stream_options", "only allowed when stream is true"},

		{"suffix", completion(`"suffix":"end"`), accepted, ""},
		{"suffix a number", completion(`"suffix":5`), "suffix", "must be a string"},

		// temperature and top_p.
		{"temperature 0", completion(`"temperature":0`), accepted, ""},
		{"temperature 2", completion(`"temperature":2`), accepted, ""},
		{"temperature -0.01", completion(`"temperature":-0.01`), "temperature", "between 0 and 2"},
		{"temperature 2.01", completion(`"temperature":2.01`), "temperature", "between 0 and 2"},
		{"top_p 0", completion(`"top_p":0`), accepted, ""},
		{"top_p 1", completion(`"top_p":1`), accepted, ""},
		{"top_p 1.01", completion(`"top_p":1.01`), "top_p", "between 0 and 1"},

		{"user a number", completion(`"user":1`), "user", "must be a string"},
		{"unknown fields kept", completion(`"vendor":{"x":1}`), accepted, ""},
		{"not an object", `"prompt"`, "", "must be a JSON object"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req, err := ParseCompletion([]byte(tc.body))
			checkCase(t, tc, err)
			if err == nil {
				assert.Equal(t, tc.body, string(req.Raw))
			}
		})
	}
}

func TestParseCompletionExposesWhatTheGatewayNeeds(t *testing.T) {
	req, err := ParseCompletion([]byte(completion("")))
	require.NoError(t, err)
	assert.Equal(t, "gpt-3.5-turbo-instruct", req.Model)
	assert.Equal(t, []string{"Say this is a test"}, req.Prompts)
	assert.Equal(t, 1, req.N)
	assert.Equal(t, 1, req.BestOf)
	assert.Equal(t, 16, req.MaxTokens, "max_tokens defaults to 16")

	req, err = ParseCompletion([]byte(`{"model":"m","prompt":[[1,2,3],[4]],"n":2,"best_of":4,"max_tokens":0,"echo":true,"user":"u","stream":false}`))
	require.NoError(t, err)
	assert.Nil(t, req.Prompts)
	assert.Equal(t, 4, req.PromptTokenIDs)
	assert.Equal(t, 2, req.N)
	assert.Equal(t, 4, req.BestOf)
	assert.Equal(t, 0, req.MaxTokens)
	assert.True(t, req.Echo)
	assert.Equal(t, "u", req.User)

	req, err = ParseCompletion([]byte(`{"model":"m","prompt":"p","stream":true,"stream_options":{"include_usage":true}}`))
	require.NoError(t, err)
	assert.True(t, req.Stream)
	assert.True(t, req.StreamOptions.IncludeUsage)
}

func TestParseEmbedding(t *testing.T) {
	cases := []boundCase{
		{"a string", `{"model":"text-embedding-3-small","input":"hello"}`, accepted, ""},
		{"strings", `{"model":"e","input":["a","b"]}`, accepted, ""},
		{"token ids", `{"model":"e","input":[1,2,3]}`, accepted, ""},
		{"token id arrays", `{"model":"e","input":[[1,2],[3]]}`, accepted, ""},
		{"input missing", `{"model":"e"}`, "input", "required"},
		{"input null", `{"model":"e","input":null}`, "input", "required"},
		{"input empty string", `{"model":"e","input":""}`, "input", "empty string"},
		{"input empty array", `{"model":"e","input":[]}`, "input", "empty array"},
		{"input empty token array", `{"model":"e","input":[[1],[]]}`, "input[1]", "empty array"},
		{"input mixed", `{"model":"e","input":[[1],"a"]}`, "input[1]", "must be an array like input[0]"},
		{"input an object", `{"model":"e","input":{"text":"a"}}`, "input", "a string, an array of strings"},
		{"model missing", `{"input":"a"}`, "model", "required"},
		{"dimensions 1", `{"model":"e","input":"a","dimensions":1}`, accepted, ""},
		{"dimensions 0", `{"model":"e","input":"a","dimensions":0}`, "dimensions", "at least 1"},
		{"encoding_format", `{"model":"e","input":"a","encoding_format":"base64"}`, accepted, ""},
		{"encoding_format a number", `{"model":"e","input":"a","encoding_format":1}`, "encoding_format", "must be a string"},
		{"user a number", `{"model":"e","input":"a","user":1}`, "user", "must be a string"},
		{"unknown fields kept", `{"model":"e","input":"a","input_type":"search_query"}`, accepted, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req, err := ParseEmbedding([]byte(tc.body))
			checkCase(t, tc, err)
			if err == nil {
				assert.Equal(t, tc.body, string(req.Raw))
			}
		})
	}

	req, err := ParseEmbedding([]byte(`{"model":"e","input":["ab","cd"],"dimensions":256,"encoding_format":"float","user":"u"}`))
	require.NoError(t, err)
	assert.Equal(t, &EmbeddingRequest{Model: "e", Inputs: []string{"ab", "cd"}, Dimensions: 256, EncodingFormat: "float", User: "u",
		Raw: req.Raw, members: req.members}, req)
}

func TestParseRerank(t *testing.T) {
	cases := []boundCase{
		{"strings", `{"model":"rerank-v3.5","query":"capital of France?","documents":["Paris","Berlin"]}`, accepted, ""},
		{"objects", `{"model":"r","query":"q","documents":[{"text":"Paris"},{"title":"t","body":"b"}],"rank_fields":["body"]}`, accepted, ""},
		{"model missing", `{"query":"q","documents":["a"]}`, "model", "required"},
		{"query missing", `{"model":"r","documents":["a"]}`, "query", "required"},
		{"query a number", `{"model":"r","query":1,"documents":["a"]}`, "query", "must be a string"},
		{"documents missing", `{"model":"r","query":"q"}`, "documents", "required"},
		{"documents empty", `{"model":"r","query":"q","documents":[]}`, "documents", "at least 1"},
		{"documents a string", `{"model":"r","query":"q","documents":"a"}`, "documents", "must be an array"},
		{"document a number", `{"model":"r","query":"q","documents":["a",2]}`, "documents[1]", "a string or an object"},
		{"document text a number", `{"model":"r","query":"q","documents":[{"text":2}]}`, "documents[0].text", "must be a string"},
		{"top_n 1", `{"model":"r","query":"q","documents":["a"],"top_n":1}`, accepted, ""},
		{"top_n 0", `{"model":"r","query":"q","documents":["a"],"top_n":0}`, "top_n", "at least 1 (got 0)"},
		{"top_n 1.5", `{"model":"r","query":"q","documents":["a"],"top_n":1.5}`, "top_n", "must be an integer"},
		{"return_documents", `{"model":"r","query":"q","documents":["a"],"return_documents":true}`, accepted, ""},
		{"return_documents a string", `{"model":"r","query":"q","documents":["a"],"return_documents":"true"}`, "return_documents", "must be a boolean"},
		{"max_chunks_per_doc 1", `{"model":"r","query":"q","documents":["a"],"max_chunks_per_doc":1}`, accepted, ""},
		{"max_chunks_per_doc 0", `{"model":"r","query":"q","documents":["a"],"max_chunks_per_doc":0}`, "max_chunks_per_doc", "at least 1"},
		{"max_tokens_per_doc 0", `{"model":"r","query":"q","documents":["a"],"max_tokens_per_doc":0}`, "max_tokens_per_doc", "at least 1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req, err := ParseRerank([]byte(tc.body))
			checkCase(t, tc, err)
			if err == nil {
				assert.Equal(t, tc.body, string(req.Raw))
			}
		})
	}

	req, err := ParseRerank([]byte(`{"model":"r","query":"q","documents":["a",{"text":"b"}],"top_n":2,"return_documents":true,"max_chunks_per_doc":3}`))
	require.NoError(t, err)
	assert.Equal(t, &RerankRequest{Model: "r", Query: "q", Documents: []Document{{Text: "a"}, {Text: "b", Object: json.RawMessage(`{"text":"b"}`), HasText: true}}, TopN: 2, ReturnDocuments: true, MaxChunksPerDoc: 3,
		Raw: req.Raw, members: req.members}, req)
}
