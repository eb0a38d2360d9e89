package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"log/slog"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mcp-hub/mcp-hub/builtin"
	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/gateway"
)

// DefaultWatchInterval is how often serve looks at its config file.
const DefaultWatchInterval = time.Second

// racyWindow is the coarsest modification-time granularity of common file
// systems (FAT's 2 s): a file changed this close to its last read may have
// changed again without its size or time showing it.
const racyWindow = 2 * time.Second

// configWatcher keeps a serving hub on the content of its config file. It
// looks at the file every interval and reads it on SIGHUP (not on
// Windows). A poll stats the file first and reads it only when its
// identity, size, mode or modification time differ from the last read,
// when that time is within racyWindow of the read, or while a change is
// pending; the content decides then. So every kind of change is found (an
// edit in place, an editor that writes a new file and renames it over the
// old one, a symlink pointed elsewhere), and an unchanged file costs a
// stat. A file over hub.MaxConfigBytes is refused from its size, once.
//
// A change is applied once the content is the same at two reads in a row,
// so a file an editor is still writing is never applied half-written. A
// file that does not parse or validate is logged once, with the message
// `config check` gives, and the running config stays.
type configWatcher struct {
	hub  *gateway.Gateway
	log  *slog.Logger
	path string
	// tried is the content last given to the hub (applied or refused);
	// seen is the content at the previous read.
	tried, seen [sha256.Size]byte
	// stat is the file at the last read, and readAt when that was.
	stat   os.FileInfo
	readAt time.Time
	// tooBig is the over-size file last refused (reported once).
	tooBig     os.FileInfo
	unreadable bool // the file could not be read at the previous poll (logged once)
	// requireAuth refuses a config without auth: serve listens beyond
	// loopback without --allow-unauthenticated (checkOpenBind).
	requireAuth atomic.Bool
	// guardAuth refuses a reload that would weaken authentication
	// (config.Auth.Weakening): serve has a listener, loopback or not.
	// allowAuthChange (serve --allow-auth-change) lets it apply.
	guardAuth       atomic.Bool
	allowAuthChange bool
	// reads counts the times the file was read.
	reads int
}

// newConfigWatcher takes the file's content as it is now as the content
// in service: call it before the hub loads the file, so that an edit made
// while the hub starts is not missed.
func newConfigWatcher(path string) *configWatcher {
	w := &configWatcher{path: path}
	if fi, err := os.Stat(path); err == nil && fi.Size() <= config.MaxFileBytes {
		if data, err := w.readFile(fi); err == nil {
			w.tried = sha256.Sum256(data)
			w.seen = w.tried
		}
	}
	return w
}

// run watches until ctx ends. interval 0 reads the file only on SIGHUP.
func (w *configWatcher) run(ctx context.Context, h *gateway.Gateway, log *slog.Logger, interval time.Duration) {
	w.hub, w.log = h, log
	hup, stop := hangups()
	defer stop()
	var tick <-chan time.Time
	if interval > 0 {
		t := time.NewTicker(interval)
		defer t.Stop()
		tick = t.C
	}
	w.log.Debug("watching the config file", "path", w.path, "interval", interval)
	for {
		select {
		case <-ctx.Done():
			return
		case <-hup:
			w.log.Info("SIGHUP: re-reading the config file", "path", w.path)
			w.tooBig = nil // asked for: report it again
			if data, ok := w.read(); ok {
				w.apply(ctx, data)
			}
		case <-tick:
			w.poll(ctx)
		}
	}
}

// poll applies the file when its content changed and then held still for
// one interval.
func (w *configWatcher) poll(ctx context.Context) {
	fi, err := os.Stat(w.path)
	if err != nil {
		w.cannotRead(err)
		return
	}
	if w.unchanged(fi) && w.seen == w.tried || sameVersion(w.tooBig, fi) {
		return
	}
	data, ok := w.read()
	if !ok {
		return
	}
	sum := sha256.Sum256(data)
	prev := w.seen
	w.seen = sum
	if sum == w.tried || sum != prev {
		return
	}
	w.apply(ctx, data)
}

// unchanged reports whether fi is the file as last read, and old enough
// that a change would have shown in its modification time.
func (w *configWatcher) unchanged(fi os.FileInfo) bool {
	return sameVersion(w.stat, fi) && fi.ModTime().Before(w.readAt.Add(-racyWindow))
}

