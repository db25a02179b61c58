// Package lsp is toolkit's client of a language server (LSP 3.17 over
// stdio, its framing github.com/sourcegraph/jsonrpc2's VSCodeObjectCodec):
// one server process, started and initialized, whose diagnostics of a
// document's text it asks for and waits for, never taking an answer that
// was not computed for that text. A publish counts only if it carries the
// version of the text sent; a pull (textDocument/diagnostic) counts as it
// is answered after the text was sent, the server reading its messages in
// order. A server that never says a version (typescript-language-server)
// is taken at the publishes that come after the text was sent, once they
// have been quiet for a moment (UnversionedSettle).
package lsp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/sourcegraph/jsonrpc2"

	"toolkit/internal/proc"
)

// Server is a language server, started.
type Server struct {
	// Name is what the server is called in what toolkit says ("gopls").
	Name string
	// Settle is how long a publish for a text is waited on for another of
	// the same version, from a server that publishes in bursts (a fast
	// syntax pass, then a slower one); 0 takes the first.
	Settle time.Duration

	conn    *jsonrpc2.Conn
	p       *proc.Process
	root    string
	ready   chan struct{} // closed once initialized, or failed to be
	initErr error
	gone    chan struct{} // closed once the process ended
	ended   error         // how it ended, once gone
	stderr  *tail

	utf16, pull bool // the server counts in UTF-16; it answers pulls

	mu        sync.Mutex
	docs      map[string]*document // by URI
	pushed    map[string]published // the last publish of each URI
	now       chan struct{}        // closed, and replaced, at each publish
	used      int                  // a clock for the documents' last use
	seq       uint64               // publishes so far
	versioned bool                 // a publish said its version
}

type document struct {
	version int
	text    string
	used    int
	sent    uint64 // publishes before its text was sent
}

type published struct {
	version *int
	diags   []Diagnostic
	seq     uint64
	at      time.Time
}

// UnversionedSettle is how long the publishes of a server that says no
// version must be quiet before the last is taken.
const UnversionedSettle = 300 * time.Millisecond

// MaxDocuments is how many documents a server holds open: the least
// recently used is closed past it.
const MaxDocuments = 64

// Errors of Diagnose.
var (
	ErrLoading = errors.New("still loading")
	ErrGone    = errors.New("ended")
)

// Start starts argv as a language server for the project at root, and
// initializes it in the background (Ready says when).
func Start(name string, argv []string, root string, env []string, options map[string]any) (*Server, error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	s := &Server{Name: name, root: root, ready: make(chan struct{}), gone: make(chan struct{}), stderr: &tail{},
		docs: map[string]*document{}, pushed: map[string]published{}, now: make(chan struct{})}
	s.p, err = proc.StartChild(proc.Child{Path: argv[0], Args: argv, Env: env, Dir: root, Stdin: inR, Stdout: outW, Stderr: s.stderr, DeathSignal: syscall.SIGKILL})
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, err
	}
	stream := jsonrpc2.NewBufferedStream(pipes{outR, inW}, jsonrpc2.VSCodeObjectCodec{})
	s.conn = jsonrpc2.NewConn(context.Background(), stream, jsonrpc2.HandlerWithError(s.handle))
	go func() {
		s.ended = s.p.Wait()
		close(s.gone)
		s.conn.Close()
	}()
	go s.initialize(options)
	return s, nil
}

// pipes are the server's stdout and stdin as one stream.
type pipes struct {
	r *os.File
	w *os.File
}

func (p pipes) Read(b []byte) (int, error)  { return p.r.Read(b) }
func (p pipes) Write(b []byte) (int, error) { return p.w.Write(b) }
func (p pipes) Close() error {
	p.w.Close()
	return p.r.Close()
}

// Pid is the server's process id.
func (s *Server) Pid() int { return s.p.Pid() }

// Ready is closed once the server is initialized, or failed to be.
func (s *Server) Ready() <-chan struct{} { return s.ready }

