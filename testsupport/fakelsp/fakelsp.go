// Package fakelsp is a language server for toolkit's tests: it speaks LSP
// over stdio and finds an error on each line that holds "ERROR", and can
// be slow, publish stale versions, publish in bursts, crash, never answer,
// or answer pulls only, as FAKELSP_MODE says (words apart by commas):
//
//	init=DUR    answer initialize after DUR (a server still loading)
//	slow=DUR    publish DUR after each change
//	stale       publish the version before a change's first, then its own
//	staleonly   publish the version before a change's, never its own
//	burst       publish each version twice: none found, then what is found
//	crash       end at the first change
//	silent      never publish
//	pull        answer textDocument/diagnostic, never publish
//	noversion   publish without the document's version
//
// Each error has a quick fix, resolved when asked for: ERROR becomes
// FIXED. A line "BREAKS NAME" also publishes an error for the file NAME beside
// the document: a change that breaks another file. Where FAKELSP_LOG names
// a file, each file the client says changed on disk is written in it, a
// line each: "changed URI" (created, changed, deleted).
package fakelsp

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/sourcegraph/jsonrpc2"
)

type mode struct {
	init, slow                                              time.Duration
	stale, staleonly, burst, crash, silent, pull, noversion bool
}

func parseMode(s string) mode {
	var m mode
	for w := range strings.SplitSeq(s, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(w), "=")
		d, _ := time.ParseDuration(v)
		switch k {
		case "init":
			m.init = d
		case "slow":
			m.slow = d
		case "stale":
			m.stale = true
		case "staleonly":
			m.stale, m.staleonly = true, true
		case "burst":
			m.burst = true
		case "crash":
			m.crash = true
		case "silent":
			m.silent = true
		case "pull":
			m.pull = true
		case "noversion":
			m.noversion = true
		}
	}
	return m
}

type server struct {
	m    mode
	mu   sync.Mutex
	docs map[string]string // uri → text
	vers map[string]int
	conn *jsonrpc2.Conn
	done chan struct{}
}

// Main runs the server on stdin and stdout until its client says exit.
func Main() {
	s := &server{m: parseMode(os.Getenv("FAKELSP_MODE")), docs: map[string]string{}, vers: map[string]int{}, done: make(chan struct{})}
	stream := jsonrpc2.NewBufferedStream(stdio{}, jsonrpc2.VSCodeObjectCodec{})
	conn := jsonrpc2.NewConn(context.Background(), stream, jsonrpc2.HandlerWithError(s.handle))
	select {
	case <-s.done:
	case <-conn.DisconnectNotify():
	}
	os.Exit(0)
}

type stdio struct{}

func (stdio) Read(b []byte) (int, error)  { return os.Stdin.Read(b) }
func (stdio) Write(b []byte) (int, error) { return os.Stdout.Write(b) }
func (stdio) Close() error                { return nil }

type diagnostic struct {
	Range    rng    `json:"range"`
	Severity int    `json:"severity"`
	Source   string `json:"source"`
	Message  string `json:"message"`
}

type rng struct {
	Start pos `json:"start"`
	End   pos `json:"end"`
}

type pos struct {
	Line      int `json:"line"`
	Character int `json:"character"`
}

// find is what the server finds in a text: an error at each "ERROR", and
// the files its "BREAKS NAME" lines break.
func find(text string) ([]diagnostic, []string) {
	var ds []diagnostic
	var breaks []string
	for i, l := range strings.Split(text, "\n") {
		if c := strings.Index(l, "ERROR"); c >= 0 {
			ds = append(ds, diagnostic{Range: rng{pos{i, c}, pos{i, c + 5}}, Severity: 1, Source: "fake", Message: strings.TrimSpace(l[c:])})
		}
		if name, ok := strings.CutPrefix(l, "BREAKS "); ok {
			breaks = append(breaks, strings.TrimSpace(name))
		}
	}
	return ds, breaks
}

