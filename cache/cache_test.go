package cache_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/cache"
)

func TestSizeCountsEveryVariablePart(t *testing.T) {
	e := cache.Entry{Key: "kkkk", Workspace: "ws", Namespace: "n", Partition: "ppp",
		Body: make([]byte, 100), Meta: make([]byte, 10), Vector: make([]float32, 8)}
	require.EqualValues(t, 4+2+1+3+100+10+4*8+cache.EntryOverhead, e.Size())
	require.EqualValues(t, cache.EntryOverhead, cache.Entry{}.Size())
}

func TestValidateReportsEveryProblem(t *testing.T) {
	err := cache.Entry{}.Validate()
	require.ErrorContains(t, err, "key")
	require.ErrorContains(t, err, "workspace")
	require.ErrorContains(t, err, "expiry")
	require.NoError(t, cache.Entry{Key: "k", Workspace: "ws", ExpiresAt: time.Now()}.Validate())
}
