package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	stdpng "image/png"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	mcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"toolkit/applets"
	"toolkit/internal/cmdline"
	"toolkit/internal/outcome"
	"toolkit/internal/root"
	"toolkit/testsupport/mediatest"
)

// session starts a server confined to dir and a client connected to it,
// in memory.
func session(t *testing.T, dir string) *mcp.ClientSession {
	t.Helper()
	r, err := root.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	st, ct := mcp.NewInMemoryTransports()
	s := New("test", Config{Root: r})
	ctx := context.Background()
	ss, err := s.sdk.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := c.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(); ss.Wait() })
	return cs
}

func call(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

func text(r *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func structured(t *testing.T, r *mcp.CallToolResult) map[string]any {
	t.Helper()
	b, err := json.Marshal(r.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("structured content %s: %v", b, err)
	}
	return m
}

func TestListTools(t *testing.T) {
	cs := session(t, t.TempDir())
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]*mcp.Tool{}
	for _, tool := range res.Tools {
		got[tool.Name] = tool
	}
	if got["read"] == nil || got["write"] == nil || got["shell"] == nil || got["edit"] == nil || got["patch"] == nil {
		t.Fatalf("tools: %v", got)
	}
	if a := got["read"].Annotations; a == nil || !a.ReadOnlyHint {
		t.Errorf("read is not read-only: %+v", a)
	}
	if a := got["write"].Annotations; a == nil || a.ReadOnlyHint || !a.IdempotentHint {
		t.Errorf("write annotations: %+v", a)
	}
	if a := got["shell"].Annotations; a == nil || a.OpenWorldHint == nil || !*a.OpenWorldHint {
		t.Errorf("shell is not open world: %+v", a)
	}
	schema, _ := json.Marshal(got["shell"].InputSchema)
	if !strings.Contains(string(schema), `"required":["command"]`) {
		t.Errorf("shell schema: %s", schema)
	}
}

// TestEachTool: a call of each tool runs the applet, with its text as
// content and its --json object as structured content.
func TestEachTool(t *testing.T) {
	dir := t.TempDir()
	cs := session(t, dir)

	w := call(t, cs, "write", map[string]any{"path": "notes.txt", "content": "one\ntwo\n"})
	sum := structured(t, w)["sha256"]
	if w.IsError || text(w) != "created notes.txt: 8 bytes (2 lines); sha256 "+sum.(string)[:12]+"\n" {
		t.Fatalf("write: %v %q", w.IsError, text(w))
	}

	r := call(t, cs, "read", map[string]any{"path": "notes.txt"})
	if r.IsError || text(r) != "     1\tone\n     2\ttwo\n[lines 1-2 of 2; sha256 "+sum.(string)[:12]+"]\n" {
		t.Fatalf("read: %v %q", r.IsError, text(r))
	}
	if got := structured(t, r)["sha256"]; got != sum {
		t.Fatalf("read's sha256 %v, write's %v", got, sum)
	}

}

func TestErrors(t *testing.T) {
	cs := session(t, t.TempDir())
	for name, tc := range map[string]struct {
		tool string
		args map[string]any
		want string
	}{
		"tool error":    {"read", map[string]any{"path": "missing.txt"}, "missing.txt: no such file"},
		"outside root":  {"read", map[string]any{"path": "../../etc/passwd"}, "../../etc/passwd: outside the root"},
		"unknown field": {"read", map[string]any{"pth": "x"}, `input: unknown field "pth" (did you mean "path"?)`},
		"wrong type":    {"write", map[string]any{"path": 5, "content": "x"}, `input: "path" must be a string, not a number`},
		"missing":       {"write", map[string]any{"path": "x"}, `input: missing required field "content"`},
		"no arguments":  {"read", nil, `input: missing required field "path"`},
	} {
		t.Run(name, func(t *testing.T) {
			r := call(t, cs, tc.tool, tc.args)
			if !r.IsError || text(r) != tc.want {
				t.Fatalf("got %v %q, want an error %q", r.IsError, text(r), tc.want)
			}
			if m := structured(t, r); m["ok"] != false {
				t.Fatalf("structured %v", m)
			}
		})
	}
}

// answerAll reads what f passes on, answers each request as the SDK
// would (with the id it was given), and returns the messages passed on.
func answerAll(t *testing.T, f *filter, w *writer) []string {
	t.Helper()
	var passed []string
	done := make(chan error, 1)
	go func() {
		r := bufio.NewReader(f)
		for {
			line, err := r.ReadBytes('\n')
			if err != nil {
				done <- nil
				return
			}
			passed = append(passed, string(line))
			msg, err := jsonrpc.DecodeMessage(line)
			if err != nil {
				done <- fmt.Errorf("passed on %q: %v", line, err)
				return
			}
			if req, ok := msg.(*jsonrpc.Request); ok && req.ID.IsValid() {
				_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":` + idKey(req.ID) + `,"result":{}}` + "\n"))
			}
		}
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no end of the input")
	}
	return passed
}

// endsAfter checks that what the filter passes on (read through r) holds
// nothing more and does not end while a request waits for its answer, and
// ends once answer is written to w.
func endsAfter(t *testing.T, r *bufio.Reader, w *writer, answer string) {
	t.Helper()
	eof := make(chan error, 1)
	go func() { _, err := r.ReadByte(); eof <- err }()
	select {
	case err := <-eof:
		t.Fatalf("passed on more, or ended before the answer: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	_, _ = w.Write([]byte(answer + "\n"))
	if err := <-eof; err != io.EOF {
		t.Fatalf("then %v, want EOF", err)
	}
}

// TestFilter: lines that are not well-formed JSON-RPC get an error, and the
// session goes on; the end of the input waits for the requests passed on
// to be answered.
func TestFilter(t *testing.T) {
	in := strings.Join([]string{"not json", "42", `{"foo":1}`, `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, "", `{"jsonrpc":"2.0","id":2,"method":"ping"}`}, "\n") + "\n"
	var out strings.Builder
	w := newWriter(&out)
	f := newFilter(nopCloser{strings.NewReader(in)}, w, 1<<20)
	r := bufio.NewReader(f)
	got, err := r.ReadString('\n')
	if err != nil || got != `{"jsonrpc":"2.0","id":2,"method":"ping"}`+"\n" {
		t.Fatalf("passed on %q, %v", got, err)
	}
	if n := strings.Count(out.String(), `"error"`); n != 4 {
		t.Fatalf("%d errors sent: %s", n, out.String())
	}
	endsAfter(t, r, w, `{"jsonrpc":"2.0","id":2,"result":{}}`)
	if !strings.HasSuffix(out.String(), `{"jsonrpc":"2.0","id":2,"result":{}}`+"\n") {
		t.Fatalf("the answer went out as %q", out.String())
	}

	// A line over the bound is refused, and the next one still read; a
	// cancelled request needs no answer.
	in = strings.Repeat("x", 100) + "\n" + `{"jsonrpc":"2.0","id":3,"method":"ping"}` + "\n" + `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}` + "\n"
	f = newFilter(nopCloser{strings.NewReader(in)}, newWriter(&out), 90)
	if passed, err := io.ReadAll(f); err != nil || !strings.Contains(string(passed), `"id":3`) || !strings.Contains(string(passed), `"requestId":3`) {
		t.Fatalf("after a long line: %q, %v", passed, err)
	}

	// A cancellation may name its request in another form of the same id.
	for _, c := range []struct{ id, cancelled string }{{"4", "4.0"}, {`"A"`, `"\u0041"`}, {"5", "5e0"}, {"6.5", "6.5"}} {
		in = `{"jsonrpc":"2.0","id":` + c.id + `,"method":"ping"}` + "\n" + `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` + c.cancelled + `}}` + "\n"
		f = newFilter(nopCloser{strings.NewReader(in)}, newWriter(&out), 1<<20)
		done := make(chan error, 1)
		go func() { _, err := io.ReadAll(f); done <- err }()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("request %s cancelled as %s: %v", c.id, c.cancelled, err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("request %s cancelled as %s: the end of the input waits for an answer that will not come", c.id, c.cancelled)
		}
	}
}

// TestIDsAsSent: each response carries its request's id exactly as the
// client wrote it, however the SDK would read it.
func TestIDsAsSent(t *testing.T) {
	ids := []string{"1.5", "12345678901234567890", "-0", "1e2", `"x\u0041"`, `"7"`, "7", "0.1e1"}
	var in strings.Builder
	for _, id := range ids {
		in.WriteString(`{"jsonrpc":"2.0","id":` + id + `,"method":"ping"}` + "\n")
	}
	var out strings.Builder
	w := newWriter(&out)
	answerAll(t, newFilter(nopCloser{strings.NewReader(in.String())}, w, 1<<20), w)
	got := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(got) != len(ids) {
		t.Fatalf("%d answers for %d requests: %q", len(got), len(ids), out.String())
	}
	for i, id := range ids {
		if want := `{"jsonrpc":"2.0","id":` + id + `,"result":{}}`; got[i] != want {
			t.Errorf("answer %d is %s, want %s", i, got[i], want)
		}
	}
}

// FuzzFilter feeds the filter any bytes, answering every request it passes
// on as the SDK would: what it passes on is only well-formed messages, it
// never panics, and it comes to the end of the input.
func FuzzFilter(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`,
		"not json\n{}\n[1]\n" + `{"jsonrpc":"2.0","id":"x","method":"tools/list"}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1.0}}`,
		`{"jsonrpc":"2.0","id":2.5,"result":{}}` + "\n\n  \n" + `{"jsonrpc":"2.0","id":null,"method":"x"}`,
		strings.Repeat("{", 300),
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		var out strings.Builder
		w := newWriter(&out)
		answerAll(t, newFilter(nopCloser{strings.NewReader(string(in))}, w, 4096), w)
	})
}

