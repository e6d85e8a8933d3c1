package eventstore

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestRedactHidesThePasswordEvenOfAURLThatDoesNotParse(t *testing.T) {
	assert.Equal(t, "postgres://admin:xxxxx@db:5432/causeway", Redact("postgres://admin:s3cret@db:5432/causeway"))
	bad := "postgres://admin:s3cret@127.0.0.1:port/db" // a bad port: url.Parse refuses it
	assert.NotContains(t, Redact(bad), "s3cret")
	assert.Contains(t, Redact(bad), "admin:xxxxx@127.0.0.1:port")
	pw, ok := URLPassword(bad)
	assert.True(t, ok)
	assert.Equal(t, "s3cret", pw)
	assert.Equal(t, "sqlite:///data/events.db", Redact("sqlite:///data/events.db"))
	_, ok = URLPassword("postgres://admin@db/x")
	assert.False(t, ok)
	_, ok = URLPassword("esdb://h:2113?tls=false&x=@y")
	assert.False(t, ok, "an @ in the query is not user information")
}
