package shell

import (
	"bytes"
	"io"
	"os"
	"sync"
	"time"
	"unicode/utf8"

	"toolkit/internal/cmdline"
	"toolkit/internal/outcome"
)

// liveView passes the text to a live view (--stream, or a terminal) as it
// comes. Text the cleaner holds back, a line without its end that a later
// "\r" may still redraw, is shown too once the output has been quiet for
// unfinished: a prompt ("Enter name: ") must not wait for its line's end.
// What comes after it then shows only what was not shown; a redraw that
// changed what was shown starts a line of its own.
type liveView struct {
	mu    sync.Mutex // held by the output's writes and by the timer
	show  func([]byte)
	shown []byte // what was shown of the line held back
	timer *time.Timer
	done  bool // the output is finished: the timer shows nothing more
	any   bool
	last  byte // the last byte shown
}

// unfinished is how long output is quiet before a line without its end shows.
const unfinished = 100 * time.Millisecond

// Write takes final text from the cleaner.
func (l *liveView) Write(t []byte) (int, error) {
	if len(t) == 0 {
		return 0, nil
	}
	n := len(t)
	if len(l.shown) > 0 {
		if rest, ok := bytes.CutPrefix(t, l.shown); ok {
			t = rest
		} else {
			l.emit([]byte{'\n'})
		}
		l.shown = l.shown[:0]
	}
	l.emit(t)
	return n, nil
}

func (l *liveView) emit(t []byte) {
	if len(t) > 0 {
		l.show(t)
		l.any, l.last = true, t[len(t)-1]
	}
}

// later arms the timer that shows the held-back line, when there is one.
// It is called with mu held.
func (l *liveView) later(pending func() []byte) {
	if l.timer != nil {
		l.timer.Stop()
	}
	if len(pending()) == 0 {
		return
	}
	l.timer = time.AfterFunc(unfinished, func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		p := pending()
		if l.done || len(p) == 0 {
			return
		}
		if rest, ok := bytes.CutPrefix(p, l.shown); ok {
			l.emit(rest)
		} else {
			l.emit(append([]byte{'\n'}, p...))
		}
		l.shown = append(l.shown[:0], p...)
	})
}

// stop ends the timer; called with mu held.
func (l *liveView) stop() {
	l.done = true
	if l.timer != nil {
		l.timer.Stop()
	}
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && cmdline.IsTerminal(f)
}

// streamer prints the text as NDJSON output events: one when 16 KiB have
// gathered or 100 ms after the first byte not yet printed, whichever is first.
type streamer struct {
	mu     sync.Mutex
	w      io.Writer
	closed func() // called when a write fails: nobody reads any more
	buf    []byte
	timer  *time.Timer
}

const (
	streamBytes = 16 << 10
	streamEvery = 100 * time.Millisecond
)

func newStreamer(w io.Writer, closed func()) *streamer { return &streamer{w: w, closed: closed} }

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
	if _, err := s.w.Write(append(line, "}\n"...)); err != nil {
		s.closed()
	}
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
