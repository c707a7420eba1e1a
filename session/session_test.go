package session_test

import (
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/quarryhq/quarry/internal/testredis"
	"github.com/quarryhq/quarry/session"
	"github.com/quarryhq/quarry/session/sessiontest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestMemory(t *testing.T) {
	sessiontest.Exercise(t, func(_ *testing.T, ttl time.Duration) session.Store { return &session.Memory{TTL: ttl} })
}

// TestRedis runs the suite on a real Redis (QUARRY_TEST_REDIS_URL).
func TestRedis(t *testing.T) {
	sessiontest.Exercise(t, func(t *testing.T, ttl time.Duration) session.Store {
		c, prefix := testredis.Client(t)
		return &session.Redis{Client: c, Prefix: prefix, TTL: ttl}
	})
}
