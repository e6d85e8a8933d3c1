package eventstore

import (
	"net/url"
	"strings"
)

// Redact hides the password of a URL so that it can be logged or shown in an error. A URL that
// does not parse (a bad port, say) still has its password hidden.
func Redact(rawURL string) string {
	if u, err := url.Parse(rawURL); err == nil {
		if u.User == nil {
			return rawURL
		}
		return u.Redacted()
	}
	if pw, ok := URLPassword(rawURL); ok {
		return strings.Replace(rawURL, ":"+pw+"@", ":xxxxx@", 1)
	}
	return rawURL
}

// URLPassword is the password in a URL's user information, read from the text itself so that it
// is found even in a URL that does not parse.
func URLPassword(rawURL string) (string, bool) {
	if u, err := url.Parse(rawURL); err == nil {
		if u.User == nil {
			return "", false
		}
		pw, ok := u.User.Password()
		return pw, ok && pw != ""
	}
	_, rest, ok := strings.Cut(rawURL, "://")
	if !ok {
		return "", false
	}
	if end := strings.IndexAny(rest, "/?#"); end >= 0 {
		rest = rest[:end]
	}
	at := strings.LastIndex(rest, "@")
	if at < 0 {
		return "", false
	}
	_, pw, ok := strings.Cut(rest[:at], ":")
	return pw, ok && pw != ""
}