// Failed says the server, ready, could not be initialized.
func (s *Server) Failed() bool {
	<-s.ready
	return s.initErr != nil
}

// Gone is closed once the server's process has ended.
func (s *Server) Gone() <-chan struct{} { return s.gone }

// Why says why the server ended or failed to start: its last line on
// stderr, or the error.
func (s *Server) Why() string {
	var why []string
	select {
	case <-s.gone:
		if s.ended != nil {
			why = append(why, s.ended.Error())
		}
	default:
	}
	switch first, last := s.stderr.lines(); {
	case s.initErr != nil && first != "":
		// It could not start: its first word on stderr says why
		// (rustup's "error: Unknown binary 'rust-analyzer'"), where the
		// connection's end says nothing.
		why = append(why, first)
	case s.initErr != nil:
		why = append(why, s.initErr.Error())
	case last != "":
		why = append(why, last)
	}
	if len(why) == 0 {
		return "it ended"
	}
	return strings.Join(why, ": ")
}

func (s *Server) initialize(options map[string]any) {
	defer close(s.ready)
	params := map[string]any{
		"initializationOptions": options,
		"processId":             os.Getpid(),
		"rootUri":               URI(s.root),
		"workspaceFolders": []map[string]string{
			{"uri": URI(s.root), "name": s.root},
		},
		"capabilities": map[string]any{
			"general": map[string]any{"positionEncodings": []string{"utf-8", "utf-16"}},
			"textDocument": map[string]any{
				"synchronization":    map[string]any{"dynamicRegistration": false},
				"publishDiagnostics": map[string]any{"versionSupport": true, "relatedInformation": false},
				"diagnostic":         map[string]any{"dynamicRegistration": false},
				// Quick fixes as edits, resolved when asked for, not as
				// commands the server would run on its own files.
				"codeAction": map[string]any{
					"codeActionLiteralSupport": map[string]any{"codeActionKind": map[string]any{"valueSet": []string{"quickfix"}}},
					"dataSupport":              true,
					"resolveSupport":           map[string]any{"properties": []string{"edit"}},
				},
			},
			"workspace": map[string]any{
				"workspaceFolders":      true,
				"configuration":         true,
				"didChangeWatchedFiles": map[string]any{"dynamicRegistration": false},
			},
		},
	}
	var res struct {
		Capabilities struct {
			PositionEncoding   string          `json:"positionEncoding"`
			DiagnosticProvider json.RawMessage `json:"diagnosticProvider"`
		} `json:"capabilities"`
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-s.gone:
			cancel()
		case <-ctx.Done():
		}
	}()
	if err := s.conn.Call(ctx, "initialize", params, &res); err != nil {
		s.initErr = err
		return
	}
	c := res.Capabilities
	s.utf16 = c.PositionEncoding != "utf-8"
	s.pull = len(c.DiagnosticProvider) > 0 && string(c.DiagnosticProvider) != "null" && string(c.DiagnosticProvider) != "false"
	s.initErr = s.conn.Notify(ctx, "initialized", map[string]any{})
}

// handle answers what the server asks of its client: nothing it asks is
// refused, as few clients refuse it; its diagnostics are kept. It runs in
// the connection's reading loop, never blocking: the publishes are kept
// in the order the server sent them.
func (s *Server) handle(ctx context.Context, _ *jsonrpc2.Conn, req *jsonrpc2.Request) (any, error) {
	switch req.Method {
	case "textDocument/publishDiagnostics":
		var p publishParams
		if req.Params != nil && json.Unmarshal(*req.Params, &p) == nil {
			s.mu.Lock()
			s.seq++
			s.versioned = s.versioned || p.Version != nil
			s.pushed[p.URI] = published{version: p.Version, diags: p.Diagnostics, seq: s.seq, at: time.Now()}
			close(s.now)
			s.now = make(chan struct{})
			s.mu.Unlock()
		}
		return nil, nil
	case "workspace/configuration":
		var p struct {
			Items []json.RawMessage `json:"items"`
		}
		if req.Params != nil {
			_ = json.Unmarshal(*req.Params, &p)
		}
		return make([]any, len(p.Items)), nil
	case "workspace/workspaceFolders":
		return []map[string]string{{"uri": URI(s.root), "name": s.root}}, nil
	}
	return nil, nil
}

