package mcp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"sync"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// filter stands between stdin and the SDK for what the SDK does not do.
// Every message goes through the SDK, under the id the client gave it;
// each part below can go when the SDK issue it names is fixed:
//
//   - The SDK ends the session on a line that is not a well-formed JSON-RPC
//     message (go-sdk #1209): filter answers such a line itself (-32700 for
//     one that is not JSON, -32600 for the rest, id null) and the session
//     goes on.
//   - The SDK reads an id into an int64 or a string and writes back its
//     reading: 1.5 comes back 1, 12345678901234567890 altered (go-sdk
//     #1253). writer puts the id back as the client wrote it; a request
//     whose id the SDK would read as that of a request still in flight is
//     refused, as the SDK could not tell their answers apart.
//   - The SDK answers a request after its cancellation (go-sdk #1235,
//     #1259), which MCP says a server does not do: writer drops that answer.
//   - A host may send its calls and close stdin at once (echo '{…}' | toolkit
//     mcp), and the SDK would end the session with the calls unanswered
//     (go-sdk #1061): the end of stdin waits until every request in flight
//     has its answer, or until the server ends it (end). A subscriptions/listen
//     stream is not waited for: it lasts as long as the session does.
type filter struct {
	lines chan line
	out   *writer
	max   int
	done  chan struct{} // closed by end: Read returns io.EOF
	once  sync.Once

	closer  io.Closer
	pending []byte
	err     error
}

type line struct {
	b       []byte
	tooLong bool
	err     error
}

func newFilter(r io.ReadCloser, out *writer, max int) *filter {
	f := &filter{lines: make(chan line), out: out, max: max, done: make(chan struct{}), closer: r}
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
			if len(l.b)+len(chunk) > f.max {
				l.tooLong, l.b = true, nil
			} else if !l.tooLong {
				l.b = append(l.b, chunk...)
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
			return
		}
	}
}

// end makes Read return io.EOF once it has nothing left to pass on.
func (f *filter) end() { f.once.Do(func() { close(f.done) }) }

func (f *filter) Read(p []byte) (int, error) {
	for len(f.pending) == 0 {
		if f.err != nil {
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
		if l.tooLong {
			f.reply(nil, jsonrpc.CodeParseError, "parse error: the message is longer than the 65 MiB toolkit takes")
			continue
		}
		b := bytes.TrimSpace(l.b)
		if len(b) == 0 {
			continue
		}
		msg, id, err := scan(b)
		switch {
		case errors.Is(err, errNotJSON):
			f.reply(nil, jsonrpc.CodeParseError, "parse error: the line is not JSON")
		case err != nil:
			f.reply(nil, jsonrpc.CodeInvalidRequest, "invalid request: "+err.Error())
		case !f.pass(msg, id):
			f.reply(id, jsonrpc.CodeInvalidRequest, "invalid request: the id "+string(id)+" is read by toolkit as that of a request still in flight; give each request an id of its own")
		default:
			f.pending = append(b, '\n')
		}
	}
	n := copy(p, f.pending)
	f.pending = f.pending[n:]
	return n, nil
}

// scan checks a line as the SDK will read it: one JSON-RPC message, not a
// batch (MCP has none since 2025-06-18, and the SDK ends the session on
// one). It returns the message and its id's bytes as sent.
func scan(b []byte) (jsonrpc.Message, jsontext.Value, error) {
	opts := []jsontext.Options{jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true)}
	if !jsontext.Value(b).IsValid(opts...) {
		return nil, nil, errNotJSON
	}
	switch b[0] {
	case '[':
		return nil, nil, errBatch
	case '{':
	default:
		return nil, nil, errNotObject
	}
	msg, err := jsonrpc.DecodeMessage(b)
	if err != nil {
		return nil, nil, err
	}
	id, _, _ := idMember(b)
	return msg, id, nil
}

// idMember finds the top-level "id" of the JSON object b as it is written
// there (nil for none), where its bytes are, and the name of the member
// that follows it ("" for none).
func idMember(b []byte) (id jsontext.Value, at [2]int, next string) {
	dec := jsontext.NewDecoder(bytes.NewReader(b), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return nil, at, ""
	}
	for dec.PeekKind() == '"' {
		key, err := dec.ReadToken()
		if err != nil || id != nil {
			break
		}
		name := key.String() // before the value: reading it voids the token
		v, err := dec.ReadValue()
		if err != nil {
			break
		}
		if name == "id" {
			end := int(dec.InputOffset())
			id, at = bytes.Clone(v), [2]int{end - len(v), end}
			if dec.PeekKind() == '"' {
				if key, err := dec.ReadToken(); err == nil {
					next = key.String()
				}
			}
		}
	}
	return id, at, next
}

