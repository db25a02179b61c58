package mcp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// filter stands between stdin and the SDK, for what the SDK does not do:
//
//   - The SDK ends the session on a line that is not a well-formed JSON-RPC
//     message (go-sdk #1209). A host that sends one bad line should get an
//     error for it and keep its session: filter answers each such line itself
//     (-32700 or -32600, id null) and passes on only well-formed messages.
//   - The SDK reads a request's id into an int64, a float64 or a string, and
//     writes that back: 1.5 comes back 1, 12345678901234567890 altered
//     (go-sdk #1253, not merged). filter gives each request an id of its own
//     and puts the client's, as it was sent, back in the response.
//   - A host may send its calls and close stdin at once (echo '{…}' | toolkit
//     mcp), and the SDK would end the session with the calls unanswered
//     (go-sdk #1061).
//     filter holds the end of the input back until every request passed on
//     has had its response, or until the server ends it (end).
type filter struct {
	lines  chan line
	out    *writer
	max    int
	eof    chan struct{} // closed when stdin ends
	done   chan struct{} // closed by end: Read returns io.EOF
	once   sync.Once
	next   int64 // the last id given to a request
	closer io.Closer

	pending []byte
	err     error
}

type line struct {
	b       []byte
	tooLong bool
	err     error
}

func newFilter(r io.ReadCloser, out *writer, max int) *filter {
	f := &filter{lines: make(chan line), out: out, max: max, eof: make(chan struct{}), done: make(chan struct{}), closer: r}
	go f.read(bufio.NewReaderSize(r, 64<<10))
	return f
}

// read reads lines from stdin, in a goroutine of its own: a read of stdin
// cannot be interrupted, and the server may end before stdin does.
func (f *filter) read(in *bufio.Reader) {
	for {
		var l line
		for {
			chunk, err := in.ReadSlice('\n')
			if !l.tooLong {
				if len(l.b)+len(chunk) > f.max {
					l.tooLong, l.b = true, nil
				} else {
					l.b = append(l.b, chunk...)
				}
			}
			if err != bufio.ErrBufferFull {
				l.err = err
				break
			}
		}
		select {
		case f.lines <- l:
		case <-f.done:
			return
		}
		if l.err != nil {
			close(f.eof)
			return
		}
	}
}

// end makes Read return io.EOF once it has nothing left to pass on.
func (f *filter) end() { f.once.Do(func() { close(f.done) }) }

func (f *filter) Read(p []byte) (int, error) {
	for len(f.pending) == 0 {
		if f.err != nil {
			// The end of stdin waits until every request has its answer.
			select {
			case <-f.out.allAnswered():
			case <-f.done:
			}
			return 0, io.EOF
		}
		var l line
		select {
		case l = <-f.lines:
		case <-f.done:
			return 0, io.EOF
		}
		f.err = l.err
		trimmed := bytes.TrimSpace(l.b)
		switch {
		case l.tooLong:
			f.reply(jsonrpc.CodeParseError, "parse error: the message is longer than the 65 MiB toolkit takes")
		case len(trimmed) == 0:
		case !json.Valid(trimmed):
			f.reply(jsonrpc.CodeParseError, "parse error: the line is not JSON")
		default:
			msg, err := wellFormed(trimmed)
			if err != nil {
				f.reply(jsonrpc.CodeInvalidRequest, "invalid request: "+err.Error())
				continue
			}
			if b, ok := f.renumber(msg, trimmed); ok {
				f.pending = append(b, '\n')
			}
		}
	}
	n := copy(p, f.pending)
	f.pending = f.pending[n:]
	return n, nil
}

// renumber gives a request an id of toolkit's own, noting the client's as
// sent, and points a cancellation at the id its request was given. It
// returns the message to pass on.
func (f *filter) renumber(msg jsonrpc.Message, raw []byte) ([]byte, bool) {
	req, ok := msg.(*jsonrpc.Request)
	if !ok {
		return raw, true // a response to the server: as it came
	}
	if req.ID.IsValid() {
		f.next++
		f.out.track(f.next, req.ID, rawID(raw))
		id, err := jsonrpc.MakeID(float64(f.next))
		if err != nil {
			return raw, true
		}
		req.ID = id
		b, err := jsonrpc.EncodeMessage(req)
		return b, err == nil
	}
	if req.Method == "notifications/cancelled" {
		var p map[string]json.RawMessage
		if json.Unmarshal(req.Params, &p) != nil {
			return raw, true
		}
		var sent any
		if json.Unmarshal(p["requestId"], &sent) != nil {
			return raw, true
		}
		id, err := jsonrpc.MakeID(sent)
		ours, known := f.out.cancel(id)
		if err != nil || !known {
			return raw, true
		}
		p["requestId"] = json.RawMessage(strconv.FormatInt(ours, 10))
		if req.Params, err = json.Marshal(p); err != nil {
			return raw, true
		}
		b, err := jsonrpc.EncodeMessage(req)
		return b, err == nil
	}
	return raw, true
}

