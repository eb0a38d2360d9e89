package gateway

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/mcp-hub/mcp-hub/hub"
	"github.com/mcp-hub/mcp-hub/pin"
)

// PinSharer is a SessionStore that also keeps the pins (package pin)
// where every replica finds them: with session_store set, replicas agree
// on what is pinned, and an approval reaches every one of them.
type PinSharer interface {
	PinBackend() pin.Backend
}

// Pin events: a tool held back by its pin, or served again.
const (
	PinQuarantined = "quarantined" // held back (quarantined, or new under first_use: quarantine)
	PinReleased    = "released"    // served again: approved, or changed back to its pin
)

// Audit methods of pin events.
const (
	auditPinQuarantined = "pins/quarantined"
	auditPinReleased    = "pins/released"
)

// pinWatch turns catalog swaps into pin events: a metric and an audit line
// each time a tool is held back by its pin, and each time one is served
// again. The first catalog counts too: a change made while the hub was
// down is recorded when it starts.
type pinWatch struct {
	mu   sync.Mutex
	held map[string]string // exposed name -> state, of the last catalog
}

// catalogSwapped is hub.Hooks.CatalogSwapped (after the metrics' own).
func (g *Gateway) catalogSwapped(c *hub.Catalog) {
	g.metrics.forgetTools(c)
	g.pins.mu.Lock()
	defer g.pins.mu.Unlock()
	now := make(map[string]string, len(c.Quarantine))
	for _, q := range c.Quarantine {
		now[q.Name] = string(q.State)
		if prev, ok := g.pins.held[q.Name]; ok && prev == string(q.State) {
			continue
		}
		g.pinEvent(PinQuarantined, q.Name, q.Server, string(q.State), q.Reason)
	}
	for name := range g.pins.held {
		if _, still := now[name]; still {
			continue
		}
		if t, ok := c.Tool(name); ok {
			g.pinEvent(PinReleased, name, t.Server, string(pin.Pinned), "")
		}
	}
	g.pins.held = now
}

func (g *Gateway) pinEvent(event, tool, server, state, reason string) {
	if g.metrics != nil {
		g.metrics.pinEvents.WithLabelValues(event).Inc()
	}
	if g.audit == nil {
		return
	}
	method := auditPinQuarantined
	if event == PinReleased {
		method = auditPinReleased
	}
	g.audit.write(&auditEntry{Method: method, Tool: tool, Server: server, Outcome: state, Reason: pin.Escape(reason)})
}

// newPinEvents is the pin events counter.
func newPinEvents() *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "mcp_hub_pin_events_total",
		Help: "Tools held back by their pins (event quarantined: a definition changed, carries hidden characters, or is new under first_use: quarantine) and served again (event released: approved, or changed back).",
	}, []string{"event"})
}
