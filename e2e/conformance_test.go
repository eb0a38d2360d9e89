//go:build linux

package e2e

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"text/tabwriter"
	"time"
)

// Environment of the conformance test; ./scripts/test.sh installs Node 22 and
// @modelcontextprotocol/conformance into .cache/ and sets them.
const (
	envNode        = "MCP_HUB_NODE"        // a Node 22 binary
	envConformance = "MCP_HUB_CONFORMANCE" // .../@modelcontextprotocol/conformance/dist/index.js
	// envConformanceOut, if set, keeps the CLI's result folders there (CI
	// artifacts) instead of in a temporary directory.
	envConformanceOut = "MCP_HUB_CONFORMANCE_OUT"
	// envConformanceSummary, if set, names a file the test writes a short
	// per-variant summary to; ./scripts/test.sh prints it.
	envConformanceSummary = "MCP_HUB_CONFORMANCE_SUMMARY"

	specVersion = "2025-11-25"
	// scenarioStall is how long one scenario may run before the CLI is killed.
	// Directly against everything-server the whole suite takes ~2 s, so only
	// a hang gets anywhere near it.
	scenarioStall = 45 * time.Second
	// maxStalls bounds a badly broken hub to a few minutes: after that many
	// hung scenarios the rest of that variant is reported as not run.
	maxStalls = 3
)

// TestConformance runs the MCP conformance suite against go-sdk's
// everything-server directly and through the hub in several configurations,
// and fails if any check that passes directly does not pass through the hub
// (issue 2, acceptance 1; issue 3, acceptance 5).
func TestConformance(t *testing.T) {
	cli := conformanceCLIFromEnv(t)
	ev := everythingServer(t)

	directURL, _ := startEverythingHTTP(t, ev, "everything-direct")
	direct := cli.run(t, "direct", directURL, nil)
	if direct.passed() == 0 || direct.failed() > 0 {
		t.Fatalf("conformance directly against everything-server: %d passed, %d failed; expected all to pass "+
			"(go-sdk's everything-server passes 40 of 40 directly), so the environment is broken, not the hub.\nFailing: %v\nCLI output:\n%s",
			direct.passed(), direct.failed(), direct.failing(), direct.output.String())
	}
	t.Logf("direct: %d checks in %d scenarios, all pass", direct.passed(), len(direct.order))

	stdioServer := fmt.Sprintf("servers:\n  everything:\n    command: %s\n    prefix: \"\"\n", strconv.Quote(ev))
	variants := []struct {
		name, desc string
		// config returns the hub config; upstreamURL is set for HTTP variants.
		config   func(upstreamURL string) string
		httpUp   bool
		stdioExe string
		// redis starts a redis-server and appends session_store to the config.
		redis bool
		// sandbox needs bubblewrap (needBwrap).
		sandbox bool
	}{
		{
			name: "hub-stdio", desc: "hub over HTTP, upstream over stdio",
			config:   func(string) string { return stdioServer },
			stdioExe: ev,
		},
		{
			name: "hub-http", desc: "hub over HTTP, upstream over streamable HTTP",
			config: func(u string) string {
				return fmt.Sprintf("servers:\n  everything:\n    url: %s\n    prefix: \"\"\n", strconv.Quote(u))
			},
			httpUp: true,
		},
		{
			name: "hub-discovery-eager", desc: "discovery enabled, server eager (defer_loading: false), upstream over stdio",
			config: func(string) string {
				return "discovery:\n  enabled: true\n" + stdioServer + "    defer_loading: false\n"
			},
			stdioExe: ev,
		},
		{
			name: "hub-stdio-sandbox", desc: "upstream over stdio in a bubblewrap sandbox (sandbox: true)",
			config:   func(string) string { return stdioServer + "    sandbox: true\n" },
			stdioExe: ev,
			sandbox:  true,
		},
		{
			name: "hub-session-store", desc: "session_store on a real redis-server, upstream over stdio",
			config:   func(string) string { return stdioServer },
			stdioExe: ev,
			redis:    true,
		},
	}

	summary := []string{fmt.Sprintf("%-20s %3d/%d checks pass  everything-server directly over HTTP", "direct", direct.passed(), direct.total())}
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			line := fmt.Sprintf("%-20s   stopped before comparing (see the test log)  %s", v.name, v.desc)
			defer func() { summary = append(summary, line) }()
			if v.sandbox {
				needBwrap(t)
			}
			upstreamURL := ""
			if v.httpUp {
				upstreamURL, _ = startEverythingHTTP(t, ev, "everything-upstream")
			}
			cfg := v.config(upstreamURL)
			if v.redis {
				addr := freeAddr(t)
				startRedis(t, addr)
				cfg += "session_store: redis://" + addr + "/0\nhash_key: " + testHashKey + "\n"
			}
			hubURL, hub := startHub(t, v.name, cfg, v.stdioExe)
			res := cli.run(t, v.name, hubURL, direct.order)
			rows := diff(direct, res)
			var lost, extra []string
			for _, r := range rows {
				switch {
				case r.regression && r.direct == "SUCCESS":
					lost = append(lost, r.name())
				case r.regression:
					extra = append(extra, r.name())
				}
			}
			line = fmt.Sprintf("%-20s %3d/%d checks pass  %s", v.name, direct.passed()-len(lost), direct.passed(), v.desc)
			if len(lost)+len(extra) > 0 {
				line += "\n" + strings.Repeat(" ", 21) + "FAIL: " + strings.Join(append(lost, extra...), ", ")
			}
			if len(lost)+len(extra) == 0 {
				t.Logf("%s: all %d checks that pass directly pass through the hub", v.name, direct.passed())
				return
			}
			where := res.outDir
			if os.Getenv(envConformanceOut) == "" {
				where += " (removed after the test: set " + envConformanceOut + "=DIR to keep)"
			}
			also := ""
			if len(extra) > 0 {
				also = fmt.Sprintf(", and %d checks that do not exist directly fail through the hub", len(extra))
			}
			t.Errorf("%s (%s): %d of the %d checks that pass directly against everything-server do not pass through the hub%s.\n\n%s\n%s\nhub config:\n%s\nhub log (last lines):\n%s\n\nconformance results: %s",
				v.name, v.desc, len(lost), direct.passed(), also, table(rows), details(rows, res), cfg, hub.logTail(80), where)
		})
	}
	t.Log("conformance summary:\n" + strings.Join(summary, "\n"))
	if path := os.Getenv(envConformanceSummary); path != "" {
		if err := os.WriteFile(path, []byte(strings.Join(summary, "\n")+"\n"), 0o644); err != nil {
			t.Errorf("writing %s: %v", envConformanceSummary, err)
		}
	}
}

