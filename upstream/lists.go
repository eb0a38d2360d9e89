package upstream

import (
	"context"
	"fmt"
	"time"

	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"

	"github.com/mcp-hub/mcp-hub/internal/safe"
)

// Listing. An upstream's lists are read page by page, and re-read when it
// says they changed. Both are bounded, as a server controls them: a list
// stops after MaxListPages pages or MaxListItems items (what was read is
// kept, with a warning naming the server), and however many list_changed
// notifications arrive, one re-list runs at a time with at most one more
// waiting (coalesced), and re-lists start at most every RelistInterval: a
// single change is picked up at once, a flood of them costs a few re-lists
// a second.

// Limits on one list (tools, resources, resource templates or prompts) of
// one server.
const (
	MaxListPages = 1000
	MaxListItems = 10000
)

// RelistInterval is the least time between the starts of two re-lists of
// one server.
const RelistInterval = 250 * time.Millisecond

// listAll reads every page of everything the server says it has.
func (u *Upstream) listAll(ctx context.Context, cs *mcp.ClientSession, schemas *rawSchemas) (Lists, error) {
	init := cs.InitializeResult()
	l := Lists{Capabilities: init.Capabilities, Instructions: init.Instructions, ServerInfo: init.ServerInfo}
	caps := init.Capabilities
	if caps == nil {
		caps = &mcp.ServerCapabilities{}
	}
	var err error
	if caps.Tools != nil {
		l.Tools, err = pages(ctx, u, "tools", func(ctx context.Context, cursor string) ([]*mcp.Tool, string, error) {
			r, err := cs.ListTools(ctx, &mcp.ListToolsParams{Cursor: cursor})
			if err != nil {
				return nil, "", err
			}
			return r.Tools, r.NextCursor, nil
		})
		if err != nil {
			return l, fmt.Errorf("tools: %w", err)
		}
		schemas.apply(l.Tools)
	}
	if caps.Resources != nil {
		l.Resources, err = pages(ctx, u, "resources", func(ctx context.Context, cursor string) ([]*mcp.Resource, string, error) {
			r, err := cs.ListResources(ctx, &mcp.ListResourcesParams{Cursor: cursor})
			if err != nil {
				return nil, "", err
			}
			return r.Resources, r.NextCursor, nil
		})
		if err != nil {
			return l, fmt.Errorf("resources: %w", err)
		}
		// Templates are optional even for servers with resources.
		l.Templates, _ = pages(ctx, u, "resource templates", func(ctx context.Context, cursor string) ([]*mcp.ResourceTemplate, string, error) {
			r, err := cs.ListResourceTemplates(ctx, &mcp.ListResourceTemplatesParams{Cursor: cursor})
			if err != nil {
				return nil, "", err
			}
			return r.ResourceTemplates, r.NextCursor, nil
		})
	}
	if caps.Prompts != nil {
		l.Prompts, err = pages(ctx, u, "prompts", func(ctx context.Context, cursor string) ([]*mcp.Prompt, string, error) {
			r, err := cs.ListPrompts(ctx, &mcp.ListPromptsParams{Cursor: cursor})
			if err != nil {
				return nil, "", err
			}
			return r.Prompts, r.NextCursor, nil
		})
		if err != nil {
			return l, fmt.Errorf("prompts: %w", err)
		}
	}
	return l, nil
}

// pages reads one of u's lists with ReadPages, warning in u's log.
func pages[T any](ctx context.Context, u *Upstream, what string, page func(ctx context.Context, cursor string) ([]*T, string, error)) ([]*T, error) {
	return ReadPages(ctx, page, func(msg string) {
		u.log.Warn(fmt.Sprintf("server '%s' %s", u.cfg.Name, fmt.Sprintf(msg, what)))
	})
}

