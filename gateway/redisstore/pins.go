package redisstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"

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

type pinBackend struct{ client *redis.Client }

func (b pinBackend) String() string { return "the session store's " + pinsKey }

func (b pinBackend) Version(ctx context.Context) (string, error) {
	v, err := b.client.Get(ctx, pinsVersionKey).Result()
	if errors.Is(err, redis.Nil) {
		return "", nil
	}
	return v, err
}

func (b pinBackend) Load(ctx context.Context) ([]byte, string, error) {
	vals, err := b.client.MGet(ctx, pinsKey, pinsVersionKey).Result()
	if err != nil {
		return nil, "", err
	}
	data, _ := vals[0].(string)
	version, _ := vals[1].(string)
	if vals[0] == nil {
		return nil, version, nil
	}
	return []byte(data), version, nil
}

// Update is an optimistic transaction: WATCH both keys, read, change,
// then SET and INCR in MULTI; another writer in between makes it start
// again.
func (b pinBackend) Update(ctx context.Context, change func([]byte) ([]byte, error)) (string, error) {
	var version string
	for range pinTries {
		err := b.client.Watch(ctx, func(tx *redis.Tx) error {
			data, err := tx.Get(ctx, pinsKey).Bytes()
			if errors.Is(err, redis.Nil) {
				data, err = nil, nil
			}
			if err != nil {
				return err
			}
			if version, err = tx.Get(ctx, pinsVersionKey).Result(); errors.Is(err, redis.Nil) {
				version, err = "", nil
			}
			if err != nil {
				return err
			}
			next, err := change(data)
			if err != nil || next == nil {
				return err
			}
			var incr *redis.IntCmd
			if _, err := tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
				p.Set(ctx, pinsKey, next, 0)
				incr = p.Incr(ctx, pinsVersionKey)
				return nil
			}); err != nil {
				return err
			}
			version = fmt.Sprint(incr.Val())
			return nil
		}, pinsKey, pinsVersionKey)
		if !errors.Is(err, redis.TxFailedErr) {
			return version, err
		}
	}
	return "", fmt.Errorf("%s: %d writers at once; try again", pinsKey, pinTries)
}
