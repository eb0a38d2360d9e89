package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"time"

	"github.com/mcp-hub/mcp-hub/internal/safe"
)

// Periodic re-listing. Some servers change their tools without sending
// list_changed; with refresh_interval set, the server's lists are re-read
// on that interval. The listener (the hub, which rebuilds its index and
// manifest and tells clients) hears of it only when something changed, so
// a quiet server costs one listing per interval and nothing downstream.
// While the server is down nothing is listed: a reconnect lists anyway.

// startRefresh runs the refresh loop until ctx (the upstream's life) ends.
func (u *Upstream) startRefresh(ctx context.Context) {
	every := time.Duration(u.cfg.RefreshInterval)
	if every <= 0 {
		return
	}
	go func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				u.refresh(ctx)
			}
		}
	}()
}

// refresh re-lists once and hands the lists on only if they differ.
func (u *Upstream) refresh(life context.Context) {
	defer safe.Recover(u.log, "refreshing the server's lists", nil)
	cs, err := u.Session()
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(life, u.cfg.CallTimeout())
	defer cancel()
	lists, err := u.listAll(ctx, cs, u.tap.schemas)
	if err != nil {
		if life.Err() == nil {
			u.log.Warn("refresh failed", "err", u.redact.Error(err))
		}
		return
	}
	u.mu.Lock()
	same := sameLists(u.lists, lists)
	if !same {
		u.lists = lists
	}
	u.relists++
	u.mu.Unlock()
	if same {
		return
	}
	u.log.Info("refresh found changed lists", "tools", len(lists.Tools))
	u.changed()
}

// sameLists compares what clients see of two listings.
func sameLists(a, b Lists) bool {
	enc := func(l Lists) []byte {
		out, err := json.Marshal([]any{l.Tools, l.Resources, l.Templates, l.Prompts})
		if err != nil {
			return nil // never equal: treat as changed
		}
		return out
	}
	x, y := enc(a), enc(b)
	return x != nil && bytes.Equal(x, y)
}