func (s *server) handle(ctx context.Context, conn *jsonrpc2.Conn, req *jsonrpc2.Request) (any, error) {
	// The connection, for the publishes made apart from a request: the
	// one NewConn returns may not be set yet when the first one comes.
	s.mu.Lock()
	s.conn = conn
	s.mu.Unlock()
	var p struct {
		TextDocument struct {
			URI     string `json:"uri"`
			Version int    `json:"version"`
			Text    string `json:"text"`
		} `json:"textDocument"`
		ContentChanges []struct {
			Text string `json:"text"`
		} `json:"contentChanges"`
	}
	if req.Params != nil {
		_ = json.Unmarshal(*req.Params, &p)
	}
	uri := p.TextDocument.URI
	switch req.Method {
	case "initialize":
		time.Sleep(s.m.init)
		caps := map[string]any{"textDocumentSync": 1, "positionEncoding": "utf-16"}
		if s.m.pull {
			caps["diagnosticProvider"] = map[string]any{"interFileDependencies": false, "workspaceDiagnostics": false}
		}
		return map[string]any{"capabilities": caps}, nil
	case "shutdown":
		return nil, nil
	case "exit":
		close(s.done)
		return nil, nil
	case "textDocument/didOpen":
		s.set(uri, p.TextDocument.Version, p.TextDocument.Text, false)
	case "textDocument/didChange":
		if s.m.crash {
			os.Exit(3)
		}
		if len(p.ContentChanges) > 0 {
			s.set(uri, p.TextDocument.Version, p.ContentChanges[len(p.ContentChanges)-1].Text, true)
		}
	case "workspace/didChangeWatchedFiles":
		var w struct {
			Changes []struct {
				URI  string `json:"uri"`
				Type int    `json:"type"`
			} `json:"changes"`
		}
		if req.Params != nil && json.Unmarshal(*req.Params, &w) == nil && os.Getenv("FAKELSP_LOG") != "" {
			f, err := os.OpenFile(os.Getenv("FAKELSP_LOG"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
			if err == nil {
				for _, c := range w.Changes {
					fmt.Fprintf(f, "%s %s\n", [...]string{"?", "created", "changed", "deleted"}[min(c.Type, 3)], c.URI)
				}
				f.Close()
			}
		}
	case "textDocument/codeAction":
		var ca struct {
			TextDocument struct {
				URI string `json:"uri"`
			} `json:"textDocument"`
			Range rng `json:"range"`
		}
		_ = json.Unmarshal(*req.Params, &ca)
		return []map[string]any{{"title": "Replace ERROR with FIXED", "kind": "quickfix", "data": map[string]any{"uri": ca.TextDocument.URI, "range": ca.Range}}}, nil
	case "codeAction/resolve":
		var a struct {
			Title string `json:"title"`
			Kind  string `json:"kind"`
			Data  struct {
				URI   string `json:"uri"`
				Range rng    `json:"range"`
			} `json:"data"`
		}
		_ = json.Unmarshal(*req.Params, &a)
		edit := map[string]any{"changes": map[string]any{a.Data.URI: []map[string]any{{"range": a.Data.Range, "newText": "FIXED"}}}}
		return map[string]any{"title": a.Title, "kind": a.Kind, "edit": edit}, nil
	case "textDocument/diagnostic":
		s.mu.Lock()
		ds, _ := find(s.docs[uri])
		s.mu.Unlock()
		return map[string]any{"kind": "full", "items": nonNil(ds)}, nil
	}
	return nil, nil
}

// set takes a document's new text and publishes what it finds, as the
// mode says.
func (s *server) set(uri string, version int, text string, change bool) {
	s.mu.Lock()
	old, oldVersion := s.docs[uri], s.vers[uri]
	s.docs[uri], s.vers[uri] = text, version
	s.mu.Unlock()
	if s.m.silent || s.m.pull {
		return
	}
	go func() {
		if change && s.m.stale {
			s.publish(uri, oldVersion, old)
			if s.m.staleonly {
				return
			}
		}
		time.Sleep(s.m.slow)
		if s.m.burst {
			s.publishAll(uri, version, nil)
			time.Sleep(100 * time.Millisecond)
		}
		// The files a change breaks first, then the document's own: a
		// client that has the document's has the others'.
		ds, breaks := find(text)
		dir := filepath.Dir(strings.TrimPrefix(uri, "file://"))
		for _, name := range breaks {
			other := "file://" + filepath.Join(dir, name)
			s.publishAll(other, 0, []diagnostic{{Range: rng{pos{0, 0}, pos{0, 1}}, Severity: 1, Source: "fake", Message: "broken by " + filepath.Base(uri)}})
		}
		s.publishAll(uri, version, ds)
	}()
}

func (s *server) publish(uri string, version int, text string) {
	ds, _ := find(text)
	s.publishAll(uri, version, ds)
}

func (s *server) publishAll(uri string, version int, ds []diagnostic) {
	params := map[string]any{"uri": uri, "diagnostics": nonNil(ds)}
	if !s.m.noversion && version > 0 {
		params["version"] = version
	}
	s.mu.Lock()
	conn := s.conn
	s.mu.Unlock()
	if err := conn.Notify(context.Background(), "textDocument/publishDiagnostics", params); err != nil {
		fmt.Fprintln(os.Stderr, "fakelsp:", err)
	}
}

func nonNil(ds []diagnostic) []diagnostic {
	if ds == nil {
		return []diagnostic{}
	}
	return ds
}