type nopCloser struct{ *strings.Reader }

func (nopCloser) Close() error { return nil }

// TestPanicIsTheCallsError: a call that panics in the server is that
// call's tool error, and the server goes on.
func TestPanicIsTheCallsError(t *testing.T) {
	s := New("test", Config{})
	boom := applets.Tool{Name: "boom", Call: func(context.Context, []byte, cmdline.Host) outcome.Outcome { panic("index out of range") }}
	o := s.here(t.Context(), boom, []byte("{}"))
	if o.Kind != outcome.ToolError || !strings.Contains(o.Message, "index out of range") {
		t.Fatalf("got %+v", o)
	}
}

// blockingWriter holds each Write until it is let go.
type blockingWriter struct{ entered, release chan struct{} }

func (b blockingWriter) Write(p []byte) (int, error) {
	b.entered <- struct{}{}
	<-b.release
	return len(p), nil
}

// TestAnsweredOnceWritten: the last request counts as answered only once
// its response is written, not when the write starts: the end of stdin
// waits for it, and the server exits after it (a 3 MB call's answer was
// lost under load when it counted as answered first).
func TestAnsweredOnceWritten(t *testing.T) {
	bw := blockingWriter{make(chan struct{}), make(chan struct{})}
	w := newWriter(bw)
	id, err := jsonrpc.MakeID(float64(7))
	if err != nil {
		t.Fatal(err)
	}
	w.track(id, jsontext.Value("7.0"), false)
	// Taken before the write: allAnswered waits for the writer's lock.
	answered := w.allAnswered()
	go w.Write([]byte(`{"jsonrpc":"2.0","id":7,"result":{}}` + "\n"))
	<-bw.entered
	select {
	case <-answered:
		t.Fatal("answered before the response was written")
	default:
	}
	close(bw.release)
	select {
	case <-answered:
	case <-time.After(10 * time.Second):
		t.Fatal("not answered after the response was written")
	}
}

