package httpapi

import (
	"strconv"

	"github.com/causeway/causeway/domain"
)

// amount is money as answered: a cost in USD, or a budget's usage (USD, or tokens for a token
// budget). It is written as a plain JSON number rounded to domain.MoneyDecimals places, without the
// noise of binary floating point (1.3500000000000001e-05 is written 0.0000135).
type amount float64

func (v amount) MarshalJSON() ([]byte, error) {
	return strconv.AppendFloat(nil, domain.RoundMoney(float64(v)), 'f', -1, 64), nil
}
