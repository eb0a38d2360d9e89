package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
)

// servePprof serves Go's profiles (/debug/pprof/) on addr, a loopback
// address, while ctx lasts: MCP_HUB_PPROF=127.0.0.1:6060 mcp-hub serve
// --http ... For performance work (the session memory measurement takes
// its heap profile here); never on by default, and never beyond this
// machine, since profiles show what the process holds.
func servePprof(ctx context.Context, addr string, log *slog.Logger) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return fmt.Errorf("profiles are served on a loopback address only (127.0.0.1:PORT)")
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	srv := &http.Server{Handler: mux}
	go srv.Serve(ln)
	go func() {
		<-ctx.Done()
		srv.Close()
	}()
	log.Warn("serving Go profiles (MCP_HUB_PPROF)", "url", "http://"+ln.Addr().String()+"/debug/pprof/")
	return nil
}
