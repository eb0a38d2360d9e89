package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"log/slog"
	"os"
	"time"

	"github.com/mcp-hub/mcp-hub/hub"
)

// DefaultWatchInterval is how often serve looks at its config file.
const DefaultWatchInterval = time.Second

// configWatcher keeps a serving hub on the content of its config file. It
// reads the file every interval and on SIGHUP (not on Windows). Reading
// the content, rather than watching events or modification times, finds
// every kind of change: an edit in place, an editor that writes a new
// file and renames it over the old one, a symlink (of the file or of a
// directory on its path) pointed elsewhere, a change within the same
// second on a file system with coarse timestamps.
//
// A change is applied once the content is the same at two reads in a row,
// so a file an editor is still writing is never applied half-written. A
// file that does not parse or validate is logged once, with the message
// `config check` gives, and the running config stays.
type configWatcher struct {
	hub  *hub.Hub
	log  *slog.Logger
	path string
	// tried is the content last given to the hub (applied or refused);
	// seen is the content at the previous read.
	tried, seen [sha256.Size]byte
	unreadable  bool // the file could not be read at the previous poll (logged once)
}

// newConfigWatcher takes the file's content as it is now as the content
// in service: call it before the hub loads the file, so that an edit made
// while the hub starts is not missed.
func newConfigWatcher(path string) *configWatcher {
	w := &configWatcher{path: path}
	if data, err := os.ReadFile(path); err == nil {
		w.tried = sha256.Sum256(data)
		w.seen = w.tried
	}
	return w
}

// run watches until ctx ends. interval 0 reads the file only on SIGHUP.
func (w *configWatcher) run(ctx context.Context, h *hub.Hub, log *slog.Logger, interval time.Duration) {
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

func (w *configWatcher) read() ([]byte, bool) {
	data, err := os.ReadFile(w.path)
	if err != nil {
		if !w.unreadable {
			w.log.Warn("config file cannot be read; the running config stays", "path", w.path, "err", err)
		}
		w.unreadable = true
		return nil, false
	}
	if w.unreadable {
		w.log.Info("config file readable again", "path", w.path)
	}
	w.unreadable = false
	return data, true
}

// apply parses and validates data completely, then hands it to the hub.
func (w *configWatcher) apply(ctx context.Context, data []byte) {
	w.tried = sha256.Sum256(data)
	w.seen = w.tried
	cfg, err := hub.ParseConfig(w.path, bytes.Clone(data))
	if err != nil {
		// The words of `config check` (runApp), on one log record.
		w.log.Error("config not applied, the running config stays: config error:\n" + indent(err.Error()))
		w.hub.ReloadFailed(err)
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
