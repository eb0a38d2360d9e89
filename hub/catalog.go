package hub

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"

	"github.com/mcp-hub/mcp-hub/index"
	"github.com/mcp-hub/mcp-hub/pin"
	"github.com/mcp-hub/mcp-hub/upstream"
)

// alwaysLoadKey marks tools that a client's own tool search must never
// hide. Under discovery every tool a session lists carries it: eager tools,
// the meta-tools, and deferred tools once the session has loaded them.
// Claude Code defers MCP tools without it behind its own ToolSearch, and
// that includes tools that arrive mid-turn after list_changed: a tool the
// model just found with search_tools would then not be callable by name on
// its next request. The key is merged into the upstream's own _meta.
const alwaysLoadKey = "anthropic/alwaysLoad"

// Tool is one upstream tool as the hub exposes it.
type Tool struct {
	Name     string // exposed name, unique in the catalog
	Server   string
	Original string // the upstream's own name, used when calling it
	// Def is what tools/list shows: the upstream definition, verbatim but
	// for the name (and _meta alwaysLoad on eager tools under discovery).
	Def *mcp.Tool
	// loadedDef is what a session that has loaded this deferred tool lists:
	// Def with _meta alwaysLoad.
	loadedDef *mcp.Tool
	Deferred  bool
	// Position is the tool's index in its catalog's Tools.
	Position int
	// fingerprint is Def's JSON, computed once per catalog.
	fingerprint string
	// servable: go-sdk accepts Def (sdkAccepts); sessions list only such
	// tools.
	servable bool
}

// Prompt is one upstream prompt as the hub exposes it.
type Prompt struct {
	Name     string
	Server   string
	Original string
	Def      *mcp.Prompt
}

// Catalog is an immutable snapshot of everything the upstreams offer, with
// exposed names. It is rebuilt whenever an upstream's lists change and
// swapped in atomically; sessions read whichever snapshot is current.
type Catalog struct {
	Tools   []*Tool // in config order, then upstream order
	Prompts []*Prompt
	byName  map[string]*Tool
	prompts map[string]*Prompt
	// resources maps a resource URI to the server that listed it.
	resources map[string]string
	// index builds the search index over the deferred tools, once, on
	// first use (searchIndex); nil when there are none.
	index func() *index.Index
	// built is the index once it has been built.
	built atomic.Pointer[index.Index]
	// embedTexts are the indexed tools' index.EmbedText, in index order,
	// with discovery.embeddings; their vectors arrive later (semantic.go).
	embedTexts []string
	vectors    atomic.Pointer[toolVectors]
	// Problems are collisions and unusable tools, already logged.
	Problems []string
	// Collisions are the Problems that are name collisions after
	// prefixing: fatal at start-up, logged when they appear later.
	Collisions []string
	// reported are the problems the previous catalog already logged.
	reported map[string]bool
	// views are what sessions list, per toolset (toollist.go).
	views viewCache
	// Quarantine are the tools their pins hold back (pins.go), in
	// listing order; quarantined has them by exposed name.
	Quarantine  []*Quarantine
	quarantined map[string]*Quarantine
	// pinsFailed: the pins could not be read for some server, whose tools
	// are all held back.
	pinsFailed bool
}

// Tool looks a tool up by exposed name.
func (c *Catalog) Tool(name string) (*Tool, bool) {
	t, ok := c.byName[name]
	return t, ok
}

// Prompt looks a prompt up by exposed name.
func (c *Catalog) Prompt(name string) (*Prompt, bool) {
	p, ok := c.prompts[name]
	return p, ok
}

// Names lists every exposed tool name.
func (c *Catalog) Names() []string {
	names := make([]string, len(c.Tools))
	for i, t := range c.Tools {
		names[i] = t.Name
	}
	return names
}

// searchIndex is the search index over the deferred tools, built on the
// first call; nil when there are none (or it could not be built).
func (c *Catalog) searchIndex() *index.Index {
	if c.index == nil {
		return nil
	}
	return c.index()
}

