package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpServer is a real toolkit mcp process and an SDK client connected to
// it, shutting down as the SDKs' stdio clients do: close stdin, SIGTERM 2 s
// later, SIGKILL 2 s after that.
type mcpServer struct {
	cmd    *exec.Cmd
	cs     *sdk.ClientSession
	stderr *bytes.Buffer
	dir    string // $WORK-like: the server's cwd, where the helpers' marker lives
	nap    string // a link to sleep whose path marks the processes of this test
}

func startMCP(t *testing.T, args ...string) *mcpServer {
	t.Helper()
	return startMCPWith(t, nil, args...)
}

// startMCPWith is startMCP with the client's options.
func startMCPWith(t *testing.T, opts *sdk.ClientOptions, args ...string) *mcpServer {
	t.Helper()
	dir := t.TempDir()
	nap := sleepLink(t, dir, "nap")
	cmd := toolkitCmd(append([]string{"mcp"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(cmd.Env, "TOOLKIT_STATE="+filepath.Join(dir, "state"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	client := sdk.NewClient(&sdk.Implementation{Name: "e2e", Version: "1"}, opts)
	cs, err := client.Connect(context.Background(), &sdk.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := &mcpServer{cmd: cmd, cs: cs, stderr: &stderr, dir: dir, nap: nap}
	t.Cleanup(func() {
		_ = cs.Close()
		killMarked(dir)
	})
	return s
}

// call runs a tool and returns its text and whether it was an error.
func (s *mcpServer) call(ctx context.Context, name string, args map[string]any) (string, bool, error) {
	res, err := s.cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return "", false, err
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String(), res.IsError, nil
}

// waitFile waits for a file the command makes to say it started.
func waitFile(t *testing.T, path string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, err := os.Stat(path); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s was not made", path)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// noneLeft checks that no process of the test's is left, within 5 s.
func noneLeft(t *testing.T, marker string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for len(marked(marker)) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("processes left running: %v", marked(marker))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// escapee is a command whose helpers (nap, a link to sleep) leave its
// session and clear their environment, then waits: nothing but the whole
// tree's stop can end them.
func escapee(nap string) string {
	return fmt.Sprintf(`(setsid env -i %q 3601 &); setsid %q 3602 & touch started; %q 3603`, nap, nap, nap)
}

// sleepLink makes dir/name, a link to sleep whose path marks the test's
// processes (killMarked, noneLeft); the test is skipped where there is
// no sleep.
func sleepLink(t *testing.T, dir, name string) string {
	t.Helper()
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip(err)
	}
	link := filepath.Join(dir, name)
	if err := os.Symlink(sleep, link); err != nil {
		t.Fatal(err)
	}
	return link
}

// sdkShutdown stops a stdio server as the TypeScript and Python SDKs'
// clients do: close its stdin, SIGTERM 2 s later, SIGKILL 2 s after that.
// It returns how long the server took to end, and whether it ended of
// itself (not by the SIGKILL).
func sdkShutdown(cmd *exec.Cmd, stdin io.Closer) (time.Duration, bool) {
	start := time.Now()
	stdin.Close()
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	select {
	case <-done:
		return time.Since(start), true
	case <-time.After(2 * time.Second):
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-done:
		return time.Since(start), true
	case <-time.After(2 * time.Second):
	}
	_ = cmd.Process.Kill()
	<-done
	return time.Since(start), false
}

// shutDownDuringCall starts toolkit mcp with args in a directory of its
// own, has it run command(nap) in a shell call (nap: a link to sleep that
// marks the test's processes; the command touches "started" once it runs),
// and then shuts the server down as the SDKs' clients do. The server must
// end of itself, before the SIGKILL, and leave nothing running. It returns
// what the server wrote to stdout and stderr.
func shutDownDuringCall(t *testing.T, args []string, command func(nap string) string) (stdout, stderr string) {
	t.Helper()
	dir := t.TempDir()
	nap := sleepLink(t, dir, "nap")
	cmd := toolkitCmd(append([]string{"mcp"}, args...)...)
	cmd.Dir = dir
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	call, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": map[string]any{"name": "shell", "arguments": map[string]any{"command": command(nap), "cwd": dir}}})
	io.WriteString(stdin, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`+"\n"+
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"+string(call)+"\n")
	waitFile(t, filepath.Join(dir, "started"))
	took, itself := sdkShutdown(cmd, stdin)
	if !itself {
		t.Fatalf("the server had to be killed (after %v)", took)
	}
	noneLeft(t, dir)
	return out.String(), errOut.String()
}

// TestMCPClientShutdown: a client that shuts the server down the way the
// SDKs do while a call runs leaves nothing running, and the server exits
// of itself before the SIGKILL, having answered the call.
func TestMCPClientShutdown(t *testing.T) {
	t.Parallel()
	stdout, stderr := shutDownDuringCall(t, nil, escapee)
	if !strings.Contains(stdout, `{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"[stopped: toolkit received SIGTERM; terminated]`) {
		t.Errorf("the call's answer: %s", stdout)
	}
	if stderr != "" {
		t.Errorf("the server said: %s", stderr)
	}
}

// TestMCPShutdownWithinTheSDKWindow: a call whose command ignores SIGTERM,
// under a --grace longer than the 2 s the SDKs' clients wait between their
// SIGTERM and their SIGKILL: the server still answers it, leaves nothing
// running, and ends of itself before the SIGKILL.
func TestMCPShutdownWithinTheSDKWindow(t *testing.T) {
	t.Parallel()
	stdout, _ := shutDownDuringCall(t, []string{"--grace", "5s"}, func(nap string) string {
		return fmt.Sprintf(`trap "" TERM; touch started; %q 3604`, nap)
	})
	if !strings.Contains(stdout, `{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"[stopped: toolkit received SIGTERM; killed at once after a second`) {
		t.Errorf("the call's answer: %s", stdout)
	}
}

// TestMCPSignalAnswersCalls: SIGTERM to the server stops every call in
// flight, answers each while stdout is still open, and ends the server;
// an idle server says nothing on SIGTERM.
func TestMCPSignalAnswersCalls(t *testing.T) {
	t.Parallel()
	s := startMCP(t)
	type answer struct {
		text string
		err  error
	}
	answers := make(chan answer, 2)
	for i := range 2 {
		go func() {
			cmd := fmt.Sprintf(`touch started%d; %q 360%d`, i, s.nap, i)
			text, _, err := s.call(context.Background(), "shell", map[string]any{"command": cmd, "cwd": s.dir})
			answers <- answer{text, err}
		}()
	}
	waitFile(t, filepath.Join(s.dir, "started0"))
	waitFile(t, filepath.Join(s.dir, "started1"))
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		select {
		case a := <-answers:
			if a.err != nil || !strings.Contains(a.text, "[stopped: toolkit received SIGTERM; terminated]") {
				t.Fatalf("answer %q, %v", a.text, a.err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("no answer after SIGTERM")
		}
	}
	noneLeft(t, s.dir)

	idle := startMCP(t)
	if _, _, err := idle.call(context.Background(), "read", map[string]any{"path": "/proc/self/status"}); err != nil {
		t.Fatal(err)
	}
	if err := idle.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	_ = idle.cs.Close()
	if idle.stderr.Len() > 0 {
		t.Fatalf("an idle server said on SIGTERM: %s", idle.stderr.String())
	}
}

// TestMCPKilledServerLeavesNothing: even a server killed with SIGKILL
// leaves no call's processes: each call's child toolkit gets SIGTERM when
// the server dies, and stops its tree.
func TestMCPKilledServerLeavesNothing(t *testing.T) {
	t.Parallel()
	s := startMCP(t)
	go func() {
		_, _, _ = s.call(context.Background(), "shell", map[string]any{"command": escapee(s.nap), "cwd": s.dir})
	}()
	waitFile(t, filepath.Join(s.dir, "started"))
	if err := s.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	noneLeft(t, s.dir)
}

// TestMCPTimeoutAndCancelStopEscapees: a call's timeout and its
// cancellation stop every process it started, also those that left its
// session and environment.
func TestMCPTimeoutAndCancelStopEscapees(t *testing.T) {
	t.Parallel()
	s := startMCP(t)
	text, _, err := s.call(context.Background(), "shell", map[string]any{"command": escapee(s.nap), "cwd": s.dir, "timeout_secs": 1})
	if err != nil || !strings.Contains(text, "[timed out after 1 s; terminated]") {
		t.Fatalf("%q, %v", text, err)
	}
	noneLeft(t, s.dir)

	os.Remove(filepath.Join(s.dir, "started"))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, _, err := s.call(ctx, "shell", map[string]any{"command": escapee(s.nap), "cwd": s.dir})
		done <- err
	}()
	waitFile(t, filepath.Join(s.dir, "started"))
	cancel()
	<-done
	noneLeft(t, s.dir)
	// The session goes on.
	if text, _, err := s.call(context.Background(), "shell", map[string]any{"command": "echo after"}); err != nil || text != "after\n[exit 0]\n" {
		t.Fatalf("after the cancel: %q, %v", text, err)
	}
}

// TestMCPConcurrentCalls: two calls run at once. Each waits for the other's
// file, so that run one after the other they could never end.
func TestMCPConcurrentCalls(t *testing.T) {
	t.Parallel()
	s := startMCP(t)
	var wg sync.WaitGroup
	results := make([]string, 2)
	for i, pair := range [][2]string{{"a", "b"}, {"b", "a"}} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := fmt.Sprintf("touch %s; while [ ! -e %s ]; do sleep 0.01; done; echo saw %s", pair[0], pair[1], pair[1])
			results[i], _, _ = s.call(context.Background(), "shell", map[string]any{"command": cmd, "cwd": s.dir, "timeout_secs": 20})
		}()
	}
	wg.Wait()
	if results[0] != "saw b\n[exit 0]\n" || results[1] != "saw a\n[exit 0]\n" {
		t.Fatalf("results %q", results)
	}
}

// TestMCPShellErrors: a shell call's usage and tool errors come back as the
// call's errors, from the child toolkit.
func TestMCPShellErrors(t *testing.T) {
	t.Parallel()
	s := startMCP(t)
	for args, want := range map[string]string{
		`{"command":5}`:                    `input: "command" must be a string, not a number`,
		`{}`:                               `input: missing required field "command"`,
		`{"command":"true","cwd":"/nope"}`: "/nope: no such directory",
	} {
		var m map[string]any
		_ = json.Unmarshal([]byte(args), &m)
		text, isErr, err := s.call(context.Background(), "shell", m)
		if err != nil || !isErr || text != want {
			t.Errorf("%s: %v %q %v, want the error %q", args, isErr, text, err, want)
		}
	}
}

// TestMCPIDsAsSent: JSON-RPC ids come back exactly as the client wrote them.
func TestMCPIDsAsSent(t *testing.T) {
	t.Parallel()
	in := `{"jsonrpc":"2.0","id":1.5,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":12345678901234567890,"method":"ping"}
{"jsonrpc":"2.0","id":"\u0041","method":"ping"}
`
	cmd := toolkitCmd("mcp")
	cmd.Stdin = strings.NewReader(in)
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`{"jsonrpc":"2.0","id":1.5,"result":{`, `{"jsonrpc":"2.0","id":12345678901234567890,"result":{}}`, `{"jsonrpc":"2.0","id":"\u0041","result":{}}`} {
		if !bytes.Contains(out, []byte(want)) {
			t.Errorf("no %s in %s", want, out)
		}
	}
	if n := bytes.Count(out, []byte("\n")); n != 3 {
		t.Errorf("%d answers: %s", n, out)
	}
}

// TestMCPLargeCall: a call of several MiB (a write of a large file) is
// answered with its id as sent, the file written whole; a call of an
// unknown tool with as large arguments is the protocol error MCP gives it
// (-32602), under its id.
func TestMCPLargeCall(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	content := strings.Repeat("a line of \"text\"\twith escapes\n", 100000) // 3 MB
	write, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": "big-1", "method": "tools/call", "params": map[string]any{"name": "write", "arguments": map[string]any{"path": filepath.Join(dir, "big.txt"), "content": content}}})
	unknown, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 7.0, "method": "tools/call", "params": map[string]any{"name": "nope", "arguments": map[string]any{"x": content}}})
	in := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n" +
		`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n" + string(write) + "\n" + string(unknown) + "\n"
	cmd := toolkitCmd("mcp")
	cmd.Stdin = strings.NewReader(in)
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(out, []byte(`{"jsonrpc":"2.0","id":"big-1","result":{"content":[{"type":"text","text":"created `)) {
		t.Fatalf("the write's answer: %.300s", out)
	}
	if !bytes.Contains(out, []byte(`{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"unknown tool \"nope\""}}`)) {
		t.Fatalf("the unknown tool's answer: %s", out[len(out)-min(len(out), 600):])
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "big.txt")); string(b) != content {
		t.Fatalf("the file holds %d bytes, want %d", len(b), len(content))
	}
}

// TestMCPOutputSchemas: every tool declares an output schema, and the
// structured content of its calls, done and failed, validates against it
// (github.com/google/jsonschema-go, the validator the SDK uses).
func TestMCPOutputSchemas(t *testing.T) {
	s := startMCP(t)
	ctx := context.Background()
	list, err := s.cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	schemas := map[string]*jsonschema.Resolved{}
	for _, tool := range list.Tools {
		b, err := json.Marshal(tool.OutputSchema)
		if err != nil || tool.OutputSchema == nil {
			t.Fatalf("%s: output schema %v %v", tool.Name, tool.OutputSchema, err)
		}
		var js jsonschema.Schema
		if err := json.Unmarshal(b, &js); err != nil {
			t.Fatal(err)
		}
		if schemas[tool.Name], err = js.Resolve(nil); err != nil {
			t.Fatalf("%s: %v\n%s", tool.Name, err, b)
		}
	}
	calls := []struct {
		tool string
		args map[string]any
	}{
		{"write", map[string]any{"path": "a.txt", "content": "one\ntwo\n"}},
		{"write", map[string]any{"path": "a.txt", "content": "x", "if_match": "absent"}},
		{"read", map[string]any{"path": "a.txt"}},
		{"read", map[string]any{"path": "."}},
		{"read", map[string]any{"path": "nope"}},
		{"read", map[string]any{"pth": "a.txt"}},
		{"edit", map[string]any{"path": "a.txt", "edits": []any{map[string]any{"old_text": "one", "new_text": "1"}}}},
		{"edit", map[string]any{"path": "a.txt", "edits": []any{map[string]any{"old_text": "zzz", "new_text": "1"}}}},
		{"patch", map[string]any{"patch": "*** Begin Patch\n*** Update File: a.txt\n@@\n-two\n+2\n*** Add File: b.txt\n+b\n*** End Patch\n"}},
		{"patch", map[string]any{"patch": "*** Begin Patch\n*** Delete File: nope.txt\n*** End Patch\n"}},
		{"shell", map[string]any{"command": "echo hi; exit 3"}},
		{"shell", map[string]any{"command": "seq 1 100000", "max_output": 1000}},
		{"shell", map[string]any{"command": "sleep 5", "timeout_secs": 1}},
		{"shell", map[string]any{"command": ""}},
	}
	for _, c := range calls {
		res, err := s.cs.CallTool(ctx, &sdk.CallToolParams{Name: c.tool, Arguments: c.args})
		if err != nil {
			t.Fatalf("%s %v: %v", c.tool, c.args, err)
		}
		b, _ := json.Marshal(res.StructuredContent)
		var v any
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatal(err)
		}
		if err := schemas[c.tool].Validate(v); err != nil {
			t.Errorf("%s %v: %v\n%s", c.tool, c.args, err, b)
		}
	}
}

// TestMCPJobs: a job a session starts is followed with the job tool, and
// stopped, keeper and all, when the session ends; with --keep-jobs it is
// left running.
func TestMCPJobs(t *testing.T) {
	t.Parallel()
	for _, keep := range []bool{false, true} {
		t.Run(fmt.Sprintf("keep=%v", keep), func(t *testing.T) {
			var flags []string
			if keep {
				flags = append(flags, "--keep-jobs")
			}
			s := startMCP(t, flags...)
			ctx := context.Background()
			text, isErr, err := s.call(ctx, "shell", map[string]any{"command": fmt.Sprintf("echo up; exec %q 3901", s.nap), "background": true})
			m := regexp.MustCompile(`\[still running as job ([0-9a-f]{4}); toolkit job [0-9a-f]{4} to follow it\]\n$`).FindStringSubmatch(text)
			if err != nil || isErr || m == nil {
				t.Fatalf("%v %v %q", err, isErr, text)
			}
			text, isErr, err = s.call(ctx, "job", map[string]any{"id": m[1], "wait_secs": 1})
			if err != nil || isErr || !strings.HasSuffix(text, "[still running as job "+m[1]+"]\n") {
				t.Fatalf("job: %v %v %q", err, isErr, text)
			}
			if n := len(marked(s.nap)); n != 1 {
				t.Fatalf("%d commands running", n)
			}
			if _, byItself := sdkShutdown(s.cmd, closer{s.cs}); !byItself {
				t.Fatalf("the server did not end of itself: %s", s.stderr)
			}
			if !keep {
				noneLeft(t, s.dir)
				return
			}
			time.Sleep(200 * time.Millisecond)
			if n := len(marked(s.nap)); n != 1 {
				t.Fatalf("with --keep-jobs, %d commands running after the session", n)
			}
		})
	}
}

// closer closes a client session's connection as a client closes stdin.
type closer struct{ cs *sdk.ClientSession }

func (c closer) Close() error { return c.cs.Close() }

// TestMCPProgress: a call that gives a progress token is told, while it
// runs, that it goes on.
func TestMCPProgress(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var got []*sdk.ProgressNotificationParams
	opts := &sdk.ClientOptions{ProgressNotificationHandler: func(_ context.Context, r *sdk.ProgressNotificationClientRequest) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, r.Params)
	}}
	s := startMCPWith(t, opts)
	params := &sdk.CallToolParams{Name: "shell", Arguments: map[string]any{"command": "sleep 2.5; echo done"}}
	params.SetProgressToken("tok-1")
	res, err := s.cs.CallTool(context.Background(), params)
	if err != nil || res.IsError {
		t.Fatalf("%v %+v", err, res)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) < 1 {
		t.Fatal("no progress notification during a 2.5 s call")
	}
	for i, p := range got {
		if p.ProgressToken != "tok-1" || p.Progress <= 0 || i > 0 && p.Progress <= got[i-1].Progress {
			t.Fatalf("notification %d: %+v", i, p)
		}
	}
}
