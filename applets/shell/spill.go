package shell

import (
	"fmt"
	"math"
	"os"
	"time"

	"toolkit/internal/cut"
	"toolkit/internal/jobs"
	"toolkit/internal/root"
	"toolkit/internal/tempfile"
)

// spillHold is the most raw output kept in memory before the spill file is
// made: most calls' output is smaller, and is never cut.
const spillHold = 64 << 10

// spill keeps the raw output in a file, but only when the text is cut: the
// first spillHold bytes wait in memory, and the file is made when more come
// (and removed again if there was no cut after all). It keeps at most max
// bytes, and says so at its end when the output went on.
type spill struct {
	dir string
	max int64
	// lifetime bounds how long spills are kept (the job lifetime); with
	// the cap on all of them together (jobs.TrimSpills), it is said where
	// the path is.
	lifetime time.Duration
	bound    string
	// room is the most this spill may hold before an older one must go,
	// as the last trim found it; trimming brings the room a trim in flight
	// finds (nil when none is). See trimBehind.
	room     int64
	trimming chan int64
	mem      []byte
	f        *os.File
	size     int64 // bytes in the file
	over     bool  // the output went on past max
	path     string

	// The first write that failed, and how much of the output the file
	// holds before it.
	err   error
	errAt int64
}

func newSpill(dir string, limit int, max int64) *spill {
	return &spill{dir: dir, max: max, mem: make([]byte, 0, min(limit, spillHold))}
}

// Write keeps p. It never fails: a failure is said by where.
func (s *spill) Write(p []byte) (int, error) {
	n := len(p)
	if s.err != nil || s.over {
		return n, nil
	}
	if s.f == nil {
		if len(s.mem)+len(p) <= cap(s.mem) {
			s.mem = append(s.mem, p...)
			return n, nil
		}
		if !s.open() {
			return n, nil
		}
	}
	if room := s.max - s.size; int64(len(p)) > room {
		p = p[:room]
		s.over = true
	}
	s.put(p)
	if s.over && s.err == nil {
		_, _ = fmt.Fprintf(s.f, "\n[toolkit: the output went on; this file keeps its first %d bytes]\n", s.max)
	}
	return n, nil
}

func (s *spill) open() bool {
	f, err := tempfile.Create(s.dir, jobs.SpillPrefix, jobs.SpillSuffix)
	if err != nil {
		s.err = err
		s.mem = nil
		return false
	}
	s.f, s.path = f, f.Name()
	s.put(s.mem)
	s.mem = nil
	return s.err == nil
}

func (s *spill) put(p []byte) {
	n, err := s.f.Write(p)
	s.size += int64(n)
	if err != nil {
		s.err, s.errAt = err, s.size
	}
}

// trimBehind trims the older spills to their bounds in the background,
// while this one grows past the room they leave it: the removal of a large
// file then overlaps the command's run instead of following it. It is
// called once the output is cut, so that only a spill that is kept makes
// an older one go.
func (s *spill) trimBehind() {
	if s.f == nil || s.lifetime <= 0 {
		return
	}
	if s.trimming != nil {
		select {
		case s.room = <-s.trimming:
			s.trimming = nil
		default:
			return
		}
	}
	if s.size <= s.room {
		return
	}
	done := make(chan int64, 1)
	s.trimming = done
	lifetime, path := s.lifetime, s.path
	go func() {
		kept, room := jobs.TrimSpills(lifetime, path)
		if kept.Files <= 1 {
			room = math.MaxInt64 // none older is left to go: no more trims
		}
		done <- room
	}()
}

// trimmed waits for the trim in flight, if there is one.
func (s *spill) trimmed() {
	if s.trimming != nil {
		s.room = <-s.trimming
		s.trimming = nil
	}
}

// keep makes sure the file holds the output, closes it, and returns its
// path; the spills kept are trimmed to their bounds, this one kept.
func (s *spill) keep() string {
	s.trimmed()
	if s.f == nil && s.err == nil {
		s.open()
	}
	if s.f != nil {
		if err := s.f.Close(); err != nil && s.err == nil {
			s.err, s.errAt = err, s.size
		}
	}
	if s.path != "" && s.lifetime > 0 {
		kept, _ := jobs.TrimSpills(s.lifetime, s.path)
		s.bound = jobs.SpillBound(s.lifetime, jobs.SpillCap(kept.Dir, kept.Bytes))
	}
	return s.path
}

// discard removes the file, if one was made.
func (s *spill) discard() {
	s.trimmed()
	if s.f != nil {
		s.f.Close()
		os.Remove(s.path)
	}
	s.mem = nil
}

// where says where the whole output is, for the cut line.
func (s *spill) where() string {
	switch {
	case s.path == "":
		return "the whole output could not be kept: " + errText(s.err)
	case s.err != nil:
		return fmt.Sprintf("the output could not all be kept (%s); its first %d bytes are in %s", errText(s.err), s.errAt, s.path)
	case s.over:
		return fmt.Sprintf("the first %s of the output is in %s%s", cut.Size(s.max), s.path, s.boundText())
	}
	return "the whole output is in " + s.path + s.boundText()
}

// boundText is ", kept for 1 h or until 1.0 GiB of newer output", where
// the spill is kept under those bounds.
func (s *spill) boundText() string {
	if s.bound == "" {
		return ""
	}
	return ", " + s.bound
}

// errText is err with the path it is about, when it has one.
func errText(err error) string {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Path + ": " + root.Reason(err)
	}
	return root.Reason(err)
}