// ReadPages reads a list page by page, up to MaxListPages pages and
// MaxListItems items; a cursor seen before ends it too, and null entries
// are dropped. Where it stops early it calls warn with a message that
// has a %s for what is listed ("tools", ...), and returns what it read.
func ReadPages[T any](ctx context.Context, page func(ctx context.Context, cursor string) ([]*T, string, error), warn func(format string)) ([]*T, error) {
	var out []*T
	seen := map[string]bool{}
	cursor := ""
	for n := 1; ; n++ {
		items, next, err := page(ctx, cursor)
		if err != nil {
			return out, err
		}
		for _, it := range items {
			if it != nil {
				out = append(out, it)
			}
		}
		switch {
		case len(out) > MaxListItems:
			warn(fmt.Sprintf("lists more %%s than the hub reads; keeping the first %d", MaxListItems))
			return out[:MaxListItems], nil
		case next == "":
			return out, nil
		case n >= MaxListPages:
			warn(fmt.Sprintf("lists its %%s in more pages than the hub reads; keeping the first %d pages (%d items)", MaxListPages, len(out)))
			return out, nil
		case seen[next]:
			warn("sent a %s cursor it had sent before; stopping there")
			return out, nil
		}
		seen[next] = true
		cursor = next
	}
}

// listChanged is the upstream's list_changed notification (tools,
// resources or prompts): a re-list starts unless one runs, in which case
// one more is queued; further notifications until then change nothing.
func (u *Upstream) listChanged() {
	u.mu.Lock()
	u.listChanges++
	start := !u.relisting
	if start {
		u.relisting = true
	} else {
		u.relistQueued = true
	}
	u.mu.Unlock()
	if start {
		go u.relistLoop()
	}
}

// relistLoop re-lists until no notification is queued, each re-list
// RelistInterval after the start of the one before.
func (u *Upstream) relistLoop() {
	for {
		began := time.Now()
		u.relist()
		u.mu.Lock()
		u.relists++
		if !u.relistQueued {
			u.relisting = false
			u.mu.Unlock()
			return
		}
		life := u.life
		u.mu.Unlock()
		if life == nil {
			life = context.Background()
		}
		select {
		case <-time.After(time.Until(began.Add(RelistInterval))):
		case <-life.Done():
			u.mu.Lock()
			u.relisting, u.relistQueued = false, false
			u.mu.Unlock()
			return
		}
		u.mu.Lock()
		u.relistQueued = false
		u.mu.Unlock()
	}
}

// relist refreshes the snapshot after the upstream said its lists changed.
func (u *Upstream) relist() {
	defer safe.Recover(u.log, "re-listing the server", nil)
	cs, err := u.Session()
	if err != nil {
		return
	}
	u.mu.Lock()
	life := u.life
	u.mu.Unlock()
	if life == nil {
		life = context.Background()
	}
	ctx, cancel := context.WithTimeout(life, u.cfg.CallTimeout())
	defer cancel()
	start := time.Now()
	lists, err := u.listAll(ctx, cs, u.tap.schemas)
	if err != nil {
		u.log.Warn("re-list failed", "err", u.redact.Error(err))
		return
	}
	u.mu.Lock()
	u.lists = lists
	u.mu.Unlock()
	u.log.Debug("re-listed", "tools", len(lists.Tools), "took", time.Since(start).Round(time.Millisecond))
	u.changed()
}

// The Listener is the hub's code, called from this upstream's connection:
// a panic in it fails that one notification or request, never the
// connection (or the process).

func (u *Upstream) changed() {
	defer safe.Recover(u.log, "the server's lists changed", nil)
	u.listener.UpstreamChanged(u)
}

func (u *Upstream) notified(ctx context.Context, method string, params mcp.Params) {
	defer safe.Recover(u.log, method, nil)
	u.listener.UpstreamNotified(ctx, u, method, params)
}

func (u *Upstream) request(ctx context.Context, method string, params mcp.Params) (res mcp.Result, err error) {
	defer safe.Recover(u.log, method, func(p error) { res, err = nil, p })
	return u.listener.UpstreamRequest(ctx, u, method, params)
}
