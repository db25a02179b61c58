package shell

import (
	"fmt"
	"os"
	"strings"

	"toolkit/internal/clean"
	"toolkit/internal/cut"
	"toolkit/internal/tempfile"
)

// output is where the command's output goes as it arrives: the spill keeps
// the raw bytes, the cleaner makes text of them, the cutter keeps what the
// model will see, and a live view (if any) gets the text as it comes.
type output struct {
	clean    clean.Cleaner
	cut      *cut.Cutter
	spill    spill
	live     func([]byte)
	rawBytes int64
	liveAny  bool
	liveLast byte
}

func newOutput(h Options) *output {
	dir := h.SpillDir
	if dir == "" {
		dir = os.TempDir()
	}
	return &output{
		clean: clean.Cleaner{Raw: h.Raw},
		cut:   cut.New(h.MaxOutput),
		spill: spill{dir: dir, hold: min(h.MaxOutput, spillHold), mem: make([]byte, 0, min(h.MaxOutput, spillHold)), max: h.MaxSpill},
		live:  h.Live,
	}
}

func (o *output) write(raw []byte) {
	o.rawBytes += int64(len(raw))
	o.spill.write(raw)
	o.text(o.clean.Write(raw))
}

func (o *output) text(t []byte) {
	if len(t) == 0 {
		return
	}
	o.cut.Write(t)
	if o.live != nil {
		o.live(t)
		o.liveAny, o.liveLast = true, t[len(t)-1]
	}
}

type result struct {
	cut       cut.Result
	spillPath string
}

// finish ends the output and writes the text for the model to b: the whole
// text, or the cut one.
func (o *output) finish(b *strings.Builder) result {
	o.text(o.clean.Flush())
	r := result{cut: o.cut.Result()}
	if !r.cut.Cut {
		o.spill.discard()
		b.Grow(len(r.cut.Head) + 4096)
		b.Write(r.cut.Head)
		return r
	}
	r.spillPath = o.spill.keep()
	assemble(b, r.cut, o.spill.where())
	return r
}

// spillHold is the most raw output kept in memory before the spill file is
// made. It is small rather than the whole limit: the cutter holds the text
// already, and fresh memory costs more to touch than a file costs to write
// (a page fault took about 10 µs on the virtual machines this was measured on).
const spillHold = 64 << 10

// spill keeps the raw output in a file, but only when the text is cut: the
// first hold bytes wait in memory, and the file is made when more come (and
// removed again if there was no cut after all). It stops at max bytes.
type spill struct {
	dir  string
	max  int64
	hold int
	mem  []byte
	f    *os.File
	size int64
	over bool // the output went on past max
	err  error
	path string
}

func (s *spill) write(p []byte) {
	if s.err != nil || s.over {
		return
	}
	if s.f == nil {
		if len(s.mem)+len(p) <= s.hold {
			s.mem = append(s.mem, p...)
			return
		}
		if !s.open() {
			return
		}
	}
	s.put(p)
}

func (s *spill) open() bool {
	f, err := tempfile.Create(s.dir, "toolkit-shell-", ".log")
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
	if room := s.max - s.size; int64(len(p)) > room {
		p = p[:room]
		s.over = true
	}
	n, err := s.f.Write(p)
	s.size += int64(n)
	if err != nil {
		s.err = err
		return
	}
	if s.over {
		_, _ = fmt.Fprintf(s.f, "\n[toolkit: the output went on; this file keeps its first %d bytes]\n", s.max)
	}
}

// keep makes sure the file holds the output, closes it, and returns its path.
func (s *spill) keep() string {
	if s.f == nil && s.err == nil {
		s.open()
	}
	if s.f != nil {
		if err := s.f.Close(); err != nil && s.err == nil {
			s.err = err
		}
	}
	return s.path
}

// discard removes the file, if one was made.
func (s *spill) discard() {
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
		return fmt.Sprintf("the output could not all be kept (%s); its first %d bytes are in %s", errText(s.err), s.size, s.path)
	case s.over:
		return fmt.Sprintf("the first %s of the output is in %s", size(s.max), s.path)
	}
	return "the whole output is in " + s.path
}

func errText(err error) string {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Path + ": " + pe.Err.Error()
	}
	return err.Error()
}

// assemble lays out a cut text: the head, a line saying what the middle held
// and the failure lines from it, the tail, and the line that sums it up.
func assemble(b *strings.Builder, r cut.Result, where string) {
	b.Grow(len(r.Head) + len(r.Tail) + 16384)
	b.Write(r.Head)
	if len(r.Head) > 0 && r.Head[len(r.Head)-1] != '\n' {
		b.WriteString(" …\n")
	}
	fmt.Fprintf(b, "[… %s cut (%d bytes)", middle(r), r.MidBytes)
	if n := len(r.Failures); n > 0 {
		if n == 1 {
			b.WriteString("; 1 of them looks like a failure:]\n")
		} else {
			fmt.Fprintf(b, "; %d of them look like failures:]\n", n)
		}
		for _, f := range r.Failures {
			fmt.Fprintf(b, "[line %d] %s", f.Line, f.Text)
			if f.Cut {
				b.WriteString(" …")
			}
			b.WriteByte('\n')
		}
	} else {
		b.WriteString(" …]\n")
	}
	if r.TailPartial && len(r.Tail) > 0 {
		b.WriteString("… ")
	}
	b.Write(r.Tail)
	if len(r.Tail) > 0 && r.Tail[len(r.Tail)-1] != '\n' {
		b.WriteByte('\n')
	}
	shown := fmt.Sprintf("lines 1-%d", r.HeadLines)
	if len(r.Tail) > 0 {
		shown += fmt.Sprintf(" and %d-%d", r.TailFirst, r.TotalLines)
	}
	fmt.Fprintf(b, "[output cut: showed %s of %d (%s); %s]", shown, r.TotalLines, size(r.TotalBytes), where)
}

// middle names the lines of the cut middle, saying which are cut through.
func middle(r cut.Result) string {
	if r.MidFirst == r.MidLast {
		if r.HeadPartial || r.TailPartial {
			return fmt.Sprintf("part of line %d", r.MidFirst)
		}
		return fmt.Sprintf("line %d", r.MidFirst)
	}
	s := fmt.Sprintf("lines %d-%d", r.MidFirst, r.MidLast)
	switch {
	case r.HeadPartial && r.TailPartial:
		s += fmt.Sprintf(" (%d and %d only in part)", r.MidFirst, r.MidLast)
	case r.HeadPartial:
		s += fmt.Sprintf(" (%d only in part)", r.MidFirst)
	case r.TailPartial:
		s += fmt.Sprintf(" (%d only in part)", r.MidLast)
	}
	return s
}

// size formats n bytes for a person: "812 bytes", "12.3 KiB", "12.3 MiB".
func size(n int64) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d bytes", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	case n < 1<<30:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
}
