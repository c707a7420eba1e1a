package postgres_test

import (
	"testing"

	"github.com/quarryhq/quarry/internal/testpg"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m, testpg.IgnoreCancelRequests) }
