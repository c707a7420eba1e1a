package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/quarryhq/quarry/errcode"
)

// Redis keeps sessions in Redis, shared by every process: session:{id}
// is a hash (language, created_at, last_activity, message_count) and
// session:{id}:messages the list of messages, both expiring TTL after the
// last activity; session:{id}:seen outlives them by Remember, so an
// expired session is reported expired. An append is one Lua script:
// push, trim to the newest MaxMessages and refresh, all at once.
type Redis struct {
	Client *redis.Client
	// Prefix is put before every key (tests give each run its own).
	Prefix string
	// TTL is a session's time to live after its last activity (default
	// 30 minutes); Now the clock for timestamps (default time.Now).
	TTL time.Duration
	Now func() time.Time
}

var _ Store = (*Redis)(nil)

func (s *Redis) ttl() time.Duration {
	if s.TTL > 0 {
		return s.TTL
	}
	return TTL
}

func (s *Redis) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

func (s *Redis) keys(id string) []string {
	k := s.Prefix + "session:" + id
	return []string{k, k + ":messages", k + ":seen"}
}

// Create starts a session.
func (s *Redis) Create(ctx context.Context, language string) (*Session, error) {
	ss, err := newSession(language, s.now())
	if err != nil {
		return nil, err
	}
	k := s.keys(ss.ID)
	_, err = s.Client.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.HSet(ctx, k[0], "language", ss.Language, "created_at", stamp(ss.CreatedAt), "last_activity", stamp(ss.LastActivity), "message_count", 0)
		p.PExpire(ctx, k[0], s.ttl())
		p.Set(ctx, k[2], "1", s.ttl()+Remember)
		return nil
	})
	if err != nil {
		return nil, redisErr("session create", err)
	}
	return ss, nil
}

// getScript reads a session whole, in one step.
var getScript = redis.NewScript(`
return {redis.call('HGETALL', KEYS[1]), redis.call('LRANGE', KEYS[2], 0, -1), redis.call('EXISTS', KEYS[3])}`)

// appendScript appends, trims and refreshes in one step; a session that
// is gone is left gone.
var appendScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then
  return {{}, {}, redis.call('EXISTS', KEYS[3])}
end
for i = 5, #ARGV do redis.call('RPUSH', KEYS[2], ARGV[i]) end
redis.call('LTRIM', KEYS[2], -tonumber(ARGV[3]), -1)
redis.call('HSET', KEYS[1], 'last_activity', ARGV[1])
redis.call('HINCRBY', KEYS[1], 'message_count', #ARGV - 4)
redis.call('PEXPIRE', KEYS[1], ARGV[2])
redis.call('PEXPIRE', KEYS[2], ARGV[2])
redis.call('SET', KEYS[3], '1', 'PX', ARGV[4])
return {redis.call('HGETALL', KEYS[1]), redis.call('LRANGE', KEYS[2], 0, -1), 1}`)

// Get returns a session.
func (s *Redis) Get(ctx context.Context, id string) (*Session, error) {
	if err := CheckID(id); err != nil {
		return nil, err
	}
	res, err := getScript.Run(ctx, s.Client, s.keys(id)).Slice()
	if err != nil {
		return nil, redisErr("session get", err)
	}
	return s.decode(id, res)
}

// Append adds messages atomically.
func (s *Redis) Append(ctx context.Context, id string, msgs ...Message) (*Session, error) {
	now := s.now()
	msgs = slices.Clone(msgs)
	if err := checkAppend(id, msgs, now); err != nil {
		return nil, err
	}
	args := []any{stamp(now), s.ttl().Milliseconds(), MaxMessages, (s.ttl() + Remember).Milliseconds()}
	for _, m := range msgs {
		data, err := json.Marshal(m)
		if err != nil {
			return nil, err
		}
		args = append(args, string(data))
	}
	res, err := appendScript.Run(ctx, s.Client, s.keys(id), args...).Slice()
	if err != nil {
		return nil, redisErr("session append", err)
	}
	return s.decode(id, res)
}

// Delete ends a session.
func (s *Redis) Delete(ctx context.Context, id string) error {
	if err := CheckID(id); err != nil {
		return err
	}
	n, err := s.Client.Del(ctx, s.keys(id)...).Result()
	if err != nil {
		return redisErr("session delete", err)
	}
	if n == 0 {
		return notFound(id)
	}
	return nil
}

// decode reads a script's {hash fields, messages, seen}.
func (s *Redis) decode(id string, res []any) (*Session, error) {
	if len(res) != 3 {
		return nil, fmt.Errorf("session %s: unexpected reply %v", id, res)
	}
	fields, _ := res[0].([]any)
	if len(fields) == 0 {
		if seen, _ := res[2].(int64); seen == 1 {
			return nil, expired(id, s.ttl())
		}
		return nil, notFound(id)
	}
	h := map[string]string{}
	for i := 0; i+1 < len(fields); i += 2 {
		k, _ := fields[i].(string)
		v, _ := fields[i+1].(string)
		h[k] = v
	}
	ss := &Session{ID: id, Language: h["language"], Messages: []Message{}}
	var err error
	if ss.CreatedAt, err = time.Parse(time.RFC3339Nano, h["created_at"]); err != nil {
		return nil, fmt.Errorf("session %s: created_at: %w", id, err)
	}
	if ss.LastActivity, err = time.Parse(time.RFC3339Nano, h["last_activity"]); err != nil {
		return nil, fmt.Errorf("session %s: last_activity: %w", id, err)
	}
	if ss.Count, err = strconv.Atoi(h["message_count"]); err != nil {
		return nil, fmt.Errorf("session %s: message_count: %w", id, err)
	}
	list, _ := res[1].([]any)
	for _, raw := range list {
		str, ok := raw.(string)
		if !ok {
			return nil, errors.New("session " + id + ": a message is not a string")
		}
		var m Message
		if err := json.Unmarshal([]byte(str), &m); err != nil {
			return nil, fmt.Errorf("session %s: message: %w", id, err)
		}
		ss.Messages = append(ss.Messages, m)
	}
	return ss, nil
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// redisErr wraps a Redis error. Anything but a reply of the server (a
// refused connection, a timeout, a closed pool) means Redis is away:
// unavailable, naming it, so the API answers 503, not 500.
func redisErr(op string, err error) error {
	var reply redis.Error
	if errors.As(err, &reply) {
		return fmt.Errorf("%s: %w", op, err)
	}
	return fmt.Errorf("%s: %w", op, errcode.Dependency("redis", err))
}
