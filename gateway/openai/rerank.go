package openai

import "encoding/json"

// RerankRequest is a rerank body (specification 2.5) that passed validation, read into Go.
type RerankRequest struct {
	Model     string
	Query     string
	Documents []Document
	// TopN is 0 when absent: every document is returned.
	TopN            int
	ReturnDocuments bool
	MaxChunksPerDoc int // 0 when absent
	MaxTokensPerDoc int // 0 when absent
	// Extra holds the members no field above reads (priority, rank_fields), in the body's
	// order.
	Extra Members
	// Raw is the body exactly as received (it shares the slice given to ParseRerank).
	Raw json.RawMessage

	members []member
}

// Document is one document to rank: a string, or an object, whose text field (when it has one)
// is its text.
type Document struct {
	Text string
	// Object is the document as sent when it is an object; nil for a string.
	Object json.RawMessage
	// HasText reports an object with a text field.
	HasText bool
}

var rerankFields = []field[RerankRequest]{
	{keys("model"), func(o obj, r *RerankRequest) { r.Model = o.model() }},
	{keys("query"), func(o obj, r *RerankRequest) {
		r.Query = ""
		if o.required("query") {
			r.Query, _ = o.str("query")
		}
	}},
	{keys("documents"), func(o obj, r *RerankRequest) {
		r.Documents = nil
		if o.required("documents") {
			r.Documents = o.documents()
		}
	}},
	{keys("top_n"), func(o obj, r *RerankRequest) { r.TopN, _ = o.integer("top_n", 1, noMax) }},
	{keys("return_documents"), func(o obj, r *RerankRequest) { r.ReturnDocuments, _ = o.boolean("return_documents") }},
	{keys("max_chunks_per_doc"), func(o obj, r *RerankRequest) {
		r.MaxChunksPerDoc, _ = o.integer("max_chunks_per_doc", 1, noMax)
	}},
	{keys("max_tokens_per_doc"), func(o obj, r *RerankRequest) {
		r.MaxTokensPerDoc, _ = o.integer("max_tokens_per_doc", 1, noMax)
	}},
}

var rerankKnown = knownKeys(rerankFields)

// ParseRerank validates a rerank body: model, query and a non-empty documents array are
// required. A document is a string or an object; objects are not checked further, as providers
// rank on fields of their own (Pinecone's rank_fields). Unknown fields are kept in Raw and
// listed in Extra.
func ParseRerank(body []byte) (*RerankRequest, error) {
	v, top, err := decodeBody(body)
	if err != nil {
		return nil, err
	}
	req := &RerankRequest{Raw: body, members: top.members}
	readFields(top, req, rerankFields, nil)
	if v.err != nil {
		return nil, v.err
	}
	req.Extra = extra(top.members, rerankKnown)
	return req, nil
}

// WithOverrides returns the request with a config's override_params applied, as
// ChatRequest.WithOverrides does.
func (r *RerankRequest) WithOverrides(overrides map[string]any) (*RerankRequest, error) {
	if len(overrides) == 0 {
		return r, nil
	}
	out := *r
	if err := override(&out, parsed{&out.Raw, &out.members, &out.Extra}, overrides, rerankFields, rerankKnown); err != nil {
		return nil, err
	}
	return &out, nil
}

func (o obj) documents() []Document {
	items, ok := o.array("documents")
	if !ok {
		return nil
	}
	if len(items) == 0 {
		o.v.fail("documents", "documents must have at least 1 document")
		return nil
	}
	out := make([]Document, 0, len(items))
	for i, raw := range items {
		p := indexParam("documents", i)
		switch kindOf(raw) {
		case kindString:
			s, _ := o.v.asString(raw, p)
			out = append(out, Document{Text: s})
		case kindObject:
			doc, _ := o.v.asObject(raw, p)
			text, _ := doc.str("text")
			out = append(out, Document{Text: text, Object: raw, HasText: doc.has("text")})
		default:
			o.v.typeError(p, "a string or an object", raw)
		}
		if o.v.failed() {
			return nil
		}
	}
	return out
}
