package session_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/quarryhq/quarry/internal/testpg"
	"github.com/quarryhq/quarry/internal/testredis"
	"github.com/quarryhq/quarry/session"
	"github.com/quarryhq/quarry/session/sessiontest"
	"github.com/quarryhq/quarry/store/postgres"
	"github.com/quarryhq/quarry/store/sqlite"
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

// TestStored runs the suite on the embedded database (SQLite) and on
// PostgreSQL.
func TestStored(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		sessiontest.Exercise(t, func(t *testing.T, ttl time.Duration) session.Store {
			st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "q.db"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = st.Close() })
			return &session.Stored{Store: st, TTL: ttl}
		})
	})
	t.Run("postgres", func(t *testing.T) {
		sessiontest.Exercise(t, func(t *testing.T, ttl time.Duration) session.Store {
			st, err := postgres.Open(context.Background(), testpg.Schema(t, "QUARRY_TEST_POSTGRES_URL"), postgres.Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = st.Close() })
			return &session.Stored{Store: st, TTL: ttl}
		})
	})
}
