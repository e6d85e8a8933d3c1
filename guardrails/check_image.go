package guardrails

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"sync"
	"time"
)

const (
	// inlineImageMaxBytes bounds maxSizeBytes: each image is held in memory, then as base64.
	inlineImageMaxBytes = 50 << 20
	// inlineImageParallel is how many images of one request are fetched at once.
	inlineImageParallel = 4
	// imageEndpointChat is providers.EndpointChat, which this package does not import.
	imageEndpointChat = "chatComplete"
)

// NewInlineImageCheck builds default.inlineImage, the specification's inline-image guardrail
// (the reference gateway has no plugin for it): for a chat request to one of the configured
// providers, every http or https image_url in the messages is fetched and replaced by a
// data:<type>;base64,... URL, for providers that cannot fetch images themselves.
//
// Parameters: providers (required, 1 to 64 provider types, e.g. ["bedrock"]), maxSizeBytes
// (1 to 52428800, default 20971520), timeoutMs (1 to 300000, default 30000: bounds all the
// fetches of one request together), failOnError (default false). Hook: beforeRequestHook.
//
// Each URL is checked by the egress guard before it is fetched, and fetched through
// Deps.Client (whose dialer checks it again, redirects too), without the client's headers.
// An answer must be 2xx with an image/* content type and at most maxSizeBytes long (reading
// stops one byte past it). When a fetch fails, the check passes with that URL left as it was
// and the error in Data, or with failOnError fails. Transformed is the rewritten request, set
// only when an image was inlined; Data never holds the URLs (they may be signed), only the
// paths of the images in the request.
func NewInlineImageCheck(params map[string]any, deps Deps) (Check, error) {
	deps, err := netDeps(idInlineImage, deps, false)
	if err != nil {
		return nil, err
	}
	p := netParams(params)
	c := &inlineImageCheck{
		providers:   map[string]bool{},
		maxSize:     p.integer("maxSizeBytes", 20<<20, 1, inlineImageMaxBytes),
		timeout:     p.millis("timeoutMs", 30000, 300000),
		failOnError: p.boolean("failOnError", false),
		client:      deps.Client,
		checkURL:    deps.CheckURL,
	}
	for _, pr := range p.strList("providers", true, 64, 128) {
		c.providers[pr] = true
	}
	if err := p.done(); err != nil {
		return nil, err
	}
	return c, nil
}

var _ Check = (*inlineImageCheck)(nil)

type inlineImageCheck struct {
	providers   map[string]bool
	maxSize     int64
	timeout     time.Duration
	failOnError bool
	client      *http.Client
	checkURL    func(string) error
}

// imageRef is an image_url in the request: where it is and what it says.
type imageRef struct {
	msg, part int
	url       string
	bare      bool // "image_url": "<url>" rather than {"url": "<url>"}
}

func (r imageRef) path() string { return fmt.Sprintf("messages[%d].content[%d]", r.msg, r.part) }

type imageError struct {
	Path  string `json:"path"`
	Error string `json:"error"`
}

func (c *inlineImageCheck) Run(ctx context.Context, in Input) (Verdict, error) {
	if err := hookSupported(idInlineImage, in.Hook, c.Hooks()); err != nil {
		return Verdict{}, err
	}
	if in.Endpoint != imageEndpointChat || !c.providers[in.Provider] {
		return Verdict{Pass: true, Explanation: "no images to inline for this request"}, nil
	}
	req, err := parseChatImages(in.Request)
	if err != nil {
		return Verdict{}, err
	}
	if len(req.refs) == 0 {
		return Verdict{Pass: true, Explanation: "no image URLs to inline"}, nil
	}

	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	inlined, failed := c.fetchAll(ctx, req.refs)

	var errs []imageError
	n := 0
	for _, r := range req.refs {
		if e, bad := failed[r.url]; bad {
			errs = append(errs, imageError{Path: r.path(), Error: e.Error()})
			continue
		}
		if err := req.replace(r, inlined[r.url]); err != nil {
			return Verdict{}, err
		}
		n++
	}
	data := map[string]any{"inlined": n}
	if len(errs) > 0 {
		data["errors"] = errs
		if c.failOnError {
			return Verdict{Pass: false, Explanation: fmt.Sprintf("%d image(s) could not be inlined", len(errs)), Data: data}, nil
		}
	}
	v := Verdict{Pass: true, Data: data, Explanation: fmt.Sprintf("%d image(s) inlined", n)}
	if len(errs) > 0 {
		v.Explanation += fmt.Sprintf(", %d left as URLs", len(errs))
	}
	if n > 0 {
		if v.Transformed, err = req.encode(); err != nil {
			return Verdict{}, err
		}
	}
	return v, nil
}

// Hooks are the hooks the check runs on.
func (c *inlineImageCheck) Hooks() []Hook { return []Hook{BeforeRequest} }

// fetchAll fetches each distinct URL once, a few at a time; with failOnError the first
// failure stops the others.
func (c *inlineImageCheck) fetchAll(ctx context.Context, refs []imageRef) (map[string]string, map[string]error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		mu      sync.Mutex
		wg      sync.WaitGroup
		inlined = map[string]string{}
		failed  = map[string]error{}
		sem     = make(chan struct{}, inlineImageParallel)
	)
	seen := map[string]bool{}
	for _, r := range refs {
		if seen[r.url] {
			continue
		}
		seen[r.url] = true
		wg.Add(1)
		go func(raw string) {
			defer wg.Done()
			var (
				d   string
				err error
			)
			select {
			case sem <- struct{}{}:
				d, err = c.fetch(ctx, raw)
				<-sem
			case <-ctx.Done():
				err = ctx.Err()
			}
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				failed[raw] = err
				if c.failOnError {
					cancel()
				}
				return
			}
			inlined[raw] = d
		}(r.url)
	}
	wg.Wait()
	return inlined, failed
}

