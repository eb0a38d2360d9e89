package pin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"

	"github.com/mcp-hub/mcp-hub/internal/tokenstore"
)

// Limits.
const (
	// FileName is the pin file in the state folder; LockName its lock.
	FileName = "pins.json"
	LockName = "pins.lock"
	// MaxFileBytes bounds the pin file read: a larger one is refused (and
	// every tool quarantined) rather than read.
	MaxFileBytes = 64 << 20
	// MaxTextBytes bounds the definition text kept for `pins diff`, per
	// tool and per server's instructions; the digest always covers the
	// whole definition.
	MaxTextBytes = 64 << 10
	// LockWait bounds how long a check, an approval or a forget waits for
	// another process holding the pin file's lock.
	LockWait = 5 * time.Second
)

// First-use policies (config `pinning: {first_use: ...}`).
const (
	FirstUseTrust      = "trust"
	FirstUseQuarantine = "quarantine"
)

// State is what a pin says of a tool.
type State string

const (
	// Pinned: the definition served is the one approved (or trusted on
	// first use).
	Pinned State = "pinned"
	// Quarantined: the definition differs from its pin, or carries hidden
	// characters; the tool is not served until approved.
	Quarantined State = "quarantined"
	// New: first seen under first_use: quarantine; not served until
	// approved.
	New State = "new"
)

// Record is one approved definition.
type Record struct {
	Digest string `json:"digest"`
	// Text is the canonical definition (Canonical), cut at MaxTextBytes.
	Text     string    `json:"text"`
	Approved time.Time `json:"approved"`
}

// Pending is a definition seen but not approved.
type Pending struct {
	Digest string    `json:"digest"`
	Text   string    `json:"text"`
	State  State     `json:"state"`
	Reason string    `json:"reason"`
	Seen   time.Time `json:"seen"`
}

// entry is one tool's pin (or a server's instructions).
type entry struct {
	Pinned  *Record  `json:"pinned,omitempty"`
	Pending *Pending `json:"pending,omitempty"`
}

// serverPins are the pins of one server as one entry of the config
// launches it (Check's identity).
type serverPins struct {
	Name         string            `json:"name"`
	Identity     string            `json:"identity,omitempty"`
	Instructions *entry            `json:"instructions,omitempty"`
	Tools        map[string]*entry `json:"tools"`
}

// serverKey is the key of a server's pins in the file: its name, and the
// identity of how it is launched.
func serverKey(name, identity string) string {
	if identity == "" {
		return name
	}
	return name + "@" + identity
}

