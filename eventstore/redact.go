package eventstore

import "net/url"

// Redact hides the password of a URL so that it can be logged or shown in an error.
func Redact(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil || u.User == nil {
		return rawURL
	}
	return u.Redacted()
}