// TestSameIDAsTheSDKReadsIt: a request whose id the SDK would read as that
// of a request in flight (1 and 1.0) is refused under its own id, and the
// first one's answer still goes to it.
func TestSameIDAsTheSDKReadsIt(t *testing.T) {
	in := `{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n" + `{"jsonrpc":"2.0","id":1.0,"method":"ping"}` + "\n"
	var out strings.Builder
	w := newWriter(&out)
	r := bufio.NewReader(newFilter(nopCloser{strings.NewReader(in)}, w, 1<<20))
	if got, err := r.ReadString('\n'); err != nil || got != `{"jsonrpc":"2.0","id":1,"method":"ping"}`+"\n" {
		t.Fatalf("passed on %q, %v", got, err)
	}
	endsAfter(t, r, w, `{"jsonrpc":"2.0","id":1,"result":{}}`)
	want := `{"error":{"code":-32600,"message":"invalid request: the id 1.0 is read by toolkit as that of a request still in flight; give each request an id of its own"},"id":1.0,"jsonrpc":"2.0"}` + "\n" +
		`{"jsonrpc":"2.0","id":1,"result":{}}` + "\n"
	if out.String() != want {
		t.Fatalf("sent %q, want %q", out.String(), want)
	}
}

// TestCancelledAnswerDropped: the SDK's answer to a cancelled request does
// not go out; the next request's does.
func TestCancelledAnswerDropped(t *testing.T) {
	var out strings.Builder
	w := newWriter(&out)
	one, _ := jsonrpc.MakeID(float64(1))
	two, _ := jsonrpc.MakeID(float64(2))
	w.track(one, jsontext.Value("1"), false)
	w.cancel(one)
	w.track(two, jsontext.Value("2"), false)
	_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":{"content":[]}}` + "\n"))
	_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":2,"result":{}}` + "\n"))
	if want := `{"jsonrpc":"2.0","id":2,"result":{}}` + "\n"; out.String() != want {
		t.Fatalf("sent %q, want %q", out.String(), want)
	}
	select {
	case <-w.allAnswered():
	default:
		t.Fatal("a request is still waited for")
	}
}