type conformanceCLI struct {
	node, script string
	spec         string // --spec-version; "" is specVersion
	suite        string // --suite; "" is the CLI's default, the active suite
	scenario     string // --scenario: that one only; "" for the whole suite
}

func (cli conformanceCLI) specVersion() string {
	if cli.spec != "" {
		return cli.spec
	}
	return specVersion
}

func conformanceCLIFromEnv(t *testing.T) conformanceCLI {
	cli := conformanceCLI{node: os.Getenv(envNode), script: os.Getenv(envConformance)}
	if cli.node == "" || cli.script == "" {
		t.Skipf("%s and %s are not set: run ./scripts/test.sh, which installs Node 22 and @modelcontextprotocol/conformance into .cache/ and sets them",
			envNode, envConformance)
	}
	for _, p := range []string{cli.node, cli.script} {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("%s=%q, %s=%q: %v (rerun ./scripts/test.sh to reinstall)", envNode, cli.node, envConformance, cli.script, err)
		}
	}
	return cli
}

// check is one entry of a scenario's checks.json as the CLI writes it.
type check struct {
	ID           string          `json:"id"`
	Description  string          `json:"description"`
	Status       string          `json:"status"` // SUCCESS, FAILURE, WARNING, SKIPPED, INFO
	ErrorMessage string          `json:"errorMessage"`
	Details      json.RawMessage `json:"details"`
}

type suiteRun struct {
	label  string
	order  []string           // scenarios in the order they started
	checks map[string][]check // by scenario
	notes  map[string]string  // by scenario: why it has no checks.json
	output strings.Builder    // CLI stdout and stderr, all invocations
	outDir string
}

func (r *suiteRun) count(status string) (n int) {
	for _, cs := range r.checks {
		for _, c := range cs {
			if c.Status == status {
				n++
			}
		}
	}
	return n
}

func (r *suiteRun) passed() int { return r.count("SUCCESS") }
func (r *suiteRun) failed() int { return r.count("FAILURE") }
func (r *suiteRun) total() int  { return r.passed() + r.failed() }