// sameVersion reports whether a (nil: none) and b stat the same file
// with the same size, mode and modification time.
func sameVersion(a, b os.FileInfo) bool {
	return a != nil && os.SameFile(a, b) && a.Size() == b.Size() && a.Mode() == b.Mode() && a.ModTime().Equal(b.ModTime())
}

// read reads the file, or says why not: an over-size file is refused as
// a bad config (once per version of the file), other errors are logged
// once until the file is readable again.
func (w *configWatcher) read() ([]byte, bool) {
	fi, err := os.Stat(w.path)
	if err != nil {
		w.cannotRead(err)
		return nil, false
	}
	data, err := w.readFile(fi)
	var cfgErr *config.Error
	switch {
	case errors.As(err, &cfgErr):
		w.unreadable = false
		if !sameVersion(w.tooBig, fi) {
			w.tooBig = fi
			w.refuse(err)
		}
		return nil, false
	case err != nil:
		w.cannotRead(err)
		return nil, false
	}
	if w.unreadable {
		w.log.Info("config file readable again", "path", w.path)
	}
	w.unreadable, w.tooBig = false, nil
	return data, true
}

// readFile reads the file (fi is its stat just before) and remembers it as read.
func (w *configWatcher) readFile(fi os.FileInfo) ([]byte, error) {
	if fi.Size() > config.MaxFileBytes {
		return config.ReadFile(w.path) // refuses it without reading it
	}
	w.reads++
	w.stat, w.readAt = fi, time.Now()
	return config.ReadFile(w.path)
}

func (w *configWatcher) cannotRead(err error) {
	if !w.unreadable {
		w.log.Warn("config file cannot be read; the running config stays", "path", w.path, "err", err)
	}
	w.unreadable = true
}

// refuse logs a config that is not applied and shows it in /healthz.
func (w *configWatcher) refuse(err error) {
	// The words of `config check` (runApp), on one log record.
	w.log.Error("config not applied, the running config stays: config error:\n" + indent(err.Error()))
	w.hub.ReloadFailed(err)
}

// apply parses and validates data completely, then hands it to the hub.
func (w *configWatcher) apply(ctx context.Context, data []byte) {
	w.tried = sha256.Sum256(data)
	w.seen = w.tried
	cfg, err := config.Parse(w.path, bytes.Clone(data), builtin.Names())
	if err == nil && w.requireAuth.Load() && !cfg.Auth.Configured() {
		err = &config.Error{Path: w.path, Msg: "the config has no auth (auth.tokens or auth.oauth), and this hub listens beyond loopback: " +
			"restart it with --allow-unauthenticated to serve it open on purpose"}
	}
	if err == nil {
		err = w.checkAuthChange(cfg)
	}
	if err != nil {
		w.refuse(err)
		return
	}
	for _, warning := range cfg.Warnings {
		w.log.Warn(warning)
	}
	addLogSecrets(w.log, cfg.Secrets)
	if err := w.hub.Apply(ctx, cfg); err != nil {
		w.log.Error("config not applied, the running config stays", "err", err)
		w.hub.ReloadFailed(err)
	}
}

// checkAuthChange refuses a config that would weaken the authentication
// in force (config.Auth.Weakening) while serve has a listener, unless the
// operator said so: serve --allow-auth-change, or `auth: none` in the file
// for a config without auth. What is let through is logged as a warning.
func (w *configWatcher) checkAuthChange(cfg *config.Config) error {
	if !w.guardAuth.Load() {
		return nil
	}
	why := w.hub.Config().Auth.Weakening(cfg.Auth)
	switch {
	case len(why) == 0:
		return nil
	case w.allowAuthChange:
		w.log.Warn("the reload weakens authentication (--allow-auth-change): " + strings.Join(why, "; "))
		return nil
	case cfg.Auth.None && !cfg.Auth.Configured():
		w.log.Warn("the reload removes authentication, as the config says (auth: none): requests need no token")
		return nil
	}
	return &config.Error{Path: w.path, Msg: "the reload would weaken authentication (" + strings.Join(why, "; ") + "): " +
		"write `auth: none` to serve without auth on purpose, or restart serve (with --allow-auth-change to let reloads weaken it)"}
}
