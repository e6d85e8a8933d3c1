package domain

import "math"

// MoneyDecimals is the precision money is answered and exported in: costs are USD (computed
// from prices in USD cents per token, as the reference gives them), rounded to 10 decimal
// places, a hundred-millionth of a cent, which still tells apart one token of the cheapest
// model priced.
const MoneyDecimals = 10

// RoundMoney rounds v to MoneyDecimals places, without the noise of binary floating point
// (1.3500000000000001e-05 becomes 1.35e-05); NaN and infinities, which no cost is, are 0.
func RoundMoney(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	const scale = 1e10 // 10^MoneyDecimals
	r := math.Round(v*scale) / scale
	if r == 0 {
		return 0 // never -0
	}
	return r
}