func (r *suiteRun) failing() (ids []string) {
	for _, s := range r.order {
		for _, c := range r.checks[s] {
			if c.Status == "FAILURE" {
				ids = append(ids, s+"/"+c.ID)
			}
		}
	}
	return ids
}

func (r *suiteRun) status(scenario, id string) string {
	for _, c := range r.checks[scenario] {
		if c.ID == id {
			return c.Status
		}
	}
	return "MISSING"
}

var (
	// The CLI prints this line for every scenario it starts, in suite and in
	// single-scenario mode.
	startedRE = regexp.MustCompile(`^Running client scenario '([^']+)' against server`)
	// Result folders are named server-<scenario>-<ISO time with : and . as ->.
	resultDirRE = regexp.MustCompile(`^server-(.+)-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$`)
)

// run runs the active suite for cli's spec version against url. With expected set
// (the direct run's scenarios), scenarios a hung run never reached are run one
// by one, so a single hang does not hide the results of the rest.
func (cli conformanceCLI) run(t *testing.T, label, url string, expected []string) *suiteRun {
	t.Helper()
	outDir := filepath.Join(t.TempDir(), label)
	if keep := os.Getenv(envConformanceOut); keep != "" {
		outDir = filepath.Join(keep, label)
		os.RemoveAll(outDir)
	}
	r := &suiteRun{label: label, checks: map[string][]check{}, notes: map[string]string{}, outDir: outDir}
	base := []string{cli.script, "server", "--url", url, "--spec-version", cli.specVersion(), "-o", outDir}
	if cli.suite != "" {
		base = append(base, "--suite", cli.suite)
	}
	if cli.scenario != "" {
		base = append(base, "--scenario", cli.scenario)
	}

	stalls := 0
	stalled := cli.invoke(t, r, base)
	if stalled != "" {
		stalls++
		for _, s := range expected {
			if slices.Contains(r.order, s) {
				continue
			}
			if stalls >= maxStalls {
				r.notes[s] = fmt.Sprintf("not run: gave up after %d scenarios hung", stalls)
				continue
			}
			if cli.invoke(t, r, append(slices.Clone(base), "--scenario", s)) != "" {
				stalls++
			}
		}
	}
	if err := r.load(); err != nil {
		t.Fatalf("reading conformance results of %s in %s: %v\nCLI output:\n%s", label, outDir, err, r.output.String())
	}
	return r
}

// invoke runs the CLI once, killing it when a scenario makes no progress for
// scenarioStall; it returns the scenario it killed, if any.
func (cli conformanceCLI) invoke(t *testing.T, r *suiteRun, args []string) (stalled string) {
	t.Helper()
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	cmd := exec.Command(cli.node, args...)
	cmd.Stdout, cmd.Stderr = pw, pw
	cmd.Env = append(os.Environ(), "NO_COLOR=1", "FORCE_COLOR=0")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		pw.Close()
		t.Fatalf("starting conformance CLI %s %v: %v", cli.node, args, err)
	}
	pw.Close()
	kill := func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	defer kill() // nothing of the CLI outlives the invocation

	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	current := ""
	timer := time.NewTimer(scenarioStall)
	defer timer.Stop()
	for done := false; !done; {
		select {
		case line, ok := <-lines:
			if !ok {
				done = true
				break
			}
			r.output.WriteString(line + "\n")
			if m := startedRE.FindStringSubmatch(line); m != nil {
				current = m[1]
				r.order = append(r.order, current)
				timer.Reset(scenarioStall)
			}
		case <-timer.C:
			stalled = current
			if stalled == "" {
				stalled = "(before the first scenario)"
			}
			if current != "" {
				r.notes[current] = fmt.Sprintf("killed: no progress for %v (hung)", scenarioStall)
			}
			fmt.Fprintf(&r.output, "[mcp-hub test] scenario %s made no progress for %v: killing the CLI\n", stalled, scenarioStall)
			kill()
		}
	}
	// The exit status says only whether some check failed; checks.json has the detail.
	_ = cmd.Wait()
	return stalled
}

