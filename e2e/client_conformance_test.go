//go:build linux

package e2e

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The conformance suite's client scenarios, with mcp-hub's upstream side as
// the client under test (issue 12, acceptance 1 and 2):
// scripts/conformance-client.sh turns the scenario's server into the only
// upstream of a config and drives the real `mcp-hub login` and `mcp-hub
// call` (this test binary standing in for mcp-hub).

// envClientConformanceSummary, if set, names a file the test writes its
// summary to; ./scripts/test.sh prints it.
const envClientConformanceSummary = "MCP_HUB_CLIENT_CONFORMANCE_SUMMARY"

// nonAuthClientScenarios pass through the hub as they pass directly.
var nonAuthClientScenarios = []string{"initialize", "tools_call", "elicitation-sep1034-client-defaults", "sse-retry"}

// viaServeScenarios run once more through `mcp-hub serve --http` with
// everything-client as a real MCP client in front (the script's
// MCP_HUB_CONFORMANCE_SERVE_CLIENT): a step-up made by a running serve,
// and a resumed stream.
var viaServeScenarios = []string{"auth/scope-step-up", "sse-retry"}

// clientScenarioTimeout bounds one scenario's client (login and call, each
// a hub process under -race, 14 scenarios at once on two cores).
const clientScenarioTimeout = 120 * time.Second

// TestClientConformance runs the client auth suite (spec 2025-11-25)
// through go-sdk's own everything-client, the reference, and through the
// hub, and fails if a check that passes for the reference does not pass
// through the hub, or if any check fails through the hub; then the four
// non-auth client scenarios, all of whose checks must pass.
func TestClientConformance(t *testing.T) {
	cli := conformanceCLIFromEnv(t)
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	refClient := everythingClient(t)
	hubBin := hubWrapper(t)

	start := time.Now()
	ref := cli.clientRun(t, "reference", refClient, nil, "--suite", "auth")
	if ref.passed == 0 || ref.failed > 0 {
		t.Fatalf("go-sdk's everything-client through the auth suite: %d passed, %d failed; expected all to pass, so the environment is broken, not the hub.\n%s",
			ref.passed, ref.failed, ref.output)
	}
	refTime := time.Since(start)

	start = time.Now()
	script := filepath.Join(root, "scripts", "conformance-client.sh")
	env := []string{"MCP_HUB_BIN=" + hubBin}
	hub := cli.clientRun(t, "hub", script, env, "--suite", "auth")
	hubTime := time.Since(start)

	var problems []string
	for _, sc := range ref.order {
		for _, id := range ref.succeeded(sc) {
			if !slices.Contains(hub.succeeded(sc), id) {
				problems = append(problems, fmt.Sprintf("%s: check %s passes for everything-client, not through the hub", sc, id))
			}
		}
	}
	problems = append(problems, hub.failures()...)
	summary := []string{
		fmt.Sprintf("%-22s %3d/%d checks pass (%d failed) in %d scenarios, %.1fs", "auth, everything-client", ref.passed, ref.passed+ref.failed, ref.failed, len(ref.order), refTime.Seconds()),
		fmt.Sprintf("%-22s %3d/%d checks pass (%d failed) in %d scenarios, %.1fs; every check everything-client passes: %s",
			"auth, through the hub", hub.passed, hub.passed+hub.failed, hub.failed, len(hub.order), hubTime.Seconds(), yesNo(len(problems) == 0)),
	}

	// These are independent: run them at once.
	type extra struct{ scenario, label string }
	var extras []extra
	for _, sc := range nonAuthClientScenarios {
		extras = append(extras, extra{sc, sc})
	}
	for _, sc := range viaServeScenarios {
		extras = append(extras, extra{sc, sc + " via serve"})
	}
	runs := make([]*clientRun, len(extras))
	took := make([]time.Duration, len(extras))
	var wg sync.WaitGroup
	for i, x := range extras {
		wg.Go(func() {
			start := time.Now()
			env := env
			if x.label != x.scenario {
				env = append(slices.Clone(env), "MCP_HUB_CONFORMANCE_SERVE_CLIENT="+refClient)
			}
			runs[i] = cli.clientRun(t, fmt.Sprintf("hub-%d", i), script, env, "--scenario", x.scenario)
			took[i] = time.Since(start)
		})
	}
	wg.Wait()
	for i, x := range extras {
		r := runs[i]
		if r.passed == 0 {
			problems = append(problems, fmt.Sprintf("%s: no check passed through the hub", x.label))
		}
		for _, f := range r.failures() {
			problems = append(problems, x.label+": "+f)
		}
		summary = append(summary, fmt.Sprintf("%-22s %3d/%d checks pass, %.1fs", x.label, r.passed, r.passed+r.failed, took[i].Seconds()))
		hub.output += r.output
	}
	t.Log("client conformance:\n" + strings.Join(summary, "\n"))
	if path := os.Getenv(envClientConformanceSummary); path != "" {
		if err := os.WriteFile(path, []byte(strings.Join(summary, "\n")+"\n"), 0o644); err != nil {
			t.Error(err)
		}
	}
	if len(problems) > 0 {
		t.Errorf("client conformance through the hub:\n  %s\n\nCLI output:\n%s", strings.Join(problems, "\n  "), hub.output)
	}
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "NO"
}

