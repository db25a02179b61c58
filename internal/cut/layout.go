package cut

import (
	"bytes"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"toolkit/internal/text"
)

// Layout writes a cut text to b: the head, a line saying what the middle
// held and the failure lines from it, the tail, and the line that sums it
// up, which ends with where, where the whole text may be found. The failure
// lines are those that fit in r.Limit with the rest.
func (r Result) Layout(b *strings.Builder, where string) {
	b.Grow(r.Limit + 256)
	shown := fmt.Sprintf("lines 1-%d", r.HeadLines)
	if len(r.Tail) > 0 {
		shown += fmt.Sprintf(" and %d-%d", r.TailFirst, r.TotalLines)
	}
	summary := fmt.Sprintf("[output cut: showed %s of %d (%s); %s]", shown, r.TotalLines, Size(r.TotalBytes), where)
	cutLine := fmt.Sprintf("[… %s cut (%d bytes)", middle(r), r.MidBytes)
	// What the failure lines may take: the limit, less all the rest (the
	// cut line at its longest, and the marks of lines cut through).
	room := r.Limit - len(r.Head) - len(r.Tail) - len(summary) - len(cutLine) - len("; the first 20 of them that look like failures:]\n") - 8
	var failures []string
	for _, f := range r.Failures {
		l := fmt.Sprintf("[line %d] %s", f.Line, f.Text)
		if f.Cut {
			l += " …"
		}
		if room -= len(l) + 1; room < 0 {
			break
		}
		failures = append(failures, l)
	}
	b.Write(r.Head)
	if len(r.Head) > 0 && r.Head[len(r.Head)-1] != '\n' {
		b.WriteString(" …\n")
	}
	b.WriteString(cutLine)
	switch n := len(failures); {
	case n == 0:
		b.WriteString(" …]\n")
	case n < len(r.Failures) || n >= MaxFailures:
		// The middle is not read for more once the slots are full, and the
		// limit may hold fewer: how many there were in all is not said.
		fmt.Fprintf(b, "; the first %d of them that look like failures:]\n", n)
	case n == 1:
		b.WriteString("; 1 of them looks like a failure:]\n")
	default:
		fmt.Fprintf(b, "; %d of them look like failures:]\n", n)
	}
	for _, l := range failures {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	if r.TailPartial && len(r.Tail) > 0 {
		b.WriteString("… ")
	}
	b.Write(r.Tail)
	if len(r.Tail) > 0 && r.Tail[len(r.Tail)-1] != '\n' {
		b.WriteByte('\n')
	}
	b.WriteString(summary)
}

// middle names the lines of the cut middle, saying which are cut through.
func middle(r Result) string {
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

// Size formats n bytes for a person: "812 bytes", "12.3 KiB", "12.3 MiB".
func Size(n int64) string {
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

// Seconds formats d as "30 s", or "0.25 s" below a second or between whole ones.
func Seconds(d time.Duration) string {
	if d%time.Second == 0 {
		return fmt.Sprintf("%d s", d/time.Second)
	}
	return strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.3f", d.Seconds()), "0"), ".") + " s"
}

// Details are the facts of a text that was cut, for --json: the bytes
// kept and dropped, and the file that holds the whole text.
type Details struct {
	KeptBytes    int64  `json:"kept_bytes"`
	DroppedBytes int64  `json:"dropped_bytes"`
	SpillPath    string `json:"spill_path,omitempty"`
}

// Details are r's, the whole text in where: the middle dropped, or, for
// a text only its long lines were cut in, what they lost.
func (r Result) Details(where string) *Details {
	d := &Details{KeptBytes: int64(len(r.Head) + len(r.Tail)), DroppedBytes: r.MidBytes, SpillPath: where}
	if !r.Cut {
		d.DroppedBytes = max(0, r.TotalBytes-d.KeptBytes)
	}
	return d
}

// Finish writes the text the model sees to b, its lines longer than
// text.MaxLineChars characters cut as read cuts one, and reports whether
// anything was cut: then it ends with where() (asked only then), where the
// whole text is, after the cut's layout, or after the whole text and a line
// that says how many long lines were cut.
func (r *Result) Finish(b *strings.Builder, where func() string) bool {
	var n, m int
	r.Head, n = longLines(r.Head)
	r.Tail, m = longLines(r.Tail)
	switch {
	case r.Cut:
		r.Layout(b, where())
		return true
	case n+m == 0:
		b.Write(r.Head)
		return false
	}
	b.Write(r.Head)
	if len(r.Head) > 0 && r.Head[len(r.Head)-1] != '\n' {
		b.WriteByte('\n')
	}
	fmt.Fprintf(b, "[%s over %d characters cut; %s]", text.Count(int64(n+m), "line"), text.MaxLineChars, where())
	return true
}

// longLines cuts each line of b longer than text.MaxLineChars characters
// (text.CutLine, from its start), and says how many it cut. b itself is
// returned when none is that long.
func longLines(b []byte) ([]byte, int) {
	var out []byte // nil until a line is cut
	n := 0
	for start := 0; start < len(b); {
		end := len(b)
		if i := bytes.IndexByte(b[start:], '\n'); i >= 0 {
			end = start + i
		}
		line := b[start:end]
		long := len(line) > text.MaxLineChars && utf8.RuneCount(line) > text.MaxLineChars
		switch {
		case long && out == nil:
			out = append(make([]byte, 0, len(b)), b[:start]...)
			fallthrough
		case long:
			out = append(out, text.CutLine(string(line), 0)...)
			n++
		case out != nil:
			out = append(out, line...)
		}
		if end < len(b) && out != nil {
			out = append(out, '\n')
		}
		start = end + 1
	}
	if out == nil {
		return b, 0
	}
	return out, n
}
