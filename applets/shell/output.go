package shell

import (
	"fmt"
	"io"
	"os"
	"strings"

	"toolkit/internal/clean"
	"toolkit/internal/cut"
)

// output is where the command's output goes as it arrives: the spill keeps
// the raw bytes, the cleaner makes text of them, the cutter keeps what the
// model will see, and a live view (if any) gets the text as it comes.
type output struct {
	clean    *clean.Cleaner
	cut      *cut.Cutter
	spill    *spill
	rawBytes int64
	live     *liveView // nil without a live view
}

func newOutput(h Options) *output {
	dir := h.SpillDir
	if dir == "" {
		dir = os.TempDir()
	}
	o := &output{
		cut:   cut.New(h.MaxOutput),
		spill: newSpill(dir, h.MaxOutput, h.MaxSpill),
	}
	var text io.Writer = o.cut
	if h.Live != nil {
		o.live = &liveView{show: h.Live}
		text = io.MultiWriter(o.cut, o.live)
	}
	o.clean = clean.New(text, h.Raw)
	return o
}

func (o *output) write(raw []byte) {
	if o.live != nil {
		o.live.mu.Lock()
		defer o.live.mu.Unlock()
		defer o.live.later(o.clean.Pending)
	}
	o.rawBytes += int64(len(raw))
	_, _ = o.spill.Write(raw)
	_, _ = o.clean.Write(raw)
}

type result struct {
	cut       cut.Result
	spillPath string
}

// finish ends the output and writes the text for the model to b: the whole
// text, or the cut one.
func (o *output) finish(b *strings.Builder) result {
	if o.live != nil {
		o.live.mu.Lock()
		defer o.live.mu.Unlock()
		o.live.stop()
	}
	_ = o.clean.Flush()
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