// everythingClient is go-sdk's conformance client, built as published.
func everythingClient(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	path, err := buildPublishedSDK(dir, sdkModule+"/conformance/everything-client")
	if err != nil {
		t.Fatalf("building everything-client: %v", err)
	}
	return path
}

// hubWrapper is an executable that runs this test binary as mcp-hub.
func hubWrapper(t *testing.T) string {
	t.Helper()
	self, err := hubBinary()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "mcp-hub")
	script := fmt.Sprintf("#!/bin/sh\n%s=1 exec %q \"$@\"\n", envAsMain, self)
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// clientRun is one invocation of `conformance client`.
type clientRun struct {
	order          []string           // scenarios with results
	checks         map[string][]check // by scenario
	passed, failed int
	output         string
}

func (r *clientRun) succeeded(scenario string) []string {
	var ids []string
	for _, c := range r.checks[scenario] {
		if c.Status == "SUCCESS" && !slices.Contains(ids, c.ID) {
			ids = append(ids, c.ID)
		}
	}
	return ids
}

func (r *clientRun) failures() []string {
	var out []string
	for _, sc := range r.order {
		for _, c := range r.checks[sc] {
			if c.Status == "FAILURE" {
				out = append(out, fmt.Sprintf("%s: check %s fails: %s %s", sc, c.ID, c.Description, c.ErrorMessage))
			}
		}
	}
	return out
}

// clientResultDirRE: results land in <out>/<scenario>-<ISO time>/checks.json,
// the scenario's slashes making folders.
var clientResultDirRE = regexp.MustCompile(`^(.+)-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$`)

func (cli conformanceCLI) clientRun(t *testing.T, label, command string, env []string, args ...string) *clientRun {
	t.Helper()
	return cli.clientRunArgs(t, label, command, env, append([]string{"--spec-version", specVersion}, args...)...)
}

// clientRunArgs is clientRun with the CLI's arguments after --command
// given whole (the spec version among them).
func (cli conformanceCLI) clientRunArgs(t *testing.T, label, command string, env []string, args ...string) *clientRun {
	t.Helper()
	out := filepath.Join(t.TempDir(), label)
	argv := append([]string{cli.script, "client", "--command", command,
		"--timeout", fmt.Sprint(clientScenarioTimeout.Milliseconds()), "-o", out}, args...)
	cmd := exec.Command(cli.node, argv...)
	cmd.Env = append(append(os.Environ(), env...), "NO_COLOR=1", "FORCE_COLOR=0")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	done := make(chan struct{})
	var output []byte
	go func() {
		output, _ = cmd.CombinedOutput() // the exit status only says whether a check failed
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(3 * clientScenarioTimeout):
		if cmd.Process != nil {
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		}
		<-done
		t.Errorf("conformance client %s hung; killed", label)
	}
	r := &clientRun{checks: map[string][]check{}, output: string(output)}
	filepath.WalkDir(out, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() != "checks.json" {
			return nil
		}
		rel, _ := filepath.Rel(out, filepath.Dir(path))
		m := clientResultDirRE.FindStringSubmatch(filepath.ToSlash(rel))
		if m == nil {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return nil
		}
		var cs []check
		if json.Unmarshal(data, &cs) != nil {
			t.Errorf("%s: not JSON", path)
			return nil
		}
		r.checks[m[1]] = append(r.checks[m[1]], cs...)
		return nil
	})
	for sc, cs := range r.checks {
		r.order = append(r.order, sc)
		for _, c := range cs {
			switch c.Status {
			case "SUCCESS":
				r.passed++
			case "FAILURE":
				r.failed++
			}
		}
	}
	sort.Strings(r.order)
	return r
}