// rawID is the id member of a message, as its bytes were sent.
func rawID(msg []byte) json.RawMessage {
	var m struct {
		ID json.RawMessage `json:"id"`
	}
	_ = json.Unmarshal(msg, &m)
	return m.ID
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

func (f *filter) reply(code int, msg string) {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": nil, "error": map[string]any{"code": code, "message": msg}})
	_, _ = f.out.Write(append(b, '\n'))
}

func (f *filter) Close() error {
	f.end()
	return f.closer.Close()
}

// writer keeps whole messages whole (the SDK and filter both write), puts
// each response's id back as the client sent it, and keeps count of the
// requests not answered yet.
type writer struct {
	mu     sync.Mutex
	w      io.Writer
	open   map[int64]sent // requests without a response, by toolkit's id
	byID   map[string]int64
	wait   chan struct{} // closed when open is empty; nil while it is
	failed error         // the first write that failed
}

// sent is a request's id as the client sent it.
type sent struct {
	raw json.RawMessage
	key string
}

func newWriter(w io.Writer) *writer {
	return &writer{w: w, open: map[int64]sent{}, byID: map[string]int64{}}
}

func (l *writer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if id, at, ok := responseID(p); ok {
		if s, known := l.open[id]; known {
			p = append(append(append([]byte(nil), p[:at[0]]...), s.raw...), p[at[1]:]...)
			l.forget(id)
		}
	}
	n, err := l.w.Write(p)
	if err != nil && l.failed == nil {
		l.failed = err
	}
	return n, err
}

// responseID finds the id of an outgoing message, and where its bytes are.
// The SDK writes it near the start ({"jsonrpc":"2.0","id":7,…}): look there
// before decoding all of a result that may be megabytes long.
func responseID(p []byte) (int64, [2]int, bool) {
	const key = `"id":`
	i := bytes.Index(p[:min(len(p), 64)], []byte(key))
	if i < 0 {
		return 0, [2]int{}, false
	}
	start := i + len(key)
	end := start
	for end < len(p) && (p[end] == '-' || '0' <= p[end] && p[end] <= '9') {
		end++
	}
	id, err := strconv.ParseInt(string(p[start:end]), 10, 64)
	return id, [2]int{start, end}, err == nil
}

// track notes a request passed on as toolkit's id ours.
func (l *writer) track(ours int64, id jsonrpc.ID, raw json.RawMessage) {
	l.mu.Lock()
	defer l.mu.Unlock()
	key := idKey(id)
	l.open[ours] = sent{raw: raw, key: key}
	l.byID[key] = ours
	if l.wait == nil {
		l.wait = make(chan struct{})
	}
}

// cancel forgets the request the client calls id, which gets no response,
// and returns the id toolkit gave it. The id is matched as the SDK reads it:
// 3.0 is the request 3, "\u0041" is "A".
func (l *writer) cancel(id jsonrpc.ID) (int64, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	ours, ok := l.byID[idKey(id)]
	if ok {
		l.forget(ours)
	}
	return ours, ok
}

func (l *writer) forget(ours int64) {
	delete(l.byID, l.open[ours].key)
	delete(l.open, ours)
	if len(l.open) == 0 && l.wait != nil {
		close(l.wait)
		l.wait = nil
	}
}

// allAnswered is closed once every request passed on has had its response.
func (l *writer) allAnswered() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.wait == nil {
		c := make(chan struct{})
		close(c)
		return c
	}
	return l.wait
}

// broken is the first error writing to the client, if any.
func (l *writer) broken() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.failed
}

// idKey is an id as the SDK reads it.
func idKey(id jsonrpc.ID) string {
	b, _ := json.Marshal(id.Raw())
	return string(b)
}

func (l *writer) Close() error { return nil }
