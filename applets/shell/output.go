package shell

import (
	"io"
	"os"
	"strings"

	"toolkit/internal/clean"
	"toolkit/internal/cut"
	"toolkit/internal/jobs"
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
	dir, bounded := h.SpillDir, false
	if dir == "" {
		dir = os.TempDir()
		if d, err := jobs.SpillDir(); err == nil {
			dir, bounded = d, true
		}
	}
	o := &output{
		cut:   cut.New(h.MaxOutput),
		spill: newSpill(dir, h.MaxOutput, h.MaxSpill),
	}
	if bounded {
		o.spill.lifetime = h.JobLifetime // the state's spills are bounded, and say so
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
	if o.cut.Cutting() {
		o.spill.trimBehind()
	}
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
	b.Grow(len(r.cut.Head) + 4096)
	// The spill keeps the whole text when any of it was cut.
	if !r.cut.Finish(b, func() string { r.spillPath = o.spill.keep(); return o.spill.where() }) {
		o.spill.discard()
	}
	return r
}
