package redisstore

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/mcp-hub/mcp-hub/pin"
)

// The pins (package pin) of every replica: the pin file's JSON, and a
// counter raised by every write (what replicas poll, one GET a second).
const (
	pinsKey        = "mcp-hub:pins"
	pinsVersionKey = "mcp-hub:pins:version"
)

// pinTries bounds the retries of a pin update that another writer
// interrupted (two replicas pinning at once).
const pinTries = 10

// PinBackend is the store's pins, shared by every replica
// (gateway.PinSharer).
func (r *redisStore) PinBackend() pin.Backend { return pinBackend{r.client} }

type pinBackend struct{ client *client }

func (b pinBackend) String() string { return "the session store's " + pinsKey }

func (b pinBackend) Version(ctx context.Context) (string, error) {
	var v []byte
	err := b.client.with(ctx, func(cn *conn) error {
		replies, err := cn.do([]any{"GET", pinsVersionKey})
		if err != nil {
			return err
		}
		v, err = bulk(replies[0])
		return err
	})
	if errors.Is(err, errNil) {
		return "", nil
	}
	return string(v), err
}

func (b pinBackend) Load(ctx context.Context) (data []byte, version string, err error) {
	err = b.client.with(ctx, func(cn *conn) error {
		replies, err := cn.do([]any{"MGET", pinsKey, pinsVersionKey})
		if err != nil {
			return err
		}
		data, version, err = pinReplies(replies[0])
		return err
	})
	return data, version, err
}

// pinReplies reads an array reply of the pins and their version (either
// may be nil).
func pinReplies(r any) (data []byte, version string, err error) {
	items, ok := r.([]any)
	if !ok || len(items) != 2 {
		if e, isErr := r.(replyError); isErr {
			return nil, "", e
		}
		return nil, "", fmt.Errorf("redis: unexpected reply %T", r)
	}
	data, err = bulk(items[0])
	if errors.Is(err, errNil) {
		data, err = nil, nil
	}
	if err != nil {
		return nil, "", err
	}
	v, err := bulk(items[1])
	if errors.Is(err, errNil) {
		return data, "", nil
	}
	return data, string(v), err
}

// Update is an optimistic transaction: WATCH both keys, read, change,
// then SET and INCR in MULTI; another writer in between makes EXEC answer
// nil, and it starts again.
func (b pinBackend) Update(ctx context.Context, change func([]byte) ([]byte, error)) (string, error) {
	for range pinTries {
		var version string
		committed := false
		err := b.client.with(ctx, func(cn *conn) error {
			replies, err := cn.do([]any{"WATCH", pinsKey, pinsVersionKey}, []any{"MGET", pinsKey, pinsVersionKey})
			if err != nil {
				return err
			}
			if err := firstError(replies[:1]); err != nil {
				return err
			}
			cur, v, err := pinReplies(replies[1])
			if err != nil {
				return err
			}
			next, err := change(cur)
			if err != nil || next == nil {
				if _, uerr := cn.do([]any{"UNWATCH"}); uerr != nil && err == nil {
					err = uerr
				}
				version, committed = v, err == nil
				return err
			}
			replies, err = cn.do([]any{"MULTI"}, []any{"SET", pinsKey, next}, []any{"INCR", pinsVersionKey}, []any{"EXEC"})
			if err != nil {
				return err
			}
			if err := firstError(replies[:3]); err != nil {
				return err
			}
			switch exec := replies[3].(type) {
			case nil: // another writer since WATCH
				return nil
			case replyError:
				return exec
			case []any:
				if err := firstError(exec); err != nil {
					return err
				}
				n, err := integer(exec[1])
				if err != nil {
					return err
				}
				version, committed = strconv.FormatInt(n, 10), true
			}
			return nil
		})
		if err != nil || committed {
			return version, err
		}
	}
	return "", fmt.Errorf("%s: %d writers at once; try again", pinsKey, pinTries)
}
