package domain

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestRoundMoney(t *testing.T) {
	assert.Equal(t, 1.35e-05, RoundMoney(1.3500000000000001e-05), "float noise is gone")
	assert.Equal(t, 0.1234567891, RoundMoney(0.12345678912345))
	assert.Equal(t, 0.0, RoundMoney(-1e-12), "never -0")
	assert.False(t, math.Signbit(RoundMoney(-1e-12)))
	assert.Equal(t, 0.0, RoundMoney(math.NaN()))
	assert.Equal(t, 0.0, RoundMoney(math.Inf(1)))
}
