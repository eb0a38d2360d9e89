// Package redisstore is the gateway's session store on Redis
// (session_store: redis://... or rediss://): two keys per session, its
// record as JSON and the set of its loaded tools, both expiring after the
// idle timeout unless touched. Only the program that wires it in links
// go-redis.
package redisstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/mcp-hub/mcp-hub/gateway"
)

// redisKeyPrefix namespaces the hub's keys, so a Redis database can be
// shared with other programs.
const redisKeyPrefix = "mcp-hub:session:"

// redisStore is a SessionStore on Redis: two keys per session, its record
// as JSON (PREFIX<id>) and the set of its loaded tools (PREFIX<id>:loaded),
// both expiring after the idle timeout unless touched.
type redisStore struct {
	client *redis.Client
}

// ParseURL checks a session_store URL: redis://[:PASSWORD@]HOST:PORT/DB
// or rediss:// (TLS).
func ParseURL(raw string) (*redis.Options, error) {
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

// Open returns the store at a session_store URL. It connects lazily: a
// Redis that is down at start is the caller's warning, not an error.
func Open(raw string) (gateway.SessionStore, error) {
	opts, err := ParseURL(raw)
	if err != nil {
		return nil, err
	}
	// A store that does not answer must not hold a client's request for
	// long: the session falls back to this replica's memory instead.
	opts.DialTimeout = gateway.StoreTimeout
	opts.ReadTimeout = gateway.StoreTimeout
	opts.WriteTimeout = gateway.StoreTimeout
	opts.PoolTimeout = gateway.StoreTimeout
	opts.MaxRetries = 1
	return &redisStore{client: redis.NewClient(opts)}, nil
}

func redisKeys(id string) (record, loaded string) {
	return redisKeyPrefix + id, redisKeyPrefix + id + ":loaded"
}

// ownerTries bounds the retries of a transaction that another writer of
// the same record interrupted (two replicas saving one session at once).
const ownerTries = 3

// owned runs change in a transaction that fails if the record at kr
// changes meanwhile, after checking that the record is principal's:
// exists is false when there is none, gateway.ErrNotOwner when it is another's.
func (r *redisStore) owned(ctx context.Context, kr, principal string, change func(tx *redis.Tx, exists bool) error) error {
	var err error
	for range ownerTries {
		err = r.client.Watch(ctx, func(tx *redis.Tx) error {
			raw, err := tx.Get(ctx, kr).Bytes()
			if errors.Is(err, redis.Nil) {
				return change(tx, false)
			}
			if err != nil {
				return err
			}
			var stored struct {
				Principal string `json:"principal"`
			}
			if json.Unmarshal(raw, &stored) != nil || stored.Principal != principal {
				return gateway.ErrNotOwner
			}
			return change(tx, true)
		}, kr)
		if !errors.Is(err, redis.TxFailedErr) {
			return err
		}
	}
	return err
}

func (r *redisStore) Save(ctx context.Context, rec *gateway.SessionRecord, ttl time.Duration) error {
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	kr, kl := redisKeys(rec.ID)
	return r.owned(ctx, kr, rec.Principal, func(tx *redis.Tx, _ bool) error {
		_, err := tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.Set(ctx, kr, b, ttl)
			if len(rec.Loaded) > 0 {
				members := make([]any, len(rec.Loaded))
				for i, name := range rec.Loaded {
					members[i] = name
				}
				p.SAdd(ctx, kl, members...)
				p.PExpire(ctx, kl, ttl)
			}
			return nil
		})
		return err
	})
}

func (r *redisStore) Load(ctx context.Context, id string) (*gateway.SessionRecord, error) {
	kr, kl := redisKeys(id)
	var get *redis.StringCmd
	var members *redis.StringSliceCmd
	_, err := r.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		get = p.Get(ctx, kr)
		members = p.SMembers(ctx, kl)
		return nil
	})
	if errors.Is(get.Err(), redis.Nil) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var rec gateway.SessionRecord
	if err := json.Unmarshal([]byte(get.Val()), &rec); err != nil {
		return nil, fmt.Errorf("session %s: stored record is not valid: %w", id, err)
	}
	if rec.ID != id {
		return nil, fmt.Errorf("session %s: stored record names another session", id)
	}
	rec.Loaded = members.Val()
	return &rec, nil
}

func (r *redisStore) Touch(ctx context.Context, id string, ttl time.Duration) ([]string, bool, error) {
	kr, kl := redisKeys(id)
	var found *redis.BoolCmd
	var members *redis.StringSliceCmd
	_, err := r.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		found = p.PExpire(ctx, kr, ttl)
		p.PExpire(ctx, kl, ttl)
		members = p.SMembers(ctx, kl)
		return nil
	})
	if err != nil {
		return nil, false, err
	}
	return members.Val(), found.Val(), nil
}

func (r *redisStore) Delete(ctx context.Context, id, principal string) (bool, error) {
	kr, kl := redisKeys(id)
	var deleted bool
	err := r.owned(ctx, kr, principal, func(tx *redis.Tx, exists bool) error {
		if !exists {
			return nil
		}
		_, err := tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.Del(ctx, kr, kl)
			return nil
		})
		deleted = err == nil
		return err
	})
	if errors.Is(err, gateway.ErrNotOwner) {
		return false, nil
	}
	return deleted, err
}

// legacyHashKey is where earlier versions kept a generated hash key for
// replicas without hash_key: next to the ids it protects.
const legacyHashKey = "mcp-hub:hash_key"

func (r *redisStore) DropLegacyKey(ctx context.Context) (bool, error) {
	n, err := r.client.Del(ctx, legacyHashKey).Result()
	return n > 0, err
}

func (r *redisStore) Ping(ctx context.Context) error { return r.client.Ping(ctx).Err() }

func (r *redisStore) Close() error { return r.client.Close() }
