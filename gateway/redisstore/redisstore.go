// Package redisstore is the gateway's session store on Redis
// (session_store: redis://... or rediss://): two keys per session, its
// record as JSON and the set of its loaded tools, both expiring after the
// idle timeout unless touched. It speaks to Redis with a client of its own
// (resp.go). Only the program that wires it in links it.
package redisstore

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/mcp-hub/mcp-hub/gateway"
)

// redisKeyPrefix namespaces the hub's keys, so a Redis database can be
// shared with other programs.
const redisKeyPrefix = "mcp-hub:session:"

// redisStore is a SessionStore on Redis: two keys per session, its record
// as JSON (PREFIX<id>) and the set of its loaded tools (PREFIX<id>:loaded),
// both expiring after the idle timeout unless touched.
type redisStore struct {
	client *client
}

// parseURL checks a session_store URL: redis://[[USER]:PASSWORD@]HOST[:PORT][/DB]
// or rediss:// (TLS).
func parseURL(raw string) (options, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return options{}, errors.New("session_store: not a URL; want redis://HOST:PORT/DB or rediss://HOST:PORT/DB")
	}
	if u.Scheme != "redis" && u.Scheme != "rediss" {
		return options{}, fmt.Errorf("session_store: scheme %q is not supported; want redis:// or rediss://", u.Scheme)
	}
	invalid := func(why string) error {
		return fmt.Errorf("session_store: invalid Redis URL (want redis://[:PASSWORD@]HOST:PORT/DB): %s", why)
	}
	o := options{addr: u.Host}
	host, port := u.Hostname(), u.Port()
	if host == "" {
		host = "localhost"
	}
	if port == "" {
		port = "6379"
	}
	o.addr = net.JoinHostPort(host, port)
	if u.User != nil {
		o.username = u.User.Username()
		o.password, _ = u.User.Password()
	}
	if db := strings.Trim(u.Path, "/"); db != "" {
		if o.db, err = strconv.Atoi(db); err != nil || o.db < 0 {
			return options{}, invalid(fmt.Sprintf("database %q is not a number", db))
		}
	}
	if u.RawQuery != "" {
		return options{}, invalid("options after ? are not supported")
	}
	if u.Scheme == "rediss" {
		o.tls = &tls.Config{ServerName: host, MinVersion: tls.VersionTLS12}
	}
	return o, nil
}

// Open returns the store at a session_store URL. It connects lazily: a
// Redis that is down at start is the caller's warning, not an error.
func Open(raw string) (gateway.SessionStore, error) {
	opts, err := parseURL(raw)
	if err != nil {
		return nil, err
	}
	// A store that does not answer must not hold a client's request for
	// long: the session falls back to this replica's memory instead.
	opts.timeout = gateway.StoreTimeout
	return &redisStore{client: &client{opts: opts}}, nil
}

func redisKeys(id string) (record, loaded string) {
	return redisKeyPrefix + id, redisKeyPrefix + id + ":loaded"
}

// ownerTries bounds the retries of a transaction that another writer of
// the same record interrupted (two replicas saving one session at once).
const ownerTries = 3

// errNotOwnerTx ends a transaction on a record that is another's; the
// connection stays usable (its WATCH is undone).
var errNotOwnerTx = errors.New("not the owner")

// owned runs change's commands in a transaction (MULTI/EXEC) that fails if
// the record at kr changes meanwhile (WATCH), after checking that the
// record is principal's: exists is false when there is none,
// gateway.ErrNotOwner when it is another's. change returns no commands to
// do nothing.
func (r *redisStore) owned(ctx context.Context, kr, principal string, change func(exists bool) [][]any) error {
	for range ownerTries {
		committed := false
		err := r.client.with(ctx, func(cn *conn) error {
			replies, err := cn.do([]any{"WATCH", kr}, []any{"GET", kr})
			if err != nil {
				return err
			}
			if err := firstError(replies[:1]); err != nil {
				return err
			}
			raw, err := bulk(replies[1])
			exists := err == nil
			if err != nil && !errors.Is(err, errNil) {
				return err
			}
			if exists {
				var stored struct {
					Principal string `json:"principal"`
				}
				if json.Unmarshal(raw, &stored) != nil || stored.Principal != principal {
					if _, err := cn.do([]any{"UNWATCH"}); err != nil {
						return err
					}
					return errNotOwnerTx
				}
			}
			cmds := change(exists)
			if len(cmds) == 0 {
				_, err := cn.do([]any{"UNWATCH"})
				committed = err == nil
				return err
			}
			tx := append([][]any{{"MULTI"}}, cmds...)
			tx = append(tx, []any{"EXEC"})
			replies, err = cn.do(tx...)
			if err != nil {
				return err
			}
			if err := firstError(replies[:len(replies)-1]); err != nil {
				return err
			}
			switch exec := replies[len(replies)-1].(type) {
			case nil: // the record changed since WATCH
				return nil
			case replyError:
				return exec
			case []any:
				if err := firstError(exec); err != nil {
					return err
				}
			}
			committed = true
			return nil
		})
		if errors.Is(err, errNotOwnerTx) {
			return gateway.ErrNotOwner
		}
		if err != nil || committed {
			return err
		}
	}
	return errors.New("redis: transaction failed: the record kept changing")
}