// Fix is a server's quick fix for a diagnostic: its title, and the texts
// it edits, by path.
type Fix struct {
	Title string
	Edits map[string][]TextEdit
}

// Fixes are the server's quick fixes (code actions of kind quickfix that
// edit text) for the diagnostic d of the document at path, as it holds
// it now; one that needs resolving is resolved.
func (s *Server) Fixes(ctx context.Context, path string, d Diagnostic) ([]Fix, error) {
	var p codeActionParams
	p.TextDocument = documentID{URI: URI(path)}
	p.Range = d.Range
	p.Context.Diagnostics = []Diagnostic{d}
	p.Context.Only = []string{"quickfix"}
	var actions []codeAction
	if err := s.conn.Call(ctx, "textDocument/codeAction", p, &actions); err != nil {
		return nil, s.failed(ctx, err)
	}
	var out []Fix
	for _, a := range actions {
		if a.Kind != "" && !strings.HasPrefix(a.Kind, "quickfix") {
			continue
		}
		if a.Edit == nil && a.Data != nil {
			var resolved codeAction
			if s.conn.Call(ctx, "codeAction/resolve", a, &resolved) == nil {
				a = resolved
			}
		}
		if a.Edit == nil {
			continue
		}
		if edits, ok := a.Edit.edits(); ok {
			out = append(out, Fix{Title: a.Title, Edits: edits})
		}
	}
	return out, nil
}

// UTF16 says the server's columns count UTF-16 code units.
func (s *Server) UTF16() bool { return s.utf16 }

// Changed tells the server of files changed on disk that it may not hold
// open: workspace/didChangeWatchedFiles. A file it holds open is given
// its content by Diagnose.
func (s *Server) Changed(ctx context.Context, created, changed, deleted []string) error {
	var evs []fileEvent
	for kind, paths := range [][]string{created, changed, deleted} {
		for _, p := range paths {
			evs = append(evs, fileEvent{URI: URI(p), Type: kind + 1})
		}
	}
	if len(evs) == 0 {
		return nil
	}
	return s.conn.Notify(ctx, "workspace/didChangeWatchedFiles", didChangeWatchedFilesParams{Changes: evs})
}

// Close shuts the server down: shutdown and exit as the protocol asks,
// then, after grace, SIGKILL.
func (s *Server) Close(grace time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	select {
	case <-s.ready:
		if s.initErr == nil {
			_ = s.conn.Call(ctx, "shutdown", nil, nil)
			_ = s.conn.Notify(ctx, "exit", nil)
		}
	case <-ctx.Done():
	}
	select {
	case <-s.gone:
	case <-ctx.Done():
		s.p.Signal(syscall.SIGKILL)
		<-s.gone
	}
	s.conn.Close()
}

// tail keeps the first and the last lines a server wrote on stderr, for
// what is said when it ends.
type tail struct {
	mu   sync.Mutex
	head []byte // its first 512 bytes
	buf  []byte
}

func (t *tail) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.head) < 512 {
		t.head = append(t.head, b[:min(len(b), 512-len(t.head))]...)
	}
	t.buf = append(t.buf, b...)
	if len(t.buf) > 4096 {
		t.buf = slices.Clone(t.buf[len(t.buf)-2048:])
	}
	return len(b), nil
}

// lines are the first line and the last one it wrote, without blanks.
func (t *tail) lines() (first, last string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	text := func(b []byte) []string {
		return strings.Split(strings.TrimSpace(string(bytes.ToValidUTF8(b, nil))), "\n")
	}
	all := text(t.buf)
	return strings.TrimSpace(text(t.head)[0]), strings.TrimSpace(all[len(all)-1])
}

var _ io.Writer = (*tail)(nil)
