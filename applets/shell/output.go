package shell

import (
	"fmt"
	"os"
	"strings"

	"toolkit/internal/clean"
	"toolkit/internal/cut"
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
		spill: newSpill(dir, h.MaxOutput, h.MaxSpill),
		live:  h.Live,
	}
}

// buffer returns where the next read should go: buf, or the spill's block
// when the spill can take the bytes where they land.
func (o *output) buffer(buf []byte) []byte {
	if b := o.spill.room(); len(b) > 0 {
		return b[:min(len(b), len(buf))]
	}
	return buf
}

func (o *output) write(raw []byte) {
	o.rawBytes += int64(len(raw))
	o.spill.write(raw)
	held, text := o.clean.Write(raw)
	o.text(held)
	o.text(text)
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
