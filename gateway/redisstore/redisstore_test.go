package redisstore

import (
	"context"
	"errors"
	"net"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/gateway"
)

// startRedis runs redis-server on a free port with a password, without
// persistence, and returns its address.
func startRedis(t *testing.T) string {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redis-server is not installed")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	_, port, _ := net.SplitHostPort(addr)
	cmd := exec.Command(bin, "--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--requirepass", "pw")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	for range 100 {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return addr
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal("redis-server does not answer")
	return ""
}

// TestStore runs every store operation on a real Redis, in database 3 with
// a password: records, loaded tools, expiry, ownership, the legacy key's
// removal.
func TestStore(t *testing.T) {
	addr := startRedis(t)
	ctx := context.Background()
	if s, _ := Open("redis://:wrong@" + addr + "/3"); s.Ping(ctx) == nil {
		t.Error("a wrong password: Ping succeeded")
	}
	s, err := Open("redis://:pw@" + addr + "/3")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	if rec, err := s.Load(ctx, "none"); rec != nil || err != nil {
		t.Fatalf("Load of a missing session: %v, %v", rec, err)
	}
	rec := &gateway.SessionRecord{ID: "s1", Principal: "alice", Loaded: []string{"a__x", "b__y"}}
	if err := s.Save(ctx, rec, time.Minute); err != nil {
		t.Fatal(err)
	}
	got, err := s.Load(ctx, "s1")
	if err != nil || got == nil || got.Principal != "alice" {
		t.Fatalf("Load: %+v, %v", got, err)
	}
	slices.Sort(got.Loaded)
	if !slices.Equal(got.Loaded, rec.Loaded) {
		t.Errorf("loaded %v, want %v", got.Loaded, rec.Loaded)
	}
	if err := s.Save(ctx, &gateway.SessionRecord{ID: "s1", Principal: "mallory"}, time.Minute); !errors.Is(err, gateway.ErrNotOwner) {
		t.Errorf("another's Save: %v, want ErrNotOwner", err)
	}
	loaded, found, err := s.Touch(ctx, "s1", 50*time.Millisecond)
	if err != nil || !found || len(loaded) != 2 {
		t.Errorf("Touch: %v %v %v", loaded, found, err)
	}
	time.Sleep(200 * time.Millisecond)
	if _, found, err := s.Touch(ctx, "s1", time.Minute); found || err != nil {
		t.Errorf("Touch after expiry: found %v, %v", found, err)
	}
	if err := s.Save(ctx, rec, time.Minute); err != nil {
		t.Fatal(err)
	}
	if ok, err := s.Delete(ctx, "s1", "mallory"); ok || err != nil {
		t.Errorf("another's Delete: %v, %v", ok, err)
	}
	if ok, err := s.Delete(ctx, "s1", "alice"); !ok || err != nil {
		t.Errorf("Delete: %v, %v", ok, err)
	}
	if ok, err := s.Delete(ctx, "s1", "alice"); ok || err != nil {
		t.Errorf("Delete again: %v, %v", ok, err)
	}
	// A key an earlier version kept in the store is dropped, once.
	dropper := s.(interface {
		DropLegacyKey(context.Context) (bool, error)
	})
	err = s.(*redisStore).client.with(ctx, func(cn *conn) error {
		replies, err := cn.do([]any{"SET", legacyHashKey, "ab"})
		if err == nil {
			err = firstError(replies)
		}
		return err
	})
	if err != nil {
		t.Fatalf("planting a legacy key: %v", err)
	}
	if dropped, err := dropper.DropLegacyKey(ctx); !dropped || err != nil {
		t.Errorf("DropLegacyKey: %v, %v; want the planted key dropped", dropped, err)
	}
	if dropped, err := dropper.DropLegacyKey(ctx); dropped || err != nil {
		t.Errorf("DropLegacyKey again: %v, %v; want nothing to drop", dropped, err)
	}
	// Concurrent saves of one record by its owner all succeed or, after
	// the retries, report the conflict; none corrupts the record.
	errs := make(chan error, 8)
	for range 8 {
		go func() { errs <- s.Save(ctx, rec, time.Minute) }()
	}
	for range 8 {
		if err := <-errs; err != nil && !strings.Contains(err.Error(), "kept changing") {
			t.Errorf("concurrent Save: %v", err)
		}
	}
	if got, err := s.Load(ctx, "s1"); err != nil || got == nil || got.Principal != "alice" {
		t.Errorf("after concurrent saves: %+v, %v", got, err)
	}
}

// TestDown: a Redis that is not there fails fast, within the store timeout.
func TestDown(t *testing.T) {
	s, err := Open("redis://127.0.0.1:1/0")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := s.Ping(context.Background()); err == nil {
		t.Error("Ping of nothing succeeded")
	}
	if d := time.Since(start); d > 2*gateway.StoreTimeout {
		t.Errorf("took %v", d)
	}
}

func TestParseURL(t *testing.T) {
	o, err := parseURL("rediss://user:p%40ss@example.com:6380/2")
	if err != nil || o.addr != "example.com:6380" || o.username != "user" || o.password != "p@ss" || o.db != 2 || o.tls == nil || o.tls.ServerName != "example.com" {
		t.Errorf("%+v, %v", o, err)
	}
	if o, err := parseURL("redis://h"); err != nil || o.addr != "h:6379" || o.db != 0 || o.tls != nil {
		t.Errorf("%+v, %v", o, err)
	}
	for _, bad := range []string{"http://h", "redis://:secret@h/x", "redis://h/0?pool_size=3", "::"} {
		_, err := parseURL(bad)
		if err == nil {
			t.Errorf("%s: no error", bad)
		} else if strings.Contains(err.Error(), "secret") {
			t.Errorf("%s: the error shows the password: %v", bad, err)
		}
	}
}
