package openai

import "encoding/json"

// RerankRequest is a rerank body (specification 2.5) that passed validation.
type RerankRequest struct {
	Model string
	Query string
	// Documents holds each document's text: the string, or the text field of an object.
	Documents       []string
	TopN            int // 0 when absent: every document is returned
	ReturnDocuments bool
	MaxChunksPerDoc int // 0 when absent
	// Raw is the body exactly as received (it shares the slice given to ParseRerank).
	Raw json.RawMessage
}

// ParseRerank validates a rerank body: model, query and a non-empty documents array are
// required. A document is a string or an object; objects are not checked further, as providers
// rank on fields of their own (Pinecone's rank_fields). Unknown fields are kept in Raw.
func ParseRerank(body []byte) (*RerankRequest, error) {
	v, top, err := decodeBody(body)
	if err != nil {
		return nil, err
	}
	req := &RerankRequest{Raw: body}
	req.Model = top.model()
	if top.required("query") {
		req.Query, _ = top.str("query")
	}
	if top.required("documents") {
		req.Documents = top.documents()
	}
	req.TopN, _ = top.integer("top_n", 1, noMax)
	req.ReturnDocuments, _ = top.boolean("return_documents")
	req.MaxChunksPerDoc, _ = top.integer("max_chunks_per_doc", 1, noMax)
	top.integer("max_tokens_per_doc", 1, noMax)
	if v.err != nil {
		return nil, v.err
	}
	return req, nil
}

func (o obj) documents() []string {
	items, ok := o.array("documents")
	if !ok {
		return nil
	}
	if len(items) == 0 {
		o.v.fail("documents", "documents must have at least 1 document")
		return nil
	}
	out := make([]string, 0, len(items))
	for i, raw := range items {
		p := indexParam("documents", i)
		switch kindOf(raw) {
		case kindString:
			s, _ := o.v.asString(raw, p)
			out = append(out, s)
		case kindObject:
			doc, _ := o.v.asObject(raw, p)
			text, _ := doc.str("text")
			out = append(out, text)
		default:
			o.v.typeError(p, "a string or an object", raw)
		}
		if o.v.failed() {
			return nil
		}
	}
	return out
}
