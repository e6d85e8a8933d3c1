package httpapi

import (
	"math"
	"strconv"
)

// moneyDecimals is the precision money is answered in: costs are USD (computed from prices in
// USD cents per token, as the reference gives them), rounded to 10 decimal places, a
// hundred-millionth of a cent, which still tells apart one token of the cheapest model priced.
const moneyDecimals = 10

// amount is money as answered: a cost in USD, or a budget's usage (USD, or tokens for a token
// budget). It is written as a plain JSON number rounded to moneyDecimals places, without the
// noise of binary floating point (1.3500000000000001e-05 is written 0.0000135).
type amount float64

func (v amount) MarshalJSON() ([]byte, error) {
	return strconv.AppendFloat(nil, roundMoney(float64(v)), 'f', -1, 64), nil
}

// roundMoney rounds v to moneyDecimals places; NaN and infinities, which no cost is, are 0.
func roundMoney(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	const scale = 1e10 // 10^moneyDecimals
	r := math.Round(v*scale) / scale
	if r == 0 {
		return 0 // never -0
	}
	return r
}
