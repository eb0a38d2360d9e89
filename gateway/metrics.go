package gateway

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/mcp-hub/mcp-hub/hub"
	"github.com/mcp-hub/mcp-hub/internal/clean"
)

// Tool call outcomes, the values of the outcome label.
const (
	OutcomeOK        = "ok"         // the tool answered
	OutcomeToolError = "tool_error" // the tool answered with isError
	OutcomeError     = "error"      // no answer: a JSON-RPC error, a server down, a refused call
	OutcomeTimeout   = "timeout"    // the server's timeout passed
)

// otherTool is the tool label of calls to names outside the catalog, so a
// client cannot make up label values, and of calls to the catalog's tools
// past maxToolSeries.
const otherTool = "other"

// The tool label's values come from the upstreams: each is bounded and
// cleaned, their number is capped, and a tool's series are deleted when it
// leaves the catalog (forgetTools), so that no upstream can grow /metrics
// without bound, with long names or with renames.
const (
	// maxToolLabel bounds a tool label value: longer names are cut (with
	// their length) by clean.Line.
	maxToolLabel = 128
	// maxToolSeries caps the catalog tools (in catalog order) whose calls
	// have series of their own.
	maxToolSeries = 1000
)

// toolLabel is the tool label of the catalog's i-th tool, named original
// by its server.
func toolLabel(original string, i int) string {
	if i >= maxToolSeries {
		return otherTool
	}
	return clean.Line(original, maxToolLabel)
}

// metrics are the hub's Prometheus metrics, in a registry of its own (two
// hubs in one process, as in tests, do not share counters).
type metricSet struct {
	registry       *prometheus.Registry
	toolCalls      *prometheus.CounterVec   // server, tool, outcome
	toolDuration   *prometheus.HistogramVec // server
	searches       prometheus.Counter
	searchDuration prometheus.Histogram
	toolsLoaded    prometheus.Counter
	refused        *prometheus.CounterVec // reason
	pinEvents      *prometheus.CounterVec // event (pins.go)
}

func newMetrics(g *Gateway) *metricSet {
	m := &metricSet{
		registry: prometheus.NewRegistry(),
		toolCalls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mcp_hub_tool_calls_total",
			Help: "Tool calls by server, upstream tool name and outcome (ok, tool_error, error, timeout). Calls to names outside the catalog count as server _hub, tool other.",
		}, []string{"server", "tool", "outcome"}),
		toolDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "mcp_hub_tool_call_duration_seconds",
			Help:    "Time from a tools/call reaching the hub to its answer, by server.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60},
		}, []string{"server"}),
		searches: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "mcp_hub_search_requests_total",
			Help: "search_tools calls.",
		}),
		searchDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "mcp_hub_search_duration_seconds",
			Help:    "Time to answer a search_tools call.",
			Buckets: []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5},
		}),
		toolsLoaded: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "mcp_hub_tools_loaded_total",
			Help: "Deferred tools loaded into sessions by search_tools (or by a call with auto_load_on_call).",
		}),
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mcp_hub_http_refused_total",
			Help: "HTTP requests refused before reaching the hub, by reason (unauthorized, forbidden, rate_limited, auth_failures, batch_too_large, issuer_unavailable).",
		}, []string{"reason"}),
	}
	m.pinEvents = newPinEvents()
	m.registry.MustRegister(
		m.toolCalls, m.toolDuration, m.searches, m.searchDuration, m.toolsLoaded, m.refused, m.pinEvents,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "mcp_hub_sessions",
			Help: "Open client sessions.",
		}, func() float64 { return float64(g.hub.SessionCount()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "mcp_hub_catalog_tools",
			Help: "Tools in the catalog (every server, eager and deferred).",
		}, func() float64 { return float64(len(g.hub.Catalog().Tools)) }),
		upstreamCollector{g},
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	return m
}

// handler serves the metrics in the Prometheus text format.
func (m *metricSet) handler() http.Handler {
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{})
}

// observeCall counts one tools/call. server and tool come from the catalog
// (toolLabel; or are _hub and other), so label values stay bounded.
func (m *metricSet) observeCall(server, tool, outcome string, took time.Duration) {
	m.toolCalls.WithLabelValues(server, tool, outcome).Inc()
	m.toolDuration.WithLabelValues(server).Observe(took.Seconds())
}

// forgetTools deletes the call series of every tool that c does not have
// (removed, renamed, its server gone), so that after a catalog rebuild the
// tool series are those of the catalog's tools. It reads the series that
// exist rather than the previous catalog's tools: a call that ends after
// the rebuild that removed its tool makes a series again, and the next
// rebuild deletes that one too.
func (m *metricSet) forgetTools(c *hub.Catalog) {
	if m == nil {
		return
	}
	type key struct{ server, tool string }
	keep := make(map[key]bool, len(c.Tools)+1)
	keep[key{hub.MetaServer, otherTool}] = true
	for _, t := range c.Tools {
		keep[key{t.Server, toolLabel(t.Original, t.Position)}] = true
	}
	// A registry of its own gathers this one metric only.
	only := prometheus.NewRegistry()
	if err := only.Register(m.toolCalls); err != nil {
		return
	}
	families, _ := only.Gather()
	for _, f := range families {
		for _, series := range f.GetMetric() {
			var k key
			for _, l := range series.GetLabel() {
				switch l.GetName() {
				case "server":
					k.server = l.GetValue()
				case "tool":
					k.tool = l.GetValue()
				}
			}
			if !keep[k] {
				keep[k] = true // once: its outcomes go together
				m.toolCalls.DeletePartialMatch(prometheus.Labels{"server": k.server, "tool": k.tool})
			}
		}
	}
}

func (m *metricSet) observeSearch(took time.Duration) {
	m.searches.Inc()
	m.searchDuration.Observe(took.Seconds())
}

// upstreamCollector reads each server's state when scraped, so the
// upstream package needs no hooks.
type upstreamCollector struct{ g *Gateway }

var (
	upDesc = prometheus.NewDesc("mcp_hub_upstream_up",
		"1 when the server is connected and ready, else 0.", []string{"server"}, nil)
	restartsDesc = prometheus.NewDesc("mcp_hub_upstream_restarts_total",
		"Times the server's connection ended and was re-established (a stdio server restarted).", []string{"server"}, nil)
	upstreamToolsDesc = prometheus.NewDesc("mcp_hub_upstream_tools",
		"Tools the server lists (before filters).", []string{"server"}, nil)
)

func (c upstreamCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- upDesc
	ch <- restartsDesc
	ch <- upstreamToolsDesc
}

func (c upstreamCollector) Collect(ch chan<- prometheus.Metric) {
	for _, st := range c.g.hub.Upstreams() {
		up := 0.0
		if st.Ready() {
			up = 1
		}
		ch <- prometheus.MustNewConstMetric(upDesc, prometheus.GaugeValue, up, st.Name)
		ch <- prometheus.MustNewConstMetric(restartsDesc, prometheus.CounterValue, float64(st.Restarts), st.Name)
		ch <- prometheus.MustNewConstMetric(upstreamToolsDesc, prometheus.GaugeValue, float64(st.Tools), st.Name)
	}
}
