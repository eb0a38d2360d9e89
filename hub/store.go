package hub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// SessionRecord is what a session store keeps of one HTTP session: enough
// for any replica to rebuild it (restore.go). Nothing in it is a secret:
// the principal is a hash.
type SessionRecord struct {
	ID      string `json:"id"`
	Toolset string `json:"toolset,omitempty"`
	// Principal is who opened the session (Hub.principal): only the same
	// principal may use it on another replica.
	Principal string `json:"principal,omitempty"`
	// Init is the client's initialize params as it sent them (protocol
	// version, client info, capabilities).
	Init json.RawMessage `json:"init"`
	// Loaded are the exposed names of the deferred tools it has loaded.
	Loaded []string `json:"loaded,omitempty"`
}

// SessionStore keeps session records where every replica can read them.
// Every method fails fast when the store cannot be reached: the caller
// bounds it with ctx.
type SessionStore interface {
	// Save writes rec, whole, with a time to live.
	Save(ctx context.Context, rec *SessionRecord, ttl time.Duration) error
	// Load returns the record, or nil and no error when there is none.
	Load(ctx context.Context, id string) (*SessionRecord, error)
	// Touch restarts a record's time to live; false when there is none.
	Touch(ctx context.Context, id string, ttl time.Duration) (bool, error)
	// Delete removes a record; false when there was none.
	Delete(ctx context.Context, id string) (bool, error)
	Ping(ctx context.Context) error
	Close() error
}

// redisKeyPrefix namespaces the hub's keys, so a Redis database can be
// shared with other programs.
const redisKeyPrefix = "mcp-hub:session:"

// redisStore is a SessionStore on Redis: one string key per session, its
// record as JSON, expiring after the idle timeout unless touched.
type redisStore struct {
	client *redis.Client
}

// ParseSessionStore checks a session_store URL: redis://[:PASSWORD@]HOST:PORT/DB
// or rediss:// (TLS).
func ParseSessionStore(raw string) (*redis.Options, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, errors.New("session_store: not a URL; want redis://HOST:PORT/DB or rediss://HOST:PORT/DB")
	}
	if u.Scheme != "redis" && u.Scheme != "rediss" {
		return nil, fmt.Errorf("session_store: scheme %q is not supported; want redis:// or rediss://", u.Scheme)
	}
	opts, err := redis.ParseURL(raw)
	if err != nil {
		// go-redis's message may quote the URL, password included.
		return nil, fmt.Errorf("session_store: invalid Redis URL (want redis://[:PASSWORD@]HOST:PORT/DB): %s", urlRedactedError(err, u))
	}
	return opts, nil
}

func urlRedactedError(err error, u *url.URL) string {
	msg := err.Error()
	if p, ok := u.User.Password(); ok && p != "" {
		msg = strings.ReplaceAll(msg, p, "[redacted]")
	}
	return msg
}

// newRedisStore connects lazily: a Redis that is down at start is the
// caller's warning, not an error.
func newRedisStore(raw string) (*redisStore, error) {
	opts, err := ParseSessionStore(raw)
	if err != nil {
		return nil, err
	}
	// A store that does not answer must not hold a client's request for
	// long: the session falls back to this replica's memory instead.
	opts.DialTimeout = storeTimeout
	opts.ReadTimeout = storeTimeout
	opts.WriteTimeout = storeTimeout
	opts.PoolTimeout = storeTimeout
	opts.MaxRetries = 1
	return &redisStore{client: redis.NewClient(opts)}, nil
}

func (r *redisStore) Save(ctx context.Context, rec *SessionRecord, ttl time.Duration) error {
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	return r.client.Set(ctx, redisKeyPrefix+rec.ID, b, ttl).Err()
}

func (r *redisStore) Load(ctx context.Context, id string) (*SessionRecord, error) {
	b, err := r.client.Get(ctx, redisKeyPrefix+id).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var rec SessionRecord
	if err := json.Unmarshal(b, &rec); err != nil {
		return nil, fmt.Errorf("session %s: stored record is not valid: %w", id, err)
	}
	if rec.ID != id {
		return nil, fmt.Errorf("session %s: stored record names another session", id)
	}
	return &rec, nil
}

func (r *redisStore) Touch(ctx context.Context, id string, ttl time.Duration) (bool, error) {
	return r.client.Expire(ctx, redisKeyPrefix+id, ttl).Result()
}

func (r *redisStore) Delete(ctx context.Context, id string) (bool, error) {
	n, err := r.client.Del(ctx, redisKeyPrefix+id).Result()
	return n > 0, err
}

func (r *redisStore) Ping(ctx context.Context) error { return r.client.Ping(ctx).Err() }

func (r *redisStore) Close() error { return r.client.Close() }