// named is the keys of the pins of every server called name, sorted.
func (f *file) named(name string) []string {
	var keys []string
	for k, sp := range f.Servers {
		if sp.Name == name {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

// file is the pin file.
type file struct {
	Format  int                    `json:"format"`
	Servers map[string]*serverPins `json:"servers"`
}

const format = 1

// Verdict is a Check's finding for one tool.
type Verdict struct {
	State  State
	Reason string
}

// Result is what Check found for one server.
type Result struct {
	// Held are the tools that must not be served, by their upstream name.
	Held map[string]Verdict
	// Instructions is the state of the server's instructions.
	Instructions Verdict
}

// Store is the pins, kept by a Backend: a file in the state folder
// (Open), a shared store such as the gateway's session store (NewStore),
// or
// memory (Memory). Its methods are safe for concurrent use, and several
// processes may share the backend: every change is a read-modify-write
// that the backend makes atomic against other writers.
type Store struct {
	backend Backend
	now     func() time.Time

	mu    sync.Mutex
	cache *file
	// version is the backend's version as last read or written; Changed
	// compares it.
	version string
	// memo is each server's tools as the last check saw them, canonical.
	memo map[string]map[*mcp.Tool]seen
}

// seen is one definition as a check sees it.
type seen struct {
	name, digest, text string
	hidden             bool
	err                error
}

// NewStore is a store on backend.
func NewStore(backend Backend) *Store { return &Store{backend: backend, now: time.Now} }

// Open is the pin store of stateDir: the file pins.json there (created at
// the first pin), locked through pins.lock.
func Open(stateDir string) (*Store, error) {
	if stateDir == "" {
		return nil, errors.New("pin store: no state folder")
	}
	return NewStore(&fileBackend{path: filepath.Join(stateDir, FileName), lock: filepath.Join(stateDir, LockName)}), nil
}

// Memory is a store kept in memory only: pins last as long as the process
// (for a hub with no state folder, and for tests).
func Memory() *Store { return NewStore(&memoryBackend{}) }

// DefaultDir is the hub's state folder (tokenstore.DefaultDir).
func DefaultDir() (string, error) { return tokenstore.DefaultDir() }

// Path is where the pins are, for messages.
func (s *Store) Path() string { return s.backend.String() }

// changedWait bounds Changed's look at the backend.
const changedWait = time.Second

// Changed reports whether the pins changed since this store last read or
// wrote them: another process approved or forgot something. It costs one
// stat of the file (one GET of a shared store). A backend that cannot
// answer reports no change.
//
// A change drops what the store had read: the next call reads again.
func (s *Store) Changed() bool {
	ctx, cancel := context.WithTimeout(context.Background(), changedWait)
	defer cancel()
	v, err := s.backend.Version(ctx)
	if err != nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if v == s.version {
		return false
	}
	s.cache, s.version = nil, v
	return true
}

// parse reads a pin file's bytes (an empty file for nil).
func (s *Store) parse(data []byte) (*file, error) {
	f := &file{Format: format, Servers: map[string]*serverPins{}}
	if data == nil {
		return f, nil
	}
	if len(data) > MaxFileBytes {
		return nil, fmt.Errorf("pin store: %s is larger than %d bytes", s.backend, MaxFileBytes)
	}
	if err := json.Unmarshal(data, f); err != nil {
		return nil, fmt.Errorf("pin store: %s is damaged: %w (fix it, or remove it to pin every tool afresh)", s.backend, err)
	}
	if f.Format != format {
		return nil, fmt.Errorf("pin store: %s has format %d; this mcp-hub reads format %d", s.backend, f.Format, format)
	}
	if f.Servers == nil {
		f.Servers = map[string]*serverPins{}
	}
	return f, nil
}

// read returns the pins, from the cache while the backend's version is the
// one read. Called with mu held. Pins that cannot be read (a link at the
// path, too big, damaged, a backend that does not answer) are an error:
// the caller fails closed.
func (s *Store) read(ctx context.Context) (*file, error) {
	v, err := s.backend.Version(ctx)
	if err != nil {
		return nil, fmt.Errorf("pin store: %w", err)
	}
	if s.cache != nil && v == s.version {
		return s.cache, nil
	}
	data, v, err := s.backend.Load(ctx)
	if err != nil {
		return nil, fmt.Errorf("pin store: %w", err)
	}
	s.version = v // Changed reports the next version, not this one again
	f, err := s.parse(data)
	if err != nil {
		s.cache = nil
		return nil, err
	}
	s.cache = f
	return f, nil
}

// update runs change on the current pins, atomically against other
// writers, and stores the result when change reports a change. Called with
// mu held. changed reports whether change ran: an error after it is a
// failed write, and the pins it made are kept in memory for this process.
func (s *Store) update(ctx context.Context, change func(*file) (bool, error)) (ran bool, err error) {
	var f *file
	var changeErr error
	v, err := s.backend.Update(ctx, func(cur []byte) ([]byte, error) {
		var err error
		if f, err = s.parse(cur); err != nil {
			return nil, err
		}
		ran = true
		changed, err := change(f)
		if err != nil || !changed {
			changeErr = err
			return nil, err
		}
		data, err := json.MarshalIndent(f, "", "  ")
		if err != nil {
			return nil, err
		}
		if len(data) > MaxFileBytes {
			return nil, fmt.Errorf("the pins would be larger than %d bytes", MaxFileBytes)
		}
		return data, nil
	})
	if changeErr != nil {
		s.cache = nil // change may have half-changed f: read again
		return ran, changeErr
	}
	if err != nil {
		if ran && f != nil {
			s.cache = f // written nowhere: kept in memory for this process
		}
		return ran, fmt.Errorf("pin store: %w", err)
	}
	s.cache, s.version = f, v
	return ran, nil
}

// Check compares server's tools and instructions with their pins, pins
// what it sees for the first time (under first_use trust) and records
// what waits for approval. It returns the tools that must not be served.
//
// identity names how the server is launched (a hash of its command and
// arguments, or its URL): the same name launched another way is another
// server, pinned afresh, as the token store keys a token by name and URL.
// Two configs that share a state folder and a server name then never undo
// each other's pins.
//
// A file that cannot be read is an error and nothing may be served (the
// caller holds every tool). A file that cannot be written is an error
// too, but Result is then valid: what was pinned is kept in memory for
// this process.
func (s *Store) Check(ctx context.Context, server, identity, instructions string, tools []*mcp.Tool, firstUse string) (Result, error) {
	res, errs := s.CheckAll(ctx, []Request{{Server: server, Identity: identity, Instructions: instructions, Tools: tools}}, firstUse)
	return res[0], errs[0]
}

// Request is one server's part of CheckAll: Check's arguments.
type Request struct {
	Server, Identity, Instructions string
	Tools                          []*mcp.Tool
}

// CheckAll is Check for several servers (of distinct names) at once, with
// at most one write of the pins for all of them: a hub's first start pins
// every server, and each write decodes and encodes the whole file. The
// result and error at i are Check's for reqs[i].
func (s *Store) CheckAll(ctx context.Context, reqs []Request, firstUse string) ([]Result, []error) {
	results := make([]Result, len(reqs))
	errs := make([]error, len(reqs))
	s.mu.Lock()
	defer s.mu.Unlock()
	judges := make([]func(*file) bool, len(reqs))
	for i, r := range reqs {
		if len(r.Tools) == 0 && r.Instructions == "" {
			results[i] = Result{Held: map[string]Verdict{}, Instructions: Verdict{State: Pinned}} // nothing listed (yet): nothing to pin
			continue
		}
		judges[i] = s.judge(r, firstUse, &results[i])
	}
	var f *file
	changed := make([]bool, len(reqs))
	anyChanged := false
	for i, judge := range judges {
		if judge == nil {
			continue
		}
		if f == nil {
			var err error
			if f, err = s.read(ctx); err != nil {
				for i := range reqs {
					if judges[i] != nil {
						results[i], errs[i] = Result{}, err
					}
				}
				return results, errs
			}
		}
		// Most checks change nothing: judge the cached file first, and
		// take the lock only to write.
		if judge(probeOf(f, serverKey(reqs[i].Server, reqs[i].Identity))) {
			changed[i], anyChanged = true, true
		}
	}
	if !anyChanged {
		return results, errs
	}
	for i := range reqs {
		if changed[i] {
			results[i] = Result{Held: map[string]Verdict{}, Instructions: Verdict{State: Pinned}}
		}
	}
	judged, err := s.update(ctx, func(f *file) (bool, error) {
		any := false
		for i, judge := range judges {
			if changed[i] && judge(f) {
				any = true
			}
		}
		return any, nil
	})
	if err != nil {
		for i, r := range reqs {
			switch {
			case !changed[i]:
			case !judged:
				// No lock, or unreadable under it: fail closed.
				results[i], errs[i] = Result{}, err
			default:
				// Unwritable: what was pinned stays in memory (update's
				// change ran on the cache) for this process.
				errs[i] = fmt.Errorf("server '%s': pins not saved: %w", r.Server, err)
			}
		}
	}
	return results, errs
}

// judge returns the function that decides r's definitions against the
// pins in a file, changing the file as needed and reporting whether it
// did, and leaving its verdicts in res. Called with mu held.
func (s *Store) judge(r Request, firstUse string, res *Result) func(*file) bool {
	server, identity, instructions, tools := r.Server, r.Identity, r.Instructions, r.Tools
	// A server's list holds the same *mcp.Tool values until it re-lists:
	// each is made canonical once, not at every check.
	memo := make(map[*mcp.Tool]seen, len(tools))
	cur := make([]seen, len(tools))
	for i, t := range tools {
		c, ok := s.memo[serverKey(server, identity)][t]
		if !ok {
			text, err := Canonical(t)
			c = seen{name: t.Name, digest: Digest(text), text: string(text), hidden: HasHidden(string(text)), err: err}
		}
		cur[i], memo[t] = c, c
	}
	if s.memo == nil {
		s.memo = map[string]map[*mcp.Tool]seen{}
	}
	s.memo[serverKey(server, identity)] = memo // only the current list's tools stay
	ins := seen{digest: Digest([]byte(instructions)), text: instructions, hidden: HasHidden(instructions)}

	*res = Result{Held: map[string]Verdict{}, Instructions: Verdict{State: Pinned}}
	return func(f *file) bool {
		changed := false
		key := serverKey(server, identity)
		sp := f.Servers[key]
		if sp == nil {
			sp = &serverPins{Name: server, Identity: identity, Tools: map[string]*entry{}}
			f.Servers[key] = sp
		}
		if sp.Tools == nil {
			sp.Tools = map[string]*entry{}
		}
		now := s.now().UTC()
		for _, c := range cur {
			if c.err != nil {
				res.Held[c.name] = Verdict{State: Quarantined, Reason: "definition cannot be pinned: " + c.err.Error()}
				continue
			}
			e := sp.Tools[c.name]
			if e == nil {
				e = &entry{}
			}
			v, ch := judgeOne(e, c.digest, c.text, c.hidden, firstUse, now, "definition")
			if ch {
				sp.Tools[c.name] = e
				changed = true
			}
			if v.State != Pinned {
				res.Held[c.name] = v
			}
		}
		if instructions != "" || sp.Instructions != nil {
			e := sp.Instructions
			if e == nil {
				e = &entry{}
			}
			v, ch := judgeOne(e, ins.digest, ins.text, ins.hidden, firstUse, now, "instructions")
			if ch {
				sp.Instructions = e
				changed = true
			}
			res.Instructions = v
		}
		return changed
	}
}

// judgeOne decides one definition against its entry e, changing e as
// needed; it reports whether it did.
func judgeOne(e *entry, digest, text string, hidden bool, firstUse string, now time.Time, what string) (Verdict, bool) {
	text = cut(text)
	if e.Pinned != nil && e.Pinned.Digest == digest {
		if e.Pending != nil {
			e.Pending = nil // changed back to what was approved
			return Verdict{State: Pinned}, true
		}
		return Verdict{State: Pinned}, false
	}
	var v Verdict
	switch {
	case e.Pinned != nil && hidden:
		v = Verdict{Quarantined, what + " changed since it was pinned, and carries hidden characters"}
	case e.Pinned != nil:
		v = Verdict{Quarantined, what + " changed since it was pinned"}
	case hidden:
		v = Verdict{Quarantined, what + " carries hidden characters"}
	case firstUse == FirstUseQuarantine:
		v = Verdict{New, "first seen; first_use is quarantine"}
	default:
		e.Pinned = &Record{Digest: digest, Text: text, Approved: now}
		e.Pending = nil
		return Verdict{State: Pinned}, true
	}
	if p := e.Pending; p != nil && p.Digest == digest && p.State == v.State && p.Reason == v.Reason {
		return v, false
	}
	e.Pending = &Pending{Digest: digest, Text: text, State: v.State, Reason: v.Reason, Seen: now}
	return v, true
}

func cut(s string) string {
	if len(s) <= MaxTextBytes {
		return s
	}
	i := MaxTextBytes
	for i > 0 && s[i]&0xC0 == 0x80 {
		i-- // a rune boundary
	}
	return s[:i] + "\n[... cut at " + fmt.Sprint(MaxTextBytes) + " bytes]"
}

// probeOf is a file holding a copy of f's pins of one server only, for a
// check to judge without changing f (or copying every other server's).
func probeOf(f *file, key string) *file {
	out := &file{Format: f.Format, Servers: map[string]*serverPins{}}
	sp := f.Servers[key]
	if sp == nil {
		return out
	}
	c := &serverPins{Name: sp.Name, Identity: sp.Identity, Tools: make(map[string]*entry, len(sp.Tools))}
	if sp.Instructions != nil {
		e := *sp.Instructions
		c.Instructions = &e
	}
	for t, e := range sp.Tools {
		ec := *e
		c.Tools[t] = &ec
	}
	out.Servers[key] = c
	return out
}

// Approve accepts the definitions of server's tools that wait for
// approval (all of them, and its instructions, when tools is empty),
// making them the pins. A running hub serves them within a second or two
// (it watches the file: Changed).
func (s *Store) Approve(ctx context.Context, server string, tools ...string) (approved []string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, err = s.update(ctx, func(f *file) (bool, error) {
		keys := f.named(server)
		if len(keys) == 0 {
			return false, fmt.Errorf("server '%s' has no pins (see `mcp-hub pins`)", Escape(server))
		}
		now := s.now().UTC()
		accept := func(e *entry) bool {
			if e == nil || e.Pending == nil {
				return false
			}
			e.Pinned = &Record{Digest: e.Pending.Digest, Text: e.Pending.Text, Approved: now}
			e.Pending = nil
			return true
		}
		if len(tools) == 0 {
			for _, k := range keys {
				sp := f.Servers[k]
				for _, name := range slices.Sorted(maps.Keys(sp.Tools)) {
					if accept(sp.Tools[name]) {
						approved = append(approved, name)
					}
				}
				if accept(sp.Instructions) {
					approved = append(approved, "(instructions)")
				}
			}
			return len(approved) > 0, nil
		}
		for _, name := range tools {
			known, done := false, false
			for _, k := range keys {
				e, ok := f.Servers[k].Tools[name]
				known = known || ok
				if accept(e) {
					done = true
				}
			}
			switch {
			case !known:
				return false, fmt.Errorf("server '%s' has no tool '%s' (use the upstream's own name, as `mcp-hub pins` shows it)", Escape(server), Escape(name))
			case !done:
				return false, fmt.Errorf("tool '%s' of server '%s' has nothing waiting for approval", Escape(name), Escape(server))
			}
			approved = append(approved, name)
		}
		return true, nil
	})
	return approved, err
}

// ApproveDigest accepts one tool's waiting definition only if its digest
// is digest: what a person reviewed with `pins diff`, even if the server
// changed the definition again in between (then nothing is approved).
func (s *Store) ApproveDigest(ctx context.Context, server, tool, digest string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, err := s.update(ctx, func(f *file) (bool, error) {
		var match *entry
		for _, k := range f.named(server) {
			if e := f.Servers[k].Tools[tool]; e != nil && e.Pending != nil && e.Pending.Digest == digest {
				match = e
			}
		}
		if match == nil {
			return false, fmt.Errorf("tool '%s' of server '%s' has no definition with digest %s waiting for approval (it changed again, or was approved): run `mcp-hub pins diff %s %s` again", Escape(tool), Escape(server), Escape(digest), Escape(server), Escape(tool))
		}
		match.Pinned = &Record{Digest: match.Pending.Digest, Text: match.Pending.Text, Approved: s.now().UTC()}
		match.Pending = nil
		return true, nil
	})
	return err
}

// Forget removes every pin of server: its tools are seen afresh next time
// (trusted, or new under first_use: quarantine). It reports whether there
// were any.
func (s *Store) Forget(ctx context.Context, server string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	found := false
	_, err := s.update(ctx, func(f *file) (bool, error) {
		for _, k := range f.named(server) {
			delete(f.Servers, k)
			found = true
		}
		return found, nil
	})
	return found, err
}

// Entry is one line of List.
type Entry struct {
	Server string `json:"server"`
	// Identity tells apart servers of one name launched in different
	// ways (Check).
	Identity string `json:"identity,omitempty"`
	// Tool is the upstream's own name; "" for the server's instructions.
	Tool   string `json:"tool"`
	State  State  `json:"state"`
	Reason string `json:"reason,omitempty"`
	Digest string `json:"digest"`
	// Old is the approved definition, New the one waiting (Diff only).
	Old string `json:"old,omitempty"`
	New string `json:"new,omitempty"`
}

// List is every pin, by server then tool, instructions first.
func (s *Store) List(ctx context.Context) ([]Entry, error) {
	return s.entries(ctx, "", nil, false)
}

// Diff is the entries of server (only the named tools, when any are
// named) that wait for approval, with the old and new text.
func (s *Store) Diff(ctx context.Context, server string, tools ...string) ([]Entry, error) {
	out, err := s.entries(ctx, server, tools, true)
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (s *Store) entries(ctx context.Context, server string, tools []string, diff bool) ([]Entry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f, err := s.read(ctx)
	if err != nil {
		return nil, err
	}
	if server != "" && len(f.named(server)) == 0 {
		return nil, fmt.Errorf("server '%s' has no pins (see `mcp-hub pins`)", Escape(server))
	}
	var out []Entry
	add := func(sp *serverPins, tool string, e *entry) {
		if diff && e.Pending == nil {
			return
		}
		en := Entry{Server: sp.Name, Identity: sp.Identity, Tool: tool, State: Pinned}
		if e.Pinned != nil {
			en.Digest = e.Pinned.Digest
			if diff {
				en.Old = e.Pinned.Text
			}
		}
		if p := e.Pending; p != nil {
			en.State, en.Reason, en.Digest = p.State, p.Reason, p.Digest
			if diff {
				en.New = p.Text
			}
		}
		out = append(out, en)
	}
	keys := slices.Sorted(maps.Keys(f.Servers))
	if server != "" {
		keys = f.named(server)
	}
	for _, k := range keys {
		sp := f.Servers[k]
		if sp.Instructions != nil && len(tools) == 0 {
			add(sp, "", sp.Instructions)
		}
		for _, t := range slices.Sorted(maps.Keys(sp.Tools)) {
			if len(tools) > 0 && !slices.Contains(tools, t) {
				continue
			}
			add(sp, t, sp.Tools[t])
		}
	}
	for _, t := range tools {
		if !slices.ContainsFunc(keys, func(k string) bool { return f.Servers[k].Tools[t] != nil }) {
			return nil, fmt.Errorf("server '%s' has no tool '%s'", Escape(server), Escape(t))
		}
	}
	return out, nil
}