// TestMedia: a picture is an image block and a PDF an embedded resource,
// beside the text, as the SDK's client reads them; the structured content
// says what was sent without the bytes.
func TestMedia(t *testing.T) {
	dir := t.TempDir()
	png := mediatest.Encode(mediatest.Picture(3000, 1000, false), "png")
	pdf := mediatest.PDF("one", "two")
	if err := os.WriteFile(filepath.Join(dir, "wide.png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "doc.pdf"), pdf, 0o644); err != nil {
		t.Fatal(err)
	}
	cs := session(t, dir)

	r := call(t, cs, "read", map[string]any{"path": "wide.png"})
	if r.IsError || len(r.Content) != 2 || !strings.HasPrefix(text(r), "[image wide.png: 3000×1000 PNG") {
		t.Fatalf("read wide.png: %v %q, %d blocks", r.IsError, text(r), len(r.Content))
	}
	img, ok := r.Content[1].(*mcp.ImageContent)
	if !ok || img.MIMEType != "image/png" {
		t.Fatalf("second block %T %+v", r.Content[1], r.Content[1])
	}
	cfg, err := stdpng.DecodeConfig(bytes.NewReader(img.Data))
	if err != nil || cfg.Width != 1568 || cfg.Height != 522 {
		t.Fatalf("the picture: %v, %d×%d", err, cfg.Width, cfg.Height)
	}
	st := structured(t, r)
	if _, has := st["media"]; has || st["kind"] != "image" {
		t.Fatalf("structured content: %v", st)
	}
	wire, _ := json.Marshal(r.Content[1])
	if !strings.HasPrefix(string(wire), `{"type":"image","mimeType":"image/png","data":"iVBORw0KGgo`) && !strings.HasPrefix(string(wire), `{"type":"image","data":"iVBORw0KGgo`) {
		t.Fatalf("on the wire: %.80s", wire)
	}

	r = call(t, cs, "read", map[string]any{"path": "doc.pdf"})
	if r.IsError || len(r.Content) != 2 {
		t.Fatalf("read doc.pdf: %v %q", r.IsError, text(r))
	}
	res, ok := r.Content[1].(*mcp.EmbeddedResource)
	if !ok || res.Resource.MIMEType != "application/pdf" || !bytes.Equal(res.Resource.Blob, pdf) || res.Resource.URI != "toolkit://read/doc.pdf" {
		t.Fatalf("second block %T %+v", r.Content[1], r.Content[1])
	}
}
