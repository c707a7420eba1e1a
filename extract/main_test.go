package extract

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that no PDF parse outlives its file (goPDFWithin's
// goroutine ends at its next read once its deadline passes).
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