func (r *redisStore) Save(ctx context.Context, rec *gateway.SessionRecord, ttl time.Duration) error {
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	kr, kl := redisKeys(rec.ID)
	ms := max(ttl.Milliseconds(), 1)
	return r.owned(ctx, kr, rec.Principal, func(bool) [][]any {
		cmds := [][]any{{"SET", kr, b, "PX", ms}}
		if len(rec.Loaded) > 0 {
			sadd := []any{"SADD", kl}
			for _, name := range rec.Loaded {
				sadd = append(sadd, name)
			}
			cmds = append(cmds, sadd, []any{"PEXPIRE", kl, ms})
		}
		return cmds
	})
}

func (r *redisStore) Load(ctx context.Context, id string) (*gateway.SessionRecord, error) {
	kr, kl := redisKeys(id)
	var raw []byte
	var members []string
	err := r.client.with(ctx, func(cn *conn) error {
		replies, err := cn.do([]any{"GET", kr}, []any{"SMEMBERS", kl})
		if err != nil {
			return err
		}
		if raw, err = bulk(replies[0]); err != nil {
			return err
		}
		members, err = stringsOf(replies[1])
		return err
	})
	if errors.Is(err, errNil) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var rec gateway.SessionRecord
	if err := json.Unmarshal(raw, &rec); err != nil {
		return nil, fmt.Errorf("session %s: stored record is not valid: %w", id, err)
	}
	if rec.ID != id {
		return nil, fmt.Errorf("session %s: stored record names another session", id)
	}
	rec.Loaded = members
	return &rec, nil
}

func (r *redisStore) Touch(ctx context.Context, id string, ttl time.Duration) ([]string, bool, error) {
	kr, kl := redisKeys(id)
	ms := max(ttl.Milliseconds(), 1)
	var found bool
	var members []string
	err := r.client.with(ctx, func(cn *conn) error {
		replies, err := cn.do([]any{"PEXPIRE", kr, ms}, []any{"PEXPIRE", kl, ms}, []any{"SMEMBERS", kl})
		if err != nil {
			return err
		}
		if err := firstError(replies); err != nil {
			return err
		}
		n, err := integer(replies[0])
		found = n == 1
		if err != nil {
			return err
		}
		members, err = stringsOf(replies[2])
		return err
	})
	if err != nil {
		return nil, false, err
	}
	return members, found, nil
}

func (r *redisStore) Delete(ctx context.Context, id, principal string) (bool, error) {
	kr, kl := redisKeys(id)
	var deleted bool
	err := r.owned(ctx, kr, principal, func(exists bool) [][]any {
		deleted = exists
		if !exists {
			return nil
		}
		return [][]any{{"DEL", kr, kl}}
	})
	if errors.Is(err, gateway.ErrNotOwner) {
		return false, nil
	}
	return deleted && err == nil, err
}

// legacyHashKey is where earlier versions kept a generated hash key for
// replicas without hash_key: next to the ids it protects.
const legacyHashKey = "mcp-hub:hash_key"

func (r *redisStore) DropLegacyKey(ctx context.Context) (bool, error) {
	var n int64
	err := r.client.with(ctx, func(cn *conn) error {
		replies, err := cn.do([]any{"DEL", legacyHashKey})
		if err != nil {
			return err
		}
		n, err = integer(replies[0])
		return err
	})
	return n > 0, err
}

func (r *redisStore) Ping(ctx context.Context) error {
	return r.client.with(ctx, func(cn *conn) error {
		replies, err := cn.do([]any{"PING"})
		if err != nil {
			return err
		}
		return firstError(replies)
	})
}

func (r *redisStore) Close() error { return r.client.close() }