// pass notes what a message passed on means for the answers to come, and
// reports whether it may be passed on.
func (f *filter) pass(msg jsonrpc.Message, id jsontext.Value) bool {
	req, ok := msg.(*jsonrpc.Request)
	switch {
	case !ok:
		return true // a response to the server
	case req.ID.IsValid():
		return f.out.track(req.ID, id, req.Method == "subscriptions/listen")
	case req.Method == "notifications/cancelled":
		var p struct {
			RequestID any `json:"requestId"`
		}
		if json.Unmarshal(req.Params, &p) == nil {
			if id, err := jsonrpc.MakeID(p.RequestID); err == nil && id.IsValid() {
				f.out.cancel(id)
			}
		}
	}
	return true
}

var errBatch = errors.New("JSON-RPC batches are not taken (MCP has none since 2025-06-18)")
var errNotObject = errors.New("a JSON-RPC message is an object")
var errNotJSON = errors.New("the line is not JSON")

// reply answers a line with an error, under the id it was sent with, or
// null.
func (f *filter) reply(id jsontext.Value, code int, msg string) {
	if id == nil {
		id = jsontext.Value("null")
	}
	e, _ := json.Marshal(map[string]any{"code": code, "message": msg})
	f.out.send([]byte(`{"error":` + string(e) + `,"id":` + string(id) + `,"jsonrpc":"2.0"}` + "\n"))
}

func (f *filter) Close() error {
	f.end()
	return f.closer.Close()
}

// writer keeps whole messages whole (the SDK and filter both write), puts
// each response's id back as the client wrote it, drops the answers to
// cancelled requests, and keeps count of the requests not answered yet.
type writer struct {
	mu      sync.Mutex
	w       io.Writer
	open    map[string]request // requests without a response, by their id as the SDK reads it
	waiting int                // how many of them the end of stdin waits for
	gone    map[string]bool    // cancelled requests: their late answers are dropped
	wait    chan struct{}      // closed when waiting comes to 0; nil while it is 0
	failed  error              // the first write that failed
}

// request is a request in flight: its id as the client wrote it, and
// whether the end of stdin waits for its answer.
type request struct {
	raw    jsontext.Value
	stream bool
}

func newWriter(w io.Writer) *writer {
	return &writer{w: w, open: map[string]request{}, gone: map[string]bool{}}
}

func (l *writer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	key, at := responseID(p)
	if l.gone[key] {
		delete(l.gone, key)
		return len(p), nil
	}
	if r, ok := l.open[key]; ok && key != "" {
		if len(r.raw) > 0 {
			p = append(append(append([]byte(nil), p[:at[0]]...), r.raw...), p[at[1]:]...)
		}
		// Forgotten once written: the last answer must be out before the
		// end of stdin lets the server exit.
		defer l.forget(key)
	}
	return l.write(p)
}

// send writes a message of filter's own, as it is.
func (l *writer) send(p []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, _ = l.write(p)
}

func (l *writer) write(p []byte) (int, error) {
	n, err := l.w.Write(p)
	if err != nil && l.failed == nil {
		l.failed = err
	}
	return n, err
}

// responseID finds the id of an outgoing response, as the SDK wrote it,
// and where its bytes are. The SDK writes it near the start, with the
// result or the error next ({"jsonrpc":"2.0","id":7,"result":…}; a request
// of its own has its method next): only that start is read.
func responseID(p []byte) (string, [2]int) {
	id, at, next := idMember(p[:min(len(p), 4096)])
	var v any
	if id == nil || next != "result" && next != "error" || json.Unmarshal(id, &v) != nil {
		return "", [2]int{}
	}
	sdkID, err := jsonrpc.MakeID(v)
	if err != nil || !sdkID.IsValid() {
		return "", [2]int{}
	}
	return idKey(sdkID), at
}

// track notes a request passed on, with its id as the SDK reads it and as
// the client wrote it; stream says its answer is not waited for. It
// reports false if a request in flight has the same id as the SDK reads
// it.
func (l *writer) track(id jsonrpc.ID, raw jsontext.Value, stream bool) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	key := idKey(id)
	if _, taken := l.open[key]; taken {
		return false
	}
	delete(l.gone, key)
	l.open[key] = request{raw: raw, stream: stream}
	if !stream {
		if l.waiting++; l.wait == nil {
			l.wait = make(chan struct{})
		}
	}
	return true
}

// cancel forgets the request the client calls id, which gets no answer.
// The id is matched as the SDK reads it: 3.0 is the request 3, "\u0041"
// is "A".
func (l *writer) cancel(id jsonrpc.ID) {
	l.mu.Lock()
	defer l.mu.Unlock()
	key := idKey(id)
	if _, ok := l.open[key]; ok {
		l.gone[key] = true
		l.forget(key)
	}
}

func (l *writer) forget(key string) {
	r, ok := l.open[key]
	if !ok {
		return
	}
	delete(l.open, key)
	if !r.stream {
		if l.waiting--; l.waiting == 0 && l.wait != nil {
			close(l.wait)
			l.wait = nil
		}
	}
}

// allAnswered is closed once every request waited for has its answer.
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
