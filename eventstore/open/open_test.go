package open_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/eventstore"
	"github.com/causeway/causeway/eventstore/esdb"
	"github.com/causeway/causeway/eventstore/open"
	"github.com/causeway/causeway/eventstore/sqlite"
)

const testPassword = "s3cret-pw"

// Open dispatches every EventStoreDB spelling to the esdb backend. Nothing is dialled, so no
// server is needed.
func TestESDBOpenURL(t *testing.T) {
	ctx := context.Background()
	for _, scheme := range []string{"esdb", "esdb+discover", "kurrentdb", "kurrentdb+discover", "kurrent", "kurrent+discover"} {
		s, err := open.Open(ctx, scheme+"://127.0.0.1:1?tls=false")
		require.NoError(t, err, scheme)
		assert.IsType(t, &esdb.Store{}, s, scheme)
		require.NoError(t, s.Close())
	}
}

func TestOpenSQLite(t *testing.T) {
	s, err := open.Open(context.Background(), "sqlite://"+filepath.Join(t.TempDir(), "events.db"))
	require.NoError(t, err)
	assert.IsType(t, &sqlite.Store{}, s)
	require.NoError(t, s.Close())
}

func TestOpenRefusesUnknownURLs(t *testing.T) {
	for _, rawURL := range []string{
		"events.db",
		"mysql://admin:" + testPassword + "@127.0.0.1/events",
		"sqlite://",
	} {
		s, err := open.Open(context.Background(), rawURL)
		require.ErrorIs(t, err, eventstore.ErrInvalidArgument, rawURL)
		assert.Nil(t, s, "a failed open returns a nil Store, not a typed nil")
		assert.NotContains(t, err.Error(), testPassword)
	}
	// A URL that does not parse (a bad port) fails without quoting its password.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s, err := open.Open(ctx, "postgres://admin:"+testPassword+"@127.0.0.1:port/events")
	require.Error(t, err)
	assert.Nil(t, s)
	assert.NotContains(t, err.Error(), testPassword)
}
