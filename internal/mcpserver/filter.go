package mcpserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// The SDK ends the session on a line that is not JSON. A host that sends
// one bad line should get an error for it and keep its session: filter
// answers each such line itself with a JSON-RPC error and passes on only
// the lines that are well-formed messages.
//
// It also holds back the end of the input until every request passed on has
// its response: a host may send its calls and close stdin at once
// (echo '{…}' | toolkit mcp), and the SDK would end the session with the
// calls unanswered.
type filter struct {
	in      *bufio.Reader
	closer  io.Closer
	out     *lockedWriter
	max     int
	pending []byte
	err     error
}

func newFilter(r io.ReadCloser, out *lockedWriter, max int) *filter {
	out.open = map[string]bool{}
	out.cond = sync.NewCond(&out.mu)
	return &filter{in: bufio.NewReaderSize(r, 64<<10), closer: r, out: out, max: max}
}

func (f *filter) Read(p []byte) (int, error) {
	for len(f.pending) == 0 {
		if f.err != nil {
			f.out.waitAnswered()
			return 0, f.err
		}
		line, tooLong, err := f.line()
		f.err = err
		trimmed := bytes.TrimSpace(line)
		switch {
		case tooLong:
			f.reply(-32700, "parse error: the message is longer than the 65 MiB toolkit takes")
		case len(trimmed) == 0:
		case !json.Valid(trimmed):
			f.reply(-32700, "parse error: the line is not JSON")
		default:
			msg, err := wellFormed(trimmed)
			if err != nil {
				f.reply(-32600, "invalid request: "+err.Error())
				continue
			}
			f.out.track(msg)
			f.pending = append(trimmed, '\n')
		}
	}
	n := copy(p, f.pending)
	f.pending = f.pending[n:]
	return n, nil
}

// wellFormed checks a line as the SDK will: one JSON-RPC message. Batches
// are refused here: MCP dropped them in 2025-06-18, and the SDK ends the
// session on one.
func wellFormed(b []byte) (jsonrpc.Message, error) {
	if b[0] == '[' {
		return nil, errBatch
	}
	if b[0] != '{' {
		return nil, errNotObject
	}
	return jsonrpc.DecodeMessage(b)
}

var errBatch = errors.New("JSON-RPC batches are not taken (MCP has none since 2025-06-18)")
var errNotObject = errors.New("a JSON-RPC message is an object")

// line reads up to the next newline. A line over max is read to its end
// but not kept.
func (f *filter) line() (line []byte, tooLong bool, err error) {
	for {
		chunk, err := f.in.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(chunk) > f.max {
				tooLong, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		if err != bufio.ErrBufferFull {
			return line, tooLong, err
		}
	}
}

func (f *filter) reply(code int, msg string) {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": nil, "error": map[string]any{"code": code, "message": msg}})
	_, _ = f.out.Write(append(b, '\n'))
}

func (f *filter) Close() error { return f.closer.Close() }

// lockedWriter keeps whole messages whole (the SDK and filter both write),
// and keeps count of the requests not answered yet.
type lockedWriter struct {
	mu   sync.Mutex
	w    io.Writer
	open map[string]bool // ids of requests without a response
	cond *sync.Cond
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	id, answered := responseID(p)
	l.mu.Lock()
	defer l.mu.Unlock()
	if answered && l.open != nil {
		delete(l.open, id)
		l.cond.Broadcast()
	}
	return l.w.Write(p)
}

// responseID finds the id of an outgoing message. The SDK writes it near
// the start ({"jsonrpc":"2.0","id":7,…}): look there before decoding all of
// a result that may be megabytes long.
func responseID(p []byte) (string, bool) {
	const key = `"id":`
	if i := bytes.Index(p[:min(len(p), 64)], []byte(key)); i >= 0 {
		dec := json.NewDecoder(bytes.NewReader(p[i+len(key):]))
		var id json.RawMessage
		if dec.Decode(&id) == nil {
			return string(id), true
		}
	}
	var m struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(p, &m) == nil && len(m.ID) > 0 {
		return string(m.ID), true
	}
	return "", false
}

// track notes a request passed on; a cancellation forgets its request,
// which gets no response.
func (l *lockedWriter) track(msg jsonrpc.Message) {
	req, ok := msg.(*jsonrpc.Request)
	if !ok {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if req.ID.IsValid() {
		l.open[idKey(req.ID)] = true
		return
	}
	if req.Method == "notifications/cancelled" {
		// The id as the SDK reads it: 3.0 is the request 3, "\u0041" is "A".
		var p struct {
			RequestID any `json:"requestId"`
		}
		if json.Unmarshal(req.Params, &p) != nil {
			return
		}
		if id, err := jsonrpc.MakeID(p.RequestID); err == nil && id.IsValid() {
			delete(l.open, idKey(id))
			l.cond.Broadcast()
		}
	}
}

// idKey is an id as the SDK writes it in a response.
func idKey(id jsonrpc.ID) string {
	b, _ := json.Marshal(id.Raw())
	return string(b)
}

// waitAnswered waits until every request passed on has had its response.
func (l *lockedWriter) waitAnswered() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for len(l.open) > 0 {
		l.cond.Wait()
	}
}

func (l *lockedWriter) Close() error { return nil }