// buildCatalog names, filters and partitions the upstreams' current lists.
// A contested name stays with the server that had it in prev, so a server
// joining late never takes over a name clients already call; otherwise the
// first server in config order keeps it. The loser's tool is dropped and
// the problem reported.
//
// nameLimit bounds exposed names (Config.NameLimit, or serve's override).
//
// pins, when set and pinning is on, hold back tools whose definitions
// differ from their pins: they enter Quarantine, not Tools.
func buildCatalog(cfg *config.Config, ups []*upstream.Upstream, log *slog.Logger, prev *Catalog, nameLimit int, pins Pins) *Catalog {
	c := &Catalog{
		byName:      map[string]*Tool{},
		prompts:     map[string]*Prompt{},
		resources:   map[string]string{},
		quarantined: map[string]*Quarantine{},
	}
	if prev != nil {
		c.reported = make(map[string]bool, len(prev.Problems))
		for _, p := range prev.Problems {
			c.reported[p] = true
		}
	}
	position := make(map[string]int, len(ups))
	for i, u := range ups {
		position[u.Name()] = i
	}
	if prev != nil {
		incumbent := map[string]bool{}
		for _, t := range prev.Tools {
			incumbent[t.Server] = true
		}
		for _, p := range prev.Prompts {
			incumbent[p.Server] = true
		}
		ups = slices.Clone(ups)
		slices.SortStableFunc(ups, func(a, b *upstream.Upstream) int {
			return cmpBool(!incumbent[a.Name()], !incumbent[b.Name()])
		})
	}
	defer func() {
		// Listing order is config order, then upstream order.
		slices.SortStableFunc(c.Tools, func(a, b *Tool) int { return position[a.Server] - position[b.Server] })
		slices.SortStableFunc(c.Prompts, func(a, b *Prompt) int { return position[a.Server] - position[b.Server] })
		slices.SortStableFunc(c.Quarantine, func(a, b *Quarantine) int { return position[a.Server] - position[b.Server] })
	}()
	var deferred []index.Tool
	scratch := newScratchServer()
	// Each server's lists, and the tools its config keeps, first: the
	// pins of all of them are checked at once.
	allLists := make([]upstream.Lists, len(ups))
	allKept := make([][]*mcp.Tool, len(ups))
	reqs := make([]pin.Request, len(ups))
	for i, u := range ups {
		name := u.Name()
		sc := cfg.Servers[name]
		allLists[i] = u.Lists()
		kept := make([]*mcp.Tool, 0, len(allLists[i].Tools))
		for _, ut := range allLists[i].Tools {
			if sc.Tools.Keeps(ut.Name) {
				kept = append(kept, ut)
			}
		}
		allKept[i] = kept
		reqs[i] = pin.Request{Server: name, Instructions: allLists[i].Instructions, Tools: kept}
	}
	checks := checkAllPins(pins, cfg, reqs)
	for i, u := range ups {
		name := u.Name()
		sc := cfg.Servers[name]
		prefix := serverPrefix(name, sc)
		isDeferred := cfg.Deferred(name)
		lists := allLists[i]
		kept := allKept[i]
		held := c.checkPins(log, checks, name, kept)
		for _, ut := range kept {
			exposed := exposedName(prefix, ut.Name, nameLimit)
			if cfg.Discovery.Enabled && isMetaTool(exposed) {
				c.collision(log, fmt.Sprintf("server '%s': tool '%s' is exposed as '%s', which the hub's own meta-tool uses; set a 'prefix' on the server", name, ShownName(ut.Name), exposed))
				continue
			}
			if prev, ok := c.byName[exposed]; ok {
				c.collision(log, fmt.Sprintf("tool name collision: '%s' from server '%s' and server '%s' (tool '%s'); set a different 'prefix' on one of them, or deny one tool under 'tools: {deny: [...]}'",
					exposed, prev.Server, name, ShownName(ut.Name)))
				continue
			}
			if v, ok := held[ut.Name]; ok {
				q := &Quarantine{Name: exposed, Server: name, Original: ut.Name, State: v.State, Reason: v.Reason}
				c.Quarantine = append(c.Quarantine, q)
				c.quarantined[exposed] = q
				c.problem(log, fmt.Sprintf("server '%s': tool '%s' held back (%s): %s; review with `mcp-hub pins diff %s %s`",
					name, pin.Escape(ShownName(ut.Name)), v.State, v.Reason, name, pin.Escape(ShownName(ut.Name))))
				continue
			}
			def, err := exposedDef(ut, exposed, cfg.Discovery.Enabled && !isDeferred)
			if err != nil {
				c.problem(log, fmt.Sprintf("server '%s': tool '%s' skipped: %v", name, ShownName(ut.Name), err))
				continue
			}
			t := &Tool{Name: exposed, Server: name, Original: ut.Name, Def: def, Deferred: isDeferred, fingerprint: fingerprint(def), servable: true,
				Position: len(c.Tools)}
			if isDeferred {
				t.loadedDef = withAlwaysLoad(def)
			}
			if err := sdkAccepts(scratch, def); err != nil {
				t.servable = false
				c.problem(log, fmt.Sprintf("server '%s': tool '%s' cannot be served: %v", name, ShownName(ut.Name), err))
			}
			c.Tools = append(c.Tools, t)
			c.byName[exposed] = t
			if isDeferred {
				deferred = append(deferred, index.Tool{
					Name: exposed, Server: name, Title: ut.Title, Description: ut.Description,
					InputSchema: def.InputSchema.(json.RawMessage), ServerDescription: sc.Description,
				})
			}
		}
		for _, p := range lists.Prompts {
			exposed := exposedName(prefix, p.Name, nameLimit)
			if prev, ok := c.prompts[exposed]; ok {
				c.collision(log, fmt.Sprintf("prompt name collision: '%s' from server '%s' and server '%s'; set a different 'prefix' on one of them", exposed, prev.Server, name))
				continue
			}
			def := *p
			def.Name = exposed
			pr := &Prompt{Name: exposed, Server: name, Original: p.Name, Def: &def}
			c.Prompts = append(c.Prompts, pr)
			c.prompts[exposed] = pr
		}
		for _, r := range lists.Resources {
			if prev, ok := c.resources[r.URI]; ok && prev != name {
				c.problem(log, fmt.Sprintf("resource '%s' is listed by server '%s' and server '%s'; reads go to '%s'", r.URI, prev, name, prev))
				continue
			}
			c.resources[r.URI] = name
		}
	}
	if len(deferred) > 0 {
		// Built on the first search, not here: a catalog is built at
		// start-up and again on every change of an upstream's list, and
		// most are never searched.
		c.index = sync.OnceValue(func() *index.Index {
			ix, err := index.New(deferred)
			if err != nil {
				log.Error("search index: search_tools finds nothing", "err", err)
				return nil
			}
			c.built.Store(ix)
			return ix
		})
		if cfg.Discovery.Embeddings != nil {
			c.embedTexts = make([]string, len(deferred))
			for i, t := range deferred {
				c.embedTexts[i] = index.EmbedText(t)
			}
		}
	}
	return c
}

