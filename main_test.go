package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"toolkit/testsupport/fakelsp"

	"toolkit/internal/confine"
)

var update = flag.Bool("u", false, "update the scripts' expected output")

func TestMain(m *testing.M) {
	if os.Getenv("GORACE") == "" {
		// A binary built with -race sleeps 1 s before it exits, by default:
		// every toolkit in a script would.
		os.Setenv("GORACE", "atexit_sleep_ms=0")
	}
	cmds := map[string]func(){"toolkit": main, "test-server": testServer, "test-client": testClient, "fakelsp": fakelsp.Main}
	for _, name := range links() {
		cmds[name] = main
	}
	testscript.Main(isolated{m}, cmds)
}

// isolated runs the tests with a state directory of their own, removed
// after them: the toolkit processes they start keep their spills, jobs and
// notes there, not in the state of whoever runs the tests (50 spills of
// 10 MiB from TestManyAtOnce alone). A test that needs another sets its
// own; a toolkit a test starts inherits it.
type isolated struct{ m *testing.M }

func (i isolated) Run() int {
	if os.Getenv("TOOLKIT_STATE") != "" {
		return i.m.Run()
	}
	dir, err := os.MkdirTemp("", "toolkit-test-state-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	os.Setenv("TOOLKIT_STATE", filepath.Join(dir, "state"))
	return i.m.Run()
}

func TestScript(t *testing.T) {
	t.Parallel()
	testscript.Run(t, scriptParams("testdata/script"))
}

func scriptParams(dir string) testscript.Params {
	return testscript.Params{
		Dir:                 dir,
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		UpdateScripts:       *update,
		Condition: func(cond string) (bool, error) {
			switch cond {
			case "root":
				return os.Geteuid() == 0, nil
			case "proc":
				_, err := os.Stat("/proc/self/stat")
				return err == nil, nil
			case "landlock":
				// Files and signals: ABI 6 and later.
				return confine.ABI() >= 6, nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
		Setup: func(env *testscript.Env) error {
			// Processes started by a script are killed when it ends, whatever
			// it did: a failed script must not leave helpers behind.
			work := env.WorkDir
			env.Defer(func() { killMarked(work) })
			// Each script has jobs of its own.
			env.Setenv("TOOLKIT_STATE", work+"/state")
			// And keeps no history, unless it asks (history's own): a
			// background capture of a tree's baseline would outlive the
			// scripts that check nothing is left.
			env.Setenv("TOOLKIT_HISTORY", "off")
			// Nor checks what a call changed, unless it asks (diagnostics'
			// own): the scripts' files are seldom the code they are named.
			env.Setenv("TOOLKIT_DIAGNOSTICS_WAIT", "0")
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"status":      cmdStatus,
			"waitfor":     cmdWaitFor,
			"noproc":      cmdNoProc,
			"running":     cmdRunning,
			"killall":     func(ts *testscript.TestScript, neg bool, args []string) { killMarked(ts.Getenv("WORK")) },
			"sizeof":      cmdSizeOf,
			"signal":      cmdSignal,
			"mcp-session": cmdMCPSession,
			"lines":       cmdLines,
			"mkmedia":     cmdMkMedia,
			"listen":      cmdListen,
			"picture":     cmdPicture,
		},
	}
}

// status N prog args... runs prog and checks that it exits with status N.
func cmdStatus(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: status N prog [args...]")
	}
	want, err := strconv.Atoi(args[0])
	ts.Check(err)
	err = ts.Exec(args[1], args[2:]...)
	got := 0
	if err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("%s: %v", args[1], err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("%s exited %d, want %d", args[1], got, want)
	}
}

// waitfor FILE [REGEXP] waits, for at most 20 s, until a file matching the
// glob FILE exists and holds a match for REGEXP.
func cmdWaitFor(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 1 || len(args) > 2 {
		ts.Fatalf("usage: waitfor FILE [REGEXP]")
	}
	var re *regexp.Regexp
	if len(args) == 2 {
		re = regexp.MustCompile(args[1])
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		var b []byte
		names, _ := filepath.Glob(ts.MkAbs(args[0]))
		for _, name := range names {
			if b, _ = os.ReadFile(name); re == nil || re.Match(b) {
				return
			}
		}
		if time.Now().After(deadline) {
			ts.Fatalf("%s: not there after 20 s (holds %q)", args[0], b)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// marked returns the live processes whose command line holds marker.
func marked(marker string) []int {
	var out []int
	names, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, name := range names {
		b, err := os.ReadFile(name)
		if err != nil || !holdsPath(b, marker) {
			continue
		}
		pid, _ := strconv.Atoi(strings.Split(name, "/")[2])
		if pid == os.Getpid() {
			continue
		}
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		if i := bytes.LastIndexByte(stat, ')'); i > 0 && i+2 < len(stat) && (stat[i+2] == 'Z' || stat[i+2] == 'X') {
			continue
		}
		out = append(out, pid)
	}
	return out
}

// holdsPath reports whether a command line holds the path marker whole:
// not as the start of a longer name. Scripts run at once, and one's work
// directory ($TMP/script-call) is the start of another's
// ($TMP/script-call_job_kept): the end of the first must not stop the
// second's processes.
func holdsPath(cmdline []byte, marker string) bool {
	for b := cmdline; ; {
		i := bytes.Index(b, []byte(marker))
		if i < 0 {
			return false
		}
		end := i + len(marker)
		if end == len(b) || !nameByte(b[end]) {
			return true
		}
		b = b[i+1:]
	}
}

// nameByte reports whether c may go on a name: a letter, a digit, _, - or .
func nameByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-' || c == '.'
}

func killMarked(marker string) {
	for range 100 {
		pids := marked(marker)
		if len(pids) == 0 {
			return
		}
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// noproc [MARKER] checks that no live process has MARKER (default: $WORK)
// in its command line. A stopped process may take a moment to disappear
// (its parent reaps it): this waits up to 5 s for that, and fails after.
func cmdNoProc(ts *testscript.TestScript, neg bool, args []string) {
	marker := ts.Getenv("WORK")
	if len(args) > 0 {
		marker = args[0]
	}
	if neg {
		ts.Fatalf("use running, not ! noproc")
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		pids := marked(marker)
		if len(pids) == 0 {
			return
		}
		if time.Now().After(deadline) {
			var desc []string
			for _, pid := range pids {
				cmd, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
				desc = append(desc, fmt.Sprintf("%d %q", pid, bytes.ReplaceAll(cmd, []byte{0}, []byte{' '})))
			}
			ts.Fatalf("processes left running: %s", strings.Join(desc, "; "))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// running N [MARKER] checks that exactly N live processes have MARKER
// (default: $WORK) in their command line.
func cmdRunning(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 1 {
		ts.Fatalf("usage: running N [MARKER]")
	}
	want, err := strconv.Atoi(args[0])
	ts.Check(err)
	marker := ts.Getenv("WORK")
	if len(args) > 1 {
		marker = args[1]
	}
	// A process being started (forked, not yet exec'd) or ending (not yet
	// reaped) is there only for a moment: the count must settle at N.
	deadline := time.Now().Add(5 * time.Second)
	for {
		got := len(marked(marker))
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			ts.Fatalf("%d processes running with %q, want %d", got, marker, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// sizeof FILE N checks that FILE holds exactly N bytes.
func cmdSizeOf(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: sizeof FILE N")
	}
	fi, err := os.Stat(ts.MkAbs(args[0]))
	ts.Check(err)
	want, err := strconv.ParseInt(args[1], 10, 64)
	ts.Check(err)
	if (fi.Size() == want) == neg {
		ts.Fatalf("%s holds %d bytes; want %s%d", args[0], fi.Size(), map[bool]string{true: "not ", false: ""}[neg], want)
	}
}

// lines stdout|stderr|FILE N checks the number of lines.
func cmdLines(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: lines stdout|stderr|FILE N")
	}
	var text string
	switch args[0] {
	case "stdout":
		text = ts.ReadFile("stdout")
	case "stderr":
		text = ts.ReadFile("stderr")
	default:
		text = ts.ReadFile(args[0])
	}
	want, err := strconv.Atoi(args[1])
	ts.Check(err)
	if got := strings.Count(text, "\n"); (got == want) == neg {
		ts.Fatalf("%s has %d lines; want %d", args[0], got, want)
	}
}

// signal NAME PIDFILE sends the signal NAME (TERM, INT, HUP, KILL) to the
// process whose pid PIDFILE holds.
func cmdSignal(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: signal NAME PIDFILE")
	}
	sig, ok := map[string]syscall.Signal{"TERM": syscall.SIGTERM, "INT": syscall.SIGINT, "HUP": syscall.SIGHUP, "KILL": syscall.SIGKILL}[args[0]]
	if !ok {
		ts.Fatalf("unknown signal %q", args[0])
	}
	pid, err := strconv.Atoi(strings.TrimSpace(ts.ReadFile(args[1])))
	ts.Check(err)
	ts.Check(syscall.Kill(pid, sig))
}

// mcp-session [FLAG...] FILE runs toolkit mcp as a subprocess and speaks
// JSON-RPC to it over pipes, as FILE says, a line at a time:
//
//	> MESSAGE   send it, wait for the response with its id, print that
//	! LINE      send it as it is, wait for an error with a null id, print that
//	& MESSAGE   send it, wait for nothing (a call to cancel later)
//	wait PATH   wait until the file exists
//	expect TEXT wait for a message holding TEXT, print it
//	signal NAME send the server the signal (TERM, INT, HUP), stdin still open
//
// At the end it closes stdin, unless a signal was sent, and prints how the
// server ended ("[exit 0]").
func cmdMCPSession(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 1 {
		ts.Fatalf("usage: mcp-session [FLAG...] FILE")
	}
	exe, err := exec.LookPath("toolkit")
	ts.Check(err)
	cmd := exec.Command(exe, append([]string{"mcp"}, args[:len(args)-1]...)...)
	cmd.Dir = ts.Getenv("WORK")
	var env []string
	for _, k := range []string{"PATH", "HOME", "TMPDIR", "WORK", "GORACE", "TOOLKIT_STATE", "TOOLKIT_HISTORY", "TOOLKIT_HISTORY_KEEPER", "TOOLKIT_DIAGNOSTICS_WAIT", "TOOLKIT_LSP"} {
		env = append(env, k+"="+ts.Getenv(k))
	}
	cmd.Env = env
	stdin, err := cmd.StdinPipe()
	ts.Check(err)
	stdout, err := cmd.StdoutPipe()
	ts.Check(err)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	ts.Check(cmd.Start())
	lines := make(chan []byte, 100)
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 80<<20)
		for sc.Scan() {
			lines <- append([]byte(nil), sc.Bytes()...)
		}
		close(lines)
	}()
	// waitFor prints the first message that match takes, what naming it
	// for a failure.
	waitFor := func(what string, match func(l []byte) bool) {
		deadline := time.After(20 * time.Second)
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					ts.Fatalf("the server ended while waiting for %s: %s", what, stderr.String())
				}
				if match(l) {
					fmt.Fprintf(ts.Stdout(), "%s\n", l)
					return
				}
			case <-deadline:
				ts.Fatalf("no %s after 20 s", what)
			}
		}
	}
	await := func(id string) {
		waitFor("response with id "+id, func(l []byte) bool {
			var m struct {
				ID json.RawMessage `json:"id"`
			}
			return json.Unmarshal(l, &m) == nil && string(m.ID) == id
		})
	}
	expect := func(text string) {
		waitFor("message holding "+text, func(l []byte) bool { return bytes.Contains(l, []byte(text)) })
	}
	signalled := false
	for _, line := range strings.Split(ts.ReadFile(args[len(args)-1]), "\n") {
		op, rest, _ := strings.Cut(line, " ")
		switch op {
		case "", "#":
			continue
		case ">", "&":
			var m struct {
				ID json.RawMessage `json:"id"`
			}
			ts.Check(json.Unmarshal([]byte(rest), &m))
			_, err := io.WriteString(stdin, rest+"\n")
			ts.Check(err)
			if op == ">" && m.ID != nil {
				await(string(m.ID))
			}
		case "!":
			_, err := io.WriteString(stdin, rest+"\n")
			ts.Check(err)
			await("null")
		case "wait":
			cmdWaitFor(ts, false, []string{rest})
		case "expect":
			expect(rest)
		case "signal":
			sig, ok := map[string]syscall.Signal{"TERM": syscall.SIGTERM, "INT": syscall.SIGINT, "HUP": syscall.SIGHUP}[rest]
			if !ok {
				ts.Fatalf("mcp-session: unknown signal %q", rest)
			}
			ts.Check(cmd.Process.Signal(sig))
			signalled = true
		default:
			ts.Fatalf("mcp-session: unknown line %q", line)
		}
	}
	if !signalled {
		stdin.Close()
	}
	done := make(chan error, 1)
	go func() {
		for range lines {
		}
		done <- cmd.Wait()
	}()
	select {
	case err := <-done:
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			ts.Fatalf("mcp: %v", err)
		}
		fmt.Fprintf(ts.Stdout(), "[exit %d]\n", code)
		if stderr.Len() > 0 {
			fmt.Fprintf(ts.Stderr(), "%s", stderr.String())
		}
	case <-time.After(20 * time.Second):
		_ = cmd.Process.Kill()
		ts.Fatalf("the server did not end within 20 s of the end of its input or a signal")
	}
}

// TestHoldsPath: a script's work directory is found in a command line as a
// whole path, never as the start of another script's.
func TestHoldsPath(t *testing.T) {
	for cmdline, want := range map[string]bool{
		"toolkit\x00__keeper\x00/tmp/x/script-call/state/jobs/ab":  true,
		"/tmp/x/script-call/nap\x00300":                            true,
		"sh\x00-c\x00cd /tmp/x/script-call; ls":                    true,
		"/tmp/x/script-call":                                       true,
		"toolkit\x00__keeper\x00/tmp/x/script-call_job_kept/state": false,
		"/tmp/x/script-call.2/nap":                                 false,
		"/tmp/x/script-call_job_kept /tmp/x/script-call/nap":       true,
	} {
		if got := holdsPath([]byte(cmdline), "/tmp/x/script-call"); got != want {
			t.Errorf("%q: %v, want %v", cmdline, got, want)
		}
	}
}

// listen NAME listens on the abstract UNIX socket NAME until the script
// ends, taking each connection and closing it.
func cmdListen(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 || neg {
		ts.Fatalf("usage: listen NAME")
	}
	l, err := net.Listen("unix", "@"+args[0])
	ts.Check(err)
	ts.Defer(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
}
