package memory_test

import (
	"testing"

	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/projections"
	"github.com/causeway/causeway/projections/memory"
	"github.com/causeway/causeway/projections/projectionstest"
)

func TestReadModelContractMemory(t *testing.T) {
	projectionstest.Run(t, func(t *testing.T, reg *domain.Registry) projections.ReadModel { return memory.New(reg) })
}
