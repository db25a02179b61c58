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
type filter struct {
	in      *bufio.Reader
	closer  io.Closer
	out     *lockedWriter
	max     int
	pending []byte
	err     error
}

func newFilter(r io.ReadCloser, out *lockedWriter, max int) *filter {
	return &filter{in: bufio.NewReaderSize(r, 64<<10), closer: r, out: out, max: max}
}

func (f *filter) Read(p []byte) (int, error) {
	for len(f.pending) == 0 {
		if f.err != nil {
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
			if err := wellFormed(trimmed); err != nil {
				f.reply(-32600, "invalid request: "+err.Error())
				continue
			}
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
func wellFormed(b []byte) error {
	if b[0] == '[' {
		return errBatch
	}
	if b[0] != '{' {
		return errNotObject
	}
	_, err := jsonrpc.DecodeMessage(b)
	return err
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

// lockedWriter keeps whole messages whole: the SDK and filter both write.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (l *lockedWriter) Close() error { return nil }
