package codec

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestVectorRoundTrip(t *testing.T) {
	v := []float32{0, 1, -1.5, math.MaxFloat32, math.SmallestNonzeroFloat32, float32(math.Inf(-1))}
	b := Vector(v)
	require.Len(t, b, 4*len(v))
	require.Equal(t, []byte{0, 0, 0xc0, 0xbf}, b[8:12], "little-endian IEEE 754")
	got, err := ParseVector(b)
	require.NoError(t, err)
	require.Equal(t, v, got)
}

func TestNoVector(t *testing.T) {
	require.Nil(t, Vector(nil))
	require.Nil(t, Vector([]float32{}))
	got, err := ParseVector(nil)
	require.NoError(t, err)
	require.Nil(t, got)
}

func TestParseVectorRefusesAPartialFloat(t *testing.T) {
	_, err := ParseVector([]byte{1, 2, 3, 4, 5})
	require.Error(t, err)
}
