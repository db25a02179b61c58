package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"

	"github.com/go-json-experiment/json/jsontext"
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
	// direct, when set, answers a tools/call too large for the SDK: it gets
	// the call's params and returns the result's JSON.
	direct      func(ctx context.Context, params []byte) []byte
	initialized bool
	mu          sync.Mutex
	running     map[int64]context.CancelFunc // the calls direct is running

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
	f := &filter{lines: make(chan line), out: out, max: max, eof: make(chan struct{}), done: make(chan struct{}), closer: r, running: map[int64]context.CancelFunc{}}
	go f.read(bufio.NewReaderSize(r, 64<<10))
	return f
}

// read reads lines from stdin, in a goroutine of its own: a read of stdin
// cannot be interrupted, and the server may end before stdin does.
func (f *filter) read(in *bufio.Reader) {
	for {
		var l line
		// A long line is kept in pieces and put together once, in memory
		// of its exact size: grown by appends, a 60 MiB line left three
		// times its size behind.
		var parts [][]byte
		size := 0
		for {
			chunk, err := in.ReadSlice('\n')
			if size += len(chunk); size > f.max {
				l.tooLong, parts = true, nil
			} else {
				parts = append(parts, bytes.Clone(chunk))
			}
			if err != bufio.ErrBufferFull {
				l.err = err
				break
			}
		}
		switch {
		case len(parts) == 1:
			l.b = parts[0]
		case len(parts) > 1:
			l.b = bytes.Join(parts, nil)
			parts = nil
			if size > directAt {
				debug.FreeOSMemory() // the pieces go back now, before the call needs as much again
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
		if l.tooLong {
			f.reply(jsonrpc.CodeParseError, "parse error: the message is longer than the 65 MiB toolkit takes")
			continue
		}
		if len(trimmed) == 0 {
			continue
		}
		m, err := scan(trimmed)
		var se *jsontext.SyntacticError
		switch {
		case errors.As(err, &se) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, errNotJSON):
			f.reply(jsonrpc.CodeParseError, "parse error: the line is not JSON")
			continue
		case err != nil:
			f.reply(jsonrpc.CodeInvalidRequest, "invalid request: "+err.Error())
			continue
		}
		b, ok := f.renumber(m)
		switch {
		case !ok:
		case f.takes(m):
			f.answer(m, b)
		default:
			f.pending = append(b, '\n')
		}
	}
	n := copy(p, f.pending)
	f.pending = f.pending[n:]
	return n, nil
}

// message is a line that is one JSON-RPC message, as the SDK reads it, and
// where its id's value is in the line.
type message struct {
	line     []byte
	msg      jsonrpc.Message
	idAt     [2]int // the bytes of the id's value in line; [0 0] if none was found
	paramsAt [2]int // likewise, its params
	small    bool   // msg was read from the line without its params
}

// scan checks a line as the SDK will: one JSON-RPC message. It reads the
// line's top-level members without copying them, and hands the SDK's own
// decoder the message with its params left out (they are any JSON value to
// it) when they are large, so that a 60 MiB write's content is not copied
// to be checked.
// Batches are refused here: MCP dropped them in 2025-06-18, and the SDK
// ends the session on one.
func scan(b []byte) (message, error) {
	if b[0] != '{' && !jsontext.Value(b).IsValid(jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true)) {
		return message{}, errNotJSON // a parse error, not a request of the wrong shape
	}
	if b[0] == '[' {
		return message{}, errBatch
	}
	if b[0] != '{' {
		return message{}, errNotObject
	}
	m := message{line: b}
	dec := jsontext.NewDecoder(bytes.NewBuffer(b), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	if _, err := dec.ReadToken(); err != nil {
		return message{}, err
	}
	for dec.PeekKind() != '}' {
		name, err := dec.ReadToken()
		if err != nil {
			return message{}, err
		}
		key := name.String()
		v, err := dec.ReadValue()
		if err != nil {
			return message{}, err
		}
		end := int(dec.InputOffset())
		switch key {
		case "id":
			m.idAt = [2]int{end - len(v), end}
		case "params":
			m.paramsAt = [2]int{end - len(v), end}
		}
	}
	if _, err := dec.ReadToken(); err != nil { // }
		return message{}, err
	}
	if _, err := dec.ReadToken(); err != io.EOF {
		return message{}, &jsontext.SyntacticError{ByteOffset: dec.InputOffset()}
	}
	check := b
	if at := m.paramsAt; at[1]-at[0] > 64<<10 {
		check = append(append(append(make([]byte, 0, len(b)-(at[1]-at[0])+2), b[:at[0]]...), "{}"...), b[at[1]:]...)
		m.small = true
	}
	msg, err := jsonrpc.DecodeMessage(check)
	m.msg = msg
	return m, err
}

// directAt is the size of a tools/call that filter hands to the server
// itself, past the SDK, which copies a message some five times on its way
// to a handler: a 60 MiB write took ten times its size in memory.
const directAt = 1 << 20

// takes reports whether filter answers m itself (through direct).
func (f *filter) takes(m message) bool {
	req, ok := m.msg.(*jsonrpc.Request)
	if ok && req.Method == "notifications/initialized" {
		f.initialized = true
	}
	return ok && f.direct != nil && f.initialized && req.Method == "tools/call" && req.ID.IsValid() && m.idAt[1] > 0 && len(m.line) > directAt
}

// answer runs the tools/call m through direct and writes its response.
// Its id is the one renumber just gave it.
func (f *filter) answer(m message, line []byte) {
	ours := f.next
	ctx, cancel := context.WithCancel(context.Background())
	f.mu.Lock()
	f.running[ours] = cancel
	f.mu.Unlock()
	at := m.paramsAt
	if m.idAt[0] < at[0] {
		shift := len(line) - len(m.line) // the id renumber gave may be longer
		at = [2]int{at[0] + shift, at[1] + shift}
	}
	params := line[at[0]:at[1]]
	go func() {
		defer cancel()
		res := f.direct(ctx, params)
		f.mu.Lock()
		delete(f.running, ours)
		f.mu.Unlock()
		resp := append(append([]byte(`{"jsonrpc":"2.0","id":`+strconv.FormatInt(ours, 10)+`,"result":`), res...), "}\n"...)
		_, _ = f.out.Write(resp)
	}()
}

// renumber gives a request an id of toolkit's own, noting the client's as
// sent, and points a cancellation at the id its request was given. It
// returns the message to pass on.
func (f *filter) renumber(m message) ([]byte, bool) {
	req, ok := m.msg.(*jsonrpc.Request)
	if !ok {
		return m.line, true // a response to the server: as it came
	}
	if req.ID.IsValid() {
		at := m.idAt
		if at[1] == 0 {
			return m.line, true // an id spelled so that it was not found: as it came
		}
		f.next++
		ours := strconv.FormatInt(f.next, 10)
		f.out.track(f.next, req.ID, bytes.Clone(m.line[at[0]:at[1]]))
		if n := at[1] - at[0]; len(ours) <= n {
			// In place, padded with spaces: a 60 MiB line is not copied.
			copy(m.line[at[0]:], ours+strings.Repeat(" ", n-len(ours)))
			return m.line, true
		}
		return append(append(append(make([]byte, 0, len(m.line)+len(ours)), m.line[:at[0]]...), ours...), m.line[at[1]:]...), true
	}
	if req.Method == "notifications/cancelled" && !m.small {
		var p map[string]json.RawMessage
		if json.Unmarshal(req.Params, &p) != nil {
			return m.line, true
		}
		var sent any
		if json.Unmarshal(p["requestId"], &sent) != nil {
			return m.line, true
		}
		id, err := jsonrpc.MakeID(sent)
		ours, known := f.out.cancel(id)
		if err != nil || !known {
			return m.line, true
		}
		f.mu.Lock()
		if cancel, ok := f.running[ours]; ok {
			cancel() // a call filter answers itself
		}
		f.mu.Unlock()
		p["requestId"] = json.RawMessage(strconv.FormatInt(ours, 10))
		if req.Params, err = json.Marshal(p); err != nil {
			return m.line, true
		}
		b, err := jsonrpc.EncodeMessage(req)
		return b, err == nil
	}
	return m.line, true
}

var errBatch = errors.New("JSON-RPC batches are not taken (MCP has none since 2025-06-18)")
var errNotObject = errors.New("a JSON-RPC message is an object")
var errNotJSON = errors.New("the line is not JSON")

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
	gone   map[int64]bool // cancelled requests, by toolkit's id: their late answers are dropped
	wait   chan struct{}  // closed when open is empty; nil while it is
	failed error          // the first write that failed
}

// sent is a request's id as the client sent it.
type sent struct {
	raw json.RawMessage
	key string
}

func newWriter(w io.Writer) *writer {
	return &writer{w: w, open: map[int64]sent{}, byID: map[string]int64{}, gone: map[int64]bool{}}
}

func (l *writer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	id, at, ok := responseID(p)
	if ok && l.gone[id] {
		// The SDK answers a request even after its cancellation: under
		// toolkit's id, which is no id of the client's any more, or one it
		// uses for its next request. The client wants no answer to it
		// (MCP's cancellation), so none goes out.
		delete(l.gone, id)
		return len(p), nil
	}
	s, known := l.open[id]
	if ok && known {
		p = append(append(append([]byte(nil), p[:at[0]]...), s.raw...), p[at[1]:]...)
		// Forgotten once written: the last answer must be out before the
		// end of stdin lets the server exit.
		defer l.forget(id)
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
		l.gone[ours] = true
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
