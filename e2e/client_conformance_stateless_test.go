//go:build linux

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// The conformance suite's client scenarios of MCP 2026-07-28 (the stateless
// revision), with mcp-hub's upstream side as the client: every scenario the
// revision requires (`--requirements 2026-07-28`: the auth suite, the
// authorization scenarios new in 2026-07-28, and the non-auth scenarios:
// tools_call, request-metadata, sep-2322-client-request-state, the HTTP
// header and JSON Schema ones), each through `mcp-hub login` (auth
// scenarios) and `mcp-hub serve --http` with go-sdk's everything-client in
// front, so that the scenario's own client logic (list, call every tool,
// read a resource, get a prompt, answer an elicitation) runs through the
// hub. The suite's version with these scenarios is a separate install from
// the one the 2025-11-25 tests use (scripts/test.sh, .cache/npm-next).

// envClientConformanceNext names that install's dist/index.js.
const envClientConformanceNext = "MCP_HUB_CONFORMANCE_NEXT"

// envClientConformanceNextSummary, if set, names a file the test writes its
// summary to; ./scripts/test.sh prints it.
const envClientConformanceNextSummary = "MCP_HUB_CLIENT_CONFORMANCE_NEXT_SUMMARY"

// statelessRevision is the revision these scenarios are run at.
const statelessRevision = "2026-07-28"

func clientConformanceNextCLI(t *testing.T) conformanceCLI {
	t.Helper()
	cli := conformanceCLI{node: os.Getenv(envNode), script: os.Getenv(envClientConformanceNext)}
	if cli.node == "" || cli.script == "" {
		t.Skipf("%s and %s are not set: run ./scripts/test.sh, which installs Node 22 and @modelcontextprotocol/conformance's next release into .cache/ and sets them",
			envNode, envClientConformanceNext)
	}
	for _, p := range []string{cli.node, cli.script} {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("%s=%q, %s=%q: %v (rerun ./scripts/test.sh to reinstall)", envNode, cli.node, envClientConformanceNext, cli.script, err)
		}
	}
	return cli
}

// TestClientConformanceStateless runs every client scenario 2026-07-28
// requires through go-sdk's everything-client directly (the reference) and
// through the hub, and fails if a check the reference passes does not pass
// through the hub, or if a check fails through the hub in a scenario the
// reference passes whole. Scenarios the reference fails too are the
// extensions go-sdk does not implement (client credentials, DPoP,
// enterprise-managed authorization, workload identity; the CLI does not
// score them for 2026-07-28): there only the first rule applies.
func TestClientConformanceStateless(t *testing.T) {
	cli := clientConformanceNextCLI(t)
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	refClient := everythingClient(t)
	hubBin := hubWrapper(t)
	args := []string{"--requirements", statelessRevision}

	start := time.Now()
	ref := cli.clientRunArgs(t, "reference", refClient, nil, args...)
	refTime := time.Since(start)
	if ref.passed == 0 {
		t.Fatalf("go-sdk's everything-client: no check passed, so the environment is broken, not the hub.\n%s", ref.output)
	}

	start = time.Now()
	script := filepath.Join(root, "scripts", "conformance-client.sh")
	env := []string{"MCP_HUB_BIN=" + hubBin, "MCP_HUB_CONFORMANCE_SERVE_CLIENT=" + refClient}
	hub := cli.clientRunArgs(t, "hub", script, env, args...)
	hubTime := time.Since(start)

	var problems []string
	var whole, partial []string // scenarios the reference passes whole, and the others
	for _, sc := range ref.order {
		if failedIn(ref, sc) == 0 {
			whole = append(whole, sc)
		} else {
			partial = append(partial, sc)
		}
		for _, id := range ref.succeeded(sc) {
			if !slices.Contains(hub.succeeded(sc), id) {
				problems = append(problems, fmt.Sprintf("%s: check %s passes for everything-client, not through the hub", sc, id))
			}
		}
	}
	for _, f := range hub.failures() {
		if sc, _, _ := strings.Cut(f, ": "); !slices.Contains(partial, sc) {
			problems = append(problems, f)
		}
	}
	for _, sc := range whole {
		if len(hub.checks[sc]) == 0 {
			problems = append(problems, sc+": no result through the hub")
		}
	}
	count := func(r *clientRun, scs []string) (passed, failed int) {
		for _, sc := range scs {
			passed += len(r.succeededAll(sc))
			failed += failedIn(r, sc)
		}
		return
	}
	rp, rf := count(ref, whole)
	hp, hf := count(hub, whole)
	xp, xf := count(ref, partial)
	hxp, hxf := count(hub, partial)
	summary := []string{
		fmt.Sprintf("%-40s %3d passed, %d failed in %d scenarios, %.1fs", "required scenarios, everything-client", rp, rf, len(whole), refTime.Seconds()),
		fmt.Sprintf("%-40s %3d passed, %d failed in %d scenarios, %.1fs; every check everything-client passes: %s",
			"required scenarios, through the hub", hp, hf, len(whole), hubTime.Seconds(), yesNo(len(problems) == 0)),
		fmt.Sprintf("%-40s everything-client %d passed, %d failed; through the hub %d passed, %d failed (%s)",
			"extensions go-sdk lacks (not scored)", xp, xf, hxp, hxf, strings.Join(partial, ", ")),
	}
	t.Log("client conformance at " + statelessRevision + ":\n" + strings.Join(summary, "\n"))
	if path := os.Getenv(envClientConformanceNextSummary); path != "" {
		if err := os.WriteFile(path, []byte(strings.Join(summary, "\n")+"\n"), 0o644); err != nil {
			t.Error(err)
		}
	}
	if len(problems) > 0 {
		t.Errorf("client conformance at %s through the hub:\n  %s\n\nCLI output:\n%s", statelessRevision, strings.Join(problems, "\n  "), hub.output)
	}
}

// failedIn counts the failed checks of a scenario.
func failedIn(r *clientRun, scenario string) (n int) {
	for _, c := range r.checks[scenario] {
		if c.Status == "FAILURE" {
			n++
		}
	}
	return n
}

// succeededAll lists a scenario's passed checks, repeats included.
func (r *clientRun) succeededAll(scenario string) (out []string) {
	for _, c := range r.checks[scenario] {
		if c.Status == "SUCCESS" {
			out = append(out, c.ID)
		}
	}
	return out
}