// cmpBool orders false before true.
func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case !a:
		return -1
	}
	return 1
}

// problem records msg, and logs it unless the previous catalog already did.
func (c *Catalog) problem(log *slog.Logger, msg string) {
	c.Problems = append(c.Problems, msg)
	if !c.reported[msg] {
		log.Error(msg)
	}
}

func (c *Catalog) collision(log *slog.Logger, msg string) {
	c.Collisions = append(c.Collisions, msg)
	c.problem(log, msg)
}

// exposedDef copies an upstream tool definition for exposure. Schemas stay
// verbatim except where the SDK would refuse the tool: a top-level type
// other than exactly "object" is patched to "object" (the SDK panics on a
// missing type or on ["object","null"]).
func exposedDef(ut *mcp.Tool, exposed string, alwaysLoad bool) (*mcp.Tool, error) {
	def := *ut
	def.Name = exposed
	in, err := objectSchema(ut.InputSchema)
	if err != nil {
		return nil, fmt.Errorf("input schema: %w", err)
	}
	def.InputSchema = in
	if ut.OutputSchema != nil {
		out, err := json.Marshal(ut.OutputSchema)
		if err != nil {
			return nil, fmt.Errorf("output schema: %w", err)
		}
		def.OutputSchema = json.RawMessage(out)
	}
	if alwaysLoad {
		return withAlwaysLoad(&def), nil
	}
	return &def, nil
}

// withAlwaysLoad is a copy of def whose _meta has alwaysLoadKey, merged
// into what the upstream sent.
func withAlwaysLoad(def *mcp.Tool) *mcp.Tool {
	out := *def
	out.Meta = maps.Clone(def.Meta)
	if out.Meta == nil {
		out.Meta = mcp.Meta{}
	}
	out.Meta[alwaysLoadKey] = true
	return &out
}

// objectSchema marshals a schema once (so every session's tools/list reuses
// the bytes) and makes sure its top-level type is "object". A schema that
// arrives as the upstream's own bytes and is already an object schema is
// kept byte for byte (compacted), key order included.
func objectSchema(schema any) (json.RawMessage, error) {
	if raw, ok := schema.(json.RawMessage); ok {
		var top struct {
			Type json.RawMessage `json:"type"`
		}
		if json.Unmarshal(raw, &top) == nil && string(top.Type) == `"object"` {
			var buf bytes.Buffer
			if err := json.Compact(&buf, raw); err != nil {
				return nil, err
			}
			return buf.Bytes(), nil
		}
	}
	var m map[string]any
	switch s := schema.(type) {
	case nil:
		m = map[string]any{}
	case map[string]any:
		m = s
	default:
		b, err := json.Marshal(s)
		if err != nil {
			return nil, err
		}
		if err := json.Unmarshal(b, &m); err != nil {
			return nil, fmt.Errorf("not a JSON object: %w", err)
		}
	}
	if m["type"] != "object" {
		m = maps.Clone(m)
		m["type"] = "object"
	}
	b, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	return b, nil
}