// fetch returns raw's image as a data URL. Its errors never repeat the URL.
func (c *inlineImageCheck) fetch(ctx context.Context, raw string) (string, error) {
	if err := checkURLContext(ctx, c.checkURL, raw); err != nil {
		return "", err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, raw, nil)
	if err != nil {
		return "", fmt.Errorf("not a valid URL")
	}
	req.Header.Set("Accept", "image/*")
	resp, err := c.client.Do(req)
	if err != nil {
		return "", fmt.Errorf("fetch failed: %w", withoutURL(err))
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return "", fmt.Errorf("fetch answered %d", resp.StatusCode)
	}
	mt, _, err := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if err != nil || !strings.HasPrefix(mt, "image/") || len(mt) > 128 {
		return "", fmt.Errorf("the answer is not an image (content type must be image/*)")
	}
	if resp.ContentLength > c.maxSize {
		return "", fmt.Errorf("image larger than maxSizeBytes (%d)", c.maxSize)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, c.maxSize+1))
	if err != nil {
		return "", fmt.Errorf("reading the image: %w", err)
	}
	if int64(len(b)) > c.maxSize {
		return "", fmt.Errorf("image larger than maxSizeBytes (%d)", c.maxSize)
	}
	return "data:" + mt + ";base64," + base64.StdEncoding.EncodeToString(b), nil
}

// chatImages is a chat request taken apart down to its image parts, so that a rewrite
// changes only them: every other value keeps its bytes.
type chatImages struct {
	top      map[string]json.RawMessage
	messages []json.RawMessage
	msgs     map[int]map[string]json.RawMessage // messages that hold image parts
	contents map[int][]json.RawMessage
	refs     []imageRef
}

func parseChatImages(body json.RawMessage) (*chatImages, error) {
	bad := fmt.Errorf("inline image: the request is not a chat request")
	c := &chatImages{msgs: map[int]map[string]json.RawMessage{}, contents: map[int][]json.RawMessage{}}
	if err := json.Unmarshal(body, &c.top); err != nil || c.top == nil {
		return nil, bad
	}
	if raw, ok := c.top["messages"]; ok {
		if err := json.Unmarshal(raw, &c.messages); err != nil {
			return nil, bad
		}
	}
	for i, rawMsg := range c.messages {
		var msg map[string]json.RawMessage
		if json.Unmarshal(rawMsg, &msg) != nil {
			continue
		}
		var parts []json.RawMessage
		if json.Unmarshal(msg["content"], &parts) != nil {
			continue // text content, or none
		}
		found := false
		for j, rawPart := range parts {
			var part struct {
				Type     string          `json:"type"`
				ImageURL json.RawMessage `json:"image_url"`
			}
			if json.Unmarshal(rawPart, &part) != nil || part.Type != "image_url" {
				continue
			}
			ref := imageRef{msg: i, part: j}
			var obj struct {
				URL string `json:"url"`
			}
			if json.Unmarshal(part.ImageURL, &ref.url) == nil {
				ref.bare = true
			} else if json.Unmarshal(part.ImageURL, &obj) == nil {
				ref.url = obj.URL
			}
			if !isHTTPURL(ref.url) {
				continue
			}
			c.refs = append(c.refs, ref)
			found = true
		}
		if found {
			c.msgs[i] = msg
			c.contents[i] = parts
		}
	}
	return c, nil
}

func isHTTPURL(s string) bool {
	l := strings.ToLower(s)
	return strings.HasPrefix(l, "http://") || strings.HasPrefix(l, "https://")
}

// replace puts dataURL in place of r's URL.
func (c *chatImages) replace(r imageRef, dataURL string) error {
	var part map[string]json.RawMessage
	if err := json.Unmarshal(c.contents[r.msg][r.part], &part); err != nil {
		return err
	}
	if r.bare {
		s, err := encodeJSONNoEscape(dataURL)
		if err != nil {
			return err
		}
		part["image_url"] = s
	} else {
		var img map[string]json.RawMessage
		if err := json.Unmarshal(part["image_url"], &img); err != nil {
			return err
		}
		s, err := encodeJSONNoEscape(dataURL)
		if err != nil {
			return err
		}
		img["url"] = s
		if part["image_url"], err = encodeJSONNoEscape(img); err != nil {
			return err
		}
	}
	b, err := encodeJSONNoEscape(part)
	if err != nil {
		return err
	}
	c.contents[r.msg][r.part] = b
	return nil
}

// encode puts the request together again.
func (c *chatImages) encode() (json.RawMessage, error) {
	for i, msg := range c.msgs {
		content, err := encodeJSONNoEscape(c.contents[i])
		if err != nil {
			return nil, err
		}
		msg["content"] = content
		if c.messages[i], err = encodeJSONNoEscape(msg); err != nil {
			return nil, err
		}
	}
	msgs, err := encodeJSONNoEscape(c.messages)
	if err != nil {
		return nil, err
	}
	c.top["messages"] = msgs
	return encodeJSONNoEscape(c.top)
}
