package hub

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"time"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"

	"github.com/mcp-hub/mcp-hub/pin"
)

// Pins is the pin store the hub checks each server's tools against when
// it builds a catalog (package pin's *Store; see pin's doc for the model).
type Pins interface {
	// CheckAll returns, for each server of reqs, the tools that must not
	// be served. An error with a nil Result.Held means nothing of that
	// server may be served. Identity names how a server is launched
	// (pinIdentity).
	CheckAll(ctx context.Context, reqs []pin.Request, firstUse string) ([]pin.Result, []error)
	// Changed reports whether another process (`mcp-hub pins approve`,
	// another hub) changed the pins since the store last looked.
	Changed() bool
}

// PinPollInterval is how often a running hub looks for a change of its
// pins made elsewhere: an approval is served within about this long (plus
// a catalog rebuild).
const PinPollInterval = time.Second

// pinCheckWait bounds the pin check of a catalog rebuild (the pin file's
// lock included).
const pinCheckWait = 10 * time.Second

// Quarantine is a tool held back by its pin: not listed, not searched,
// not called.
type Quarantine struct {
	Name     string // the exposed name it would have
	Server   string
	Original string
	State    pin.State // quarantined or new
	Reason   string
}

// Message is the error a call of the tool gets, with the commands that
// review and approve it.
func (q *Quarantine) Message() string {
	return fmt.Sprintf("Tool '%s' is quarantined: %s (server '%s', tool '%s'). A person must review it with `mcp-hub pins diff %s %s` and approve it with `mcp-hub pins approve %s %s`; until then it cannot be called.",
		q.Name, q.Reason, q.Server, pin.Escape(q.Original), q.Server, pin.Escape(q.Original), q.Server, pin.Escape(q.Original))
}

// Quarantined looks up a tool held back by its pin, by exposed name.
func (c *Catalog) Quarantined(name string) (*Quarantine, bool) {
	q, ok := c.quarantined[name]
	return q, ok
}

// pinCheck is one server's answer from the pin store.
type pinCheck struct {
	res pin.Result
	err error
}

// checkAllPins asks the pin store about every server's tools at once (at
// most one write of the pin file: a first start pins every server), for
// checkPins to judge server by server; nil when pinning is off.
func checkAllPins(pins Pins, cfg *config.Config, reqs []pin.Request) map[string]pinCheck {
	if pins == nil || !cfg.Pinning.Enabled() || len(reqs) == 0 {
		return nil
	}
	for i := range reqs {
		reqs[i].Identity = pinIdentity(cfg.Servers[reqs[i].Server])
	}
	ctx, cancel := context.WithTimeout(context.Background(), pinCheckWait)
	defer cancel()
	res, errs := pins.CheckAll(ctx, reqs, cfg.Pinning.FirstUsePolicy())
	out := make(map[string]pinCheck, len(reqs))
	for i, r := range reqs {
		out[r.Server] = pinCheck{res: res[i], err: errs[i]}
	}
	return out
}

// checkPins is the tools of one server that its pins hold back, by
// upstream name, from its answer in checks (checkAllPins). A store that
// cannot be read holds every tool (fails closed); one that cannot be
// written is logged, and what was pinned holds for this process.
func (c *Catalog) checkPins(log *slog.Logger, checks map[string]pinCheck, server string, tools []*mcp.Tool) map[string]pin.Verdict {
	chk, ok := checks[server]
	if !ok {
		return nil
	}
	res, err := chk.res, chk.err
	if err == nil || res.Held != nil {
		if err != nil {
			c.problem(log, fmt.Sprintf("server '%s': %v", server, err))
		}
		if v := res.Instructions; v.State != pin.Pinned {
			// The hub passes no upstream's instructions on to its clients:
			// the pin makes the change visible; the tools are judged alone.
			c.problem(log, fmt.Sprintf("server '%s': its instructions wait for approval: %s; review with `mcp-hub pins diff %s`, approve with `mcp-hub pins approve %s`", server, v.Reason, server, server))
		}
		return res.Held
	}
	c.pinsFailed = true // watchPins tries again
	c.problem(log, fmt.Sprintf("server '%s': every tool held back, the pins cannot be checked: %v (the state folder must be writable: see MCP_HUB_STATE_DIR, or set `pinning: false`)", server, err))
	held := make(map[string]pin.Verdict, len(tools))
	for _, t := range tools {
		held[t.Name] = pin.Verdict{State: pin.Quarantined, Reason: "the pin store cannot be read: " + err.Error()}
	}
	return held
}

// watchPins rebuilds the catalog when the pins change elsewhere, or when
// the last build could not read them (every PinPollInterval until it
// can), until stop is closed.
func (h *Hub) watchPins(stop <-chan struct{}) {
	t := time.NewTicker(PinPollInterval)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		changed := h.pins.Changed()
		if changed || h.Catalog().pinsFailed {
			if changed {
				h.log.Info("pins changed: rebuilding the catalog")
			}
			h.changes.Add(1)
			h.rebuildCatalog()
		}
	}
}

// defaultPins is package pin's store in stateDir, else the user's state
// folder, else (no folder can be named) one in memory.
func defaultPins(stateDir string, log *slog.Logger) Pins {
	if stateDir == "" {
		d, err := pin.DefaultDir()
		if err != nil {
			log.Error("pinning: no state folder; pins are kept in memory and a change made while the hub is down is not caught", "err", err)
			return pin.Memory()
		}
		stateDir = d
	}
	s, err := pin.Open(stateDir)
	if err != nil {
		log.Error("pinning: pins are kept in memory", "err", err)
		return pin.Memory()
	}
	return s
}

// pinIdentity is how a server is launched, hashed (its arguments may hold
// secrets): the builtin's name, the URL, or the command and its
// arguments. Pins are kept per server name and identity.
func pinIdentity(sc *config.Server) string {
	if sc == nil {
		return ""
	}
	h := sha256.New()
	switch {
	case sc.Builtin != "":
		fmt.Fprintf(h, "builtin\x00%s", sc.Builtin)
	case sc.URL != "":
		fmt.Fprintf(h, "url\x00%s", sc.URL)
	default:
		fmt.Fprintf(h, "stdio\x00%s", sc.Command)
		for _, a := range sc.Args {
			fmt.Fprintf(h, "\x00%s", a)
		}
	}
	return hex.EncodeToString(h.Sum(nil)[:8])
}
