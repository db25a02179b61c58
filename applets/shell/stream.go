package shell

import (
	"io"
	"os"
	"sync"
	"time"
	"unicode/utf8"

	"toolkit/internal/cmdline"
	"toolkit/internal/outcome"
)

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && cmdline.IsTerminal(f)
}

// streamer prints the text as NDJSON output events: one when 16 KiB have
// gathered or 100 ms after the first byte not yet printed, whichever is first.
type streamer struct {
	mu    sync.Mutex
	w     io.Writer
	buf   []byte
	timer *time.Timer
}

const (
	streamBytes = 16 << 10
	streamEvery = 100 * time.Millisecond
)

func newStreamer(w io.Writer) *streamer { return &streamer{w: w} }

func (s *streamer) add(text []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.buf = append(s.buf, text...)
	for len(s.buf) >= streamBytes {
		n := streamBytes
		for n > 0 && !utf8.RuneStart(s.buf[n]) {
			n--
		}
		s.emit(s.buf[:n])
		s.buf = s.buf[:copy(s.buf, s.buf[n:])]
	}
	if len(s.buf) > 0 && s.timer == nil {
		s.timer = time.AfterFunc(streamEvery, s.flush)
	}
}

func (s *streamer) flush() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.timer = nil
	if len(s.buf) > 0 {
		s.emit(s.buf)
		s.buf = s.buf[:0]
	}
}

func (s *streamer) emit(text []byte) {
	line := append([]byte(`{"type":"output","text":`), outcome.Marshal(string(text))...)
	_, _ = s.w.Write(append(line, "}\n"...))
}

// close prints what is left; after it, nothing more is printed.
func (s *streamer) close() {
	s.mu.Lock()
	if s.timer != nil {
		s.timer.Stop()
	}
	s.mu.Unlock()
	s.flush()
}
