// Package testredis gives tests a Redis client on the server named by
// QUARRY_TEST_REDIS_URL and a key prefix of their own, whose keys are
// deleted when the test ends. Without the variable the test is skipped,
// except under CI=true where a missing service is a failure.
package testredis

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"testing"

	"github.com/redis/go-redis/v9"
)

// Client returns a client and a fresh key prefix.
func Client(t testing.TB) (*redis.Client, string) {
	t.Helper()
	u := os.Getenv("QUARRY_TEST_REDIS_URL")
	if u == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("QUARRY_TEST_REDIS_URL is not set: CI requires Redis")
		}
		t.Skip("QUARRY_TEST_REDIS_URL not set")
	}
	opt, err := redis.ParseURL(u)
	if err != nil {
		t.Fatalf("QUARRY_TEST_REDIS_URL: %v", err)
	}
	c := redis.NewClient(opt)
	ctx := context.Background()
	if err := c.Ping(ctx).Err(); err != nil {
		_ = c.Close()
		t.Fatalf("redis at %s: %v", opt.Addr, err)
	}
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	prefix := "qt:" + hex.EncodeToString(b) + ":"
	t.Cleanup(func() {
		iter := c.Scan(ctx, 0, prefix+"*", 500).Iterator()
		var keys []string
		for iter.Next(ctx) {
			keys = append(keys, iter.Val())
		}
		if len(keys) > 0 {
			_ = c.Del(ctx, keys...).Err()
		}
		_ = c.Close()
	})
	return c, prefix
}