// load reads every scenario's checks.json. A scenario that started but wrote
// none (it threw, or was killed) gets one synthetic failing check.
func (r *suiteRun) load() error {
	entries, err := os.ReadDir(r.outDir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	for _, e := range entries {
		m := resultDirRE.FindStringSubmatch(e.Name())
		if !e.IsDir() || m == nil {
			continue
		}
		data, err := os.ReadFile(filepath.Join(r.outDir, e.Name(), "checks.json"))
		if errors.Is(err, os.ErrNotExist) {
			continue
		} else if err != nil {
			return err
		}
		var cs []check
		if err := json.Unmarshal(data, &cs); err != nil {
			return fmt.Errorf("%s/checks.json: %v", e.Name(), err)
		}
		r.checks[m[1]] = append(r.checks[m[1]], cs...)
	}
	for _, s := range r.order {
		if _, ok := r.checks[s]; ok {
			continue
		}
		msg := "scenario wrote no results"
		if n := r.notes[s]; n != "" {
			msg = n
		}
		if line := failedToRunLine(r.output.String(), s); line != "" {
			msg += ": " + line
		}
		r.checks[s] = []check{{ID: s, Status: "FAILURE", ErrorMessage: msg}}
	}
	return nil
}

// failedToRunLine returns what the CLI printed when a scenario threw.
func failedToRunLine(output, scenario string) string {
	prefix := "Failed to run scenario " + scenario + ":"
	for line := range strings.Lines(output) {
		if strings.HasPrefix(line, prefix) {
			return strings.TrimSpace(strings.TrimPrefix(line, prefix))
		}
	}
	return ""
}

type diffRow struct {
	scenario, id, direct, hub string
	// regression: the check passes directly and not through the hub, or
	// fails through the hub while it does not exist directly.
	regression bool
}

// diff lists every check whose status differs between the direct run and a
// hub run, in the direct run's scenario order.
func diff(direct, hub *suiteRun) (rows []diffRow) {
	scenarios := slices.Clone(direct.order)
	for _, s := range hub.order {
		if !slices.Contains(scenarios, s) {
			scenarios = append(scenarios, s)
		}
	}
	for _, s := range scenarios {
		var ids []string
		for _, c := range direct.checks[s] {
			ids = append(ids, c.ID)
		}
		for _, c := range hub.checks[s] {
			if !slices.Contains(ids, c.ID) {
				ids = append(ids, c.ID)
			}
		}
		for _, id := range ids {
			d, h := direct.status(s, id), hub.status(s, id)
			if d == h {
				continue
			}
			if h == "MISSING" && hub.notes[s] != "" && !slices.Contains(hub.order, s) {
				h = "NOT RUN"
			}
			rows = append(rows, diffRow{
				scenario: s, id: id, direct: d, hub: h,
				regression: (d == "SUCCESS" && h != "SUCCESS") || (d == "MISSING" && h == "FAILURE"),
			})
		}
	}
	return rows
}

// name is scenario/check, or just the scenario when its one check bears its name.
func (r diffRow) name() string {
	if r.id == r.scenario {
		return r.scenario
	}
	return r.scenario + "/" + r.id
}

func table(rows []diffRow) string {
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "SCENARIO\tCHECK\tDIRECT\tHUB\t")
	for _, r := range rows {
		mark := ""
		if !r.regression {
			mark = "(not a regression)"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", r.scenario, r.id, r.direct, r.hub, mark)
	}
	w.Flush()
	return b.String()
}

// details gives, for each regressed check, what the CLI recorded through the
// hub: its error message and details.
func details(rows []diffRow, hub *suiteRun) string {
	var b strings.Builder
	for _, r := range rows {
		if !r.regression {
			continue
		}
		fmt.Fprintf(&b, "--- %s / %s through the hub: %s\n", r.scenario, r.id, r.hub)
		for _, c := range hub.checks[r.scenario] {
			if c.ID != r.id {
				continue
			}
			if c.Description != "" {
				fmt.Fprintf(&b, "    check: %s\n", c.Description)
			}
			if msg := strings.TrimSpace(c.ErrorMessage); msg != "" {
				fmt.Fprintf(&b, "    error: %s\n", msg)
			}
			if len(c.Details) > 0 && string(c.Details) != "null" {
				d := string(c.Details)
				if len(d) > 1500 {
					d = d[:1500] + "...(cut)"
				}
				fmt.Fprintf(&b, "    details: %s\n", d)
			}
		}
		if n := hub.notes[r.scenario]; n != "" && r.hub != "FAILURE" {
			fmt.Fprintf(&b, "    note: %s\n", n)
		}
	}
	return b.String()
}
