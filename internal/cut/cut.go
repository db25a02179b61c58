// Package cut keeps the parts of a long text that a model needs: its start,
// its end, and the lines in between that look like failures, with exact
// counts of what was left out. It works on a stream, in bounded memory.
//
// A text of at most Limit bytes is kept whole. A longer one keeps a head and
// a tail of (Limit - Room(Limit))/2 bytes each: its first bytes cut back to
// the end of a line, its last bytes cut forward to the start of a line; and
// from the middle the first MaxFailures lines that contain "error", "fail",
// "fatal", "panic", "exception" or "traceback" in any case, each shown with
// its line number, as many as the room left holds. A part that holds no
// line end at all is cut at the byte limit instead, never inside a UTF-8
// character. Laid out, a cut text is at most Limit bytes, the lines that
// say what was cut included, for any Limit of 1 KiB or more.
package cut

import (
	"bytes"
	"slices"
	"unicode/utf8"
)

// DefaultLimit is the text limit of a command's output, a shell call's or
// a job's look, on the command line (toolkit mcp's is smaller).
const DefaultLimit = 1 << 20

// MaxFailures is how many failure lines are kept from the middle.
const MaxFailures = 20

// MaxFailureLine bounds a kept failure line, in bytes.
const MaxFailureLine = 500

// Failure is a line from the dropped middle that looks like a failure.
type Failure struct {
	Line int64  // its line number, from 1
	Text string // the line, at most MaxFailureLine bytes of it
	Cut  bool   // the line was longer than Text
}

// Cutter cuts one text stream. Create it with New.
type Cutter struct {
	limit, half int

	all   []byte // the whole text, while it is within the limit
	cut   bool   // the text went over the limit
	head  []byte
	ring  []byte // the last half bytes of the text, circular
	rpos  int    // where the oldest byte of ring is, once it is full
	total int64  // bytes written
	last  byte   // the last byte written

	mid        int64 // bytes moved to the middle so far
	beforeRing byte  // the byte just before the ring's oldest one
	scanner    scanner
}

// Room is what a cut text keeps of limit for the lines that say what was
// cut and the failure lines: a quarter, at most 12 KiB (the cut line,
// MaxFailures lines of MaxFailureLine bytes and the summary).
func Room(limit int) int { return min(limit/4, 12<<10) }

// New returns a Cutter that keeps texts of up to limit bytes whole.
func New(limit int) *Cutter {
	if limit < 4*utf8.UTFMax {
		limit = 4 * utf8.UTFMax
	}
	// The whole capacity at once: memory not yet written costs nothing, and
	// growing by copies would touch every page twice or more.
	return &Cutter{limit: limit, half: (limit - Room(limit)) / 2, all: make([]byte, 0, limit)}
}

// Write adds text to the stream. It never fails.
func (c *Cutter) Write(p []byte) (int, error) {
	n := len(p)
	if n == 0 {
		return 0, nil
	}
	c.total += int64(len(p))
	c.last = p[len(p)-1]
	if !c.cut {
		if len(c.all)+len(p) <= c.limit {
			c.all = append(c.all, p...)
			return n, nil
		}
		// Fill the text up to the limit, so that the head is found in it.
		n := c.limit - len(c.all)
		c.all = append(c.all, p[:n]...)
		p = p[n:]
		c.startCut()
	}
	c.push(p)
	return n, nil
}

// Cutting reports whether the text has gone over the limit: it will be cut.
func (c *Cutter) Cutting() bool { return c.cut }

var nl = []byte{'\n'}

// startCut turns the text kept so far into the head and the start of the tail.
func (c *Cutter) startCut() {
	c.cut = true
	h := bytes.LastIndexByte(c.all[:c.half], '\n') + 1
	if h == 0 {
		h = runeStart(c.all, c.half)
	}
	c.head = c.all[:h:h]
	c.beforeRing = '\n'
	if h > 0 {
		c.beforeRing = c.head[h-1]
	}
	c.scanner.line = int64(bytes.Count(c.head, nl)) + 1
	// The ring is the text's last half, in place at the end of all: no new
	// memory, whatever the size of the output. What lies between the head
	// and it is the start of the middle.
	n := len(c.all)
	c.drop(c.all[h : n-c.half])
	c.ring = c.all[n-c.half : n : n]
	c.rpos = 0
	c.all = nil
}

// push appends p to the ring, moving what falls out of it to the middle.
func (c *Cutter) push(p []byte) {
	if room := c.half - len(c.ring); room > 0 {
		n := min(room, len(p))
		c.ring = append(c.ring, p[:n]...)
		p = p[n:]
	}
	if len(p) >= c.half {
		// p alone fills the ring: all of the ring, and p but its end, fall out.
		c.drop(c.ring[c.rpos:])
		c.drop(c.ring[:c.rpos])
		c.drop(p[:len(p)-c.half])
		c.rpos = copy(c.ring, p[len(p)-c.half:]) % c.half
		return
	}
	for len(p) > 0 {
		n := min(len(p), c.half-c.rpos)
		c.drop(c.ring[c.rpos : c.rpos+n])
		copy(c.ring[c.rpos:], p[:n])
		c.rpos = (c.rpos + n) % c.half
		p = p[n:]
	}
}

func (c *Cutter) drop(b []byte) {
	if len(b) > 0 {
		c.mid += int64(len(b))
		c.beforeRing = b[len(b)-1]
		c.scanner.write(b)
	}
}

// runeStart returns the largest i ≤ n at which a UTF-8 character starts in b.
func runeStart(b []byte, n int) int {
	for i := n; i > 0 && i > n-utf8.UTFMax; i-- {
		if i == len(b) || utf8.RuneStart(b[i]) {
			return i
		}
	}
	return n
}

// Result is what a Cutter kept of the whole text.
type Result struct {
	Cut        bool
	Limit      int    // the limit it was cut to
	Head, Tail []byte // the whole text is Head when nothing was cut
	Failures   []Failure

	TotalBytes, TotalLines int64
	// The lines shown: 1 to HeadLines, and TailFirst to TotalLines. A line
	// cut through is counted in both the part it is shown in and the middle.
	HeadLines, TailFirst int64
	// The middle: its size, and its first and last line.
	MidBytes                 int64
	MidFirst, MidLast        int64
	HeadPartial, TailPartial bool // the head ends, or the tail starts, inside a line
}

// Result ends the stream and returns what was kept.
func (c *Cutter) Result() Result {
	r := Result{TotalBytes: c.total, Limit: c.limit}
	if c.total > 0 && c.last != '\n' {
		r.TotalLines++ // the unfinished last line
	}
	if !c.cut {
		r.Head = c.all
		r.TotalLines += int64(bytes.Count(c.all, nl))
		r.HeadLines = r.TotalLines
		return r
	}
	// Put the ring in order, then find the start of its first whole line.
	slices.Reverse(c.ring[:c.rpos])
	slices.Reverse(c.ring[c.rpos:])
	slices.Reverse(c.ring)
	tail := c.ring
	start := 0
	if c.beforeRing != '\n' {
		if i := bytes.IndexByte(tail, '\n'); i >= 0 && i+1 < len(tail) {
			start = i + 1
		} else {
			for start < len(tail) && start < utf8.UTFMax && !utf8.RuneStart(tail[start]) {
				start++
			}
			r.TailPartial = true
		}
	}
	c.drop(tail[:start])
	if r.TailPartial {
		c.scanner.endPartial()
	}
	// The line ends are counted once each: the head's and the middle's by
	// the scanner, which numbers the middle's lines, and the tail's here.
	tailEnds := int64(bytes.Count(tail[start:], nl))
	r.TotalLines += c.scanner.line - 1 + tailEnds
	r.Cut = true
	r.Head = c.head
	r.Tail = tail[start:]
	r.Failures = c.scanner.found
	r.MidBytes = c.mid
	r.HeadPartial = len(c.head) > 0 && c.head[len(c.head)-1] != '\n'
	r.HeadLines = int64(bytes.Count(c.head, nl))
	if r.HeadPartial {
		r.HeadLines++
	}
	r.TailFirst = r.TotalLines - tailEnds + 1
	if c.last != '\n' {
		r.TailFirst--
	}
	r.MidFirst = r.HeadLines + 1
	if r.HeadPartial {
		r.MidFirst = r.HeadLines
	}
	r.MidLast = r.TailFirst - 1
	if r.TailPartial {
		r.MidLast = r.TailFirst
	}
	return r
}

// scanner follows the middle line by line and keeps the failure lines.
type scanner struct {
	line   int64 // the number of the line being read
	hit    bool  // the line being read looks like a failure
	text   []byte
	size   int64             // bytes of the line so far
	carry  [maxWord - 1]byte // the end of the line so far, for a word split across writes
	ncarry int
	found  []Failure
}

func (s *scanner) write(b []byte) {
	tables.Do(fillTables) // at the first output: a call with none never fills them
	if len(s.found) >= MaxFailures {
		s.line += int64(bytes.Count(b, nl))
		return
	}
	if !s.hit && !s.joins(b) && !hasFailure(b) {
		// The common case: no failure word in b. Count its lines; only the
		// line it leaves unfinished needs following.
		if n := bytes.Count(b, nl); n > 0 {
			s.line += int64(n)
			s.reset()
			b = b[bytes.LastIndexByte(b, '\n')+1:]
		}
		s.extend(b)
		return
	}
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		piece := b
		if i >= 0 {
			piece = b[:i]
		}
		if !s.hit {
			s.hit = s.joins(piece) || hasFailure(piece)
		}
		s.extend(piece)
		if i < 0 {
			return
		}
		s.endLine()
		s.line++
		s.reset()
		b = b[i+1:]
	}
}

// extend adds piece, which holds no line end, to the line being read.
func (s *scanner) extend(piece []byte) {
	if len(piece) == 0 {
		return
	}
	// A few bytes past the bound, to cut it at a character boundary.
	if n := min(len(piece), MaxFailureLine+utf8.UTFMax-len(s.text)); n > 0 {
		s.text = append(s.text, piece[:n]...)
	}
	s.size += int64(len(piece))
	if len(piece) >= len(s.carry) {
		s.ncarry = copy(s.carry[:], piece[len(piece)-len(s.carry):])
		return
	}
	keep := min(s.ncarry, len(s.carry)-len(piece))
	copy(s.carry[:], s.carry[s.ncarry-keep:s.ncarry])
	s.ncarry = keep + copy(s.carry[keep:], piece)
}

// joins reports whether a failure word spans the carried end of the line and
// the start of b.
func (s *scanner) joins(b []byte) bool {
	if s.ncarry == 0 || len(b) == 0 {
		return false
	}
	var buf [2 * maxWord]byte
	n := copy(buf[:], s.carry[:s.ncarry])
	n += copy(buf[n:], b[:min(len(b), maxWord-1)])
	return hasFailure(buf[:n])
}

// passing are the starts of test runners' lines that report a test
// starting or passing: "=== RUN   TestFailover" names a failure word and
// says nothing failed.
var passing = [][]byte{[]byte("=== RUN"), []byte("=== PAUSE"), []byte("=== CONT"), []byte("=== NAME"), []byte("--- PASS"), []byte("--- SKIP")}

// endLine keeps the line being read if it looks like a failure.
func (s *scanner) endLine() {
	if !s.hit || len(s.found) >= MaxFailures {
		return
	}
	for _, p := range passing {
		if bytes.HasPrefix(bytes.TrimLeft(s.text, " \t"), p) {
			return
		}
	}
	text := s.text[:runeStart(s.text, min(len(s.text), MaxFailureLine))]
	cut := int64(len(text)) < s.size
	s.found = append(s.found, Failure{Line: s.line, Text: string(bytes.ToValidUTF8(text, []byte("\uFFFD"))), Cut: cut})
}

// endPartial ends the middle inside a line (the tail shows the rest of it).
func (s *scanner) endPartial() {
	s.endLine()
	s.reset()
}

func (s *scanner) reset() {
	s.hit = false
	s.text = s.text[:0]
	s.size = 0
	s.ncarry = 0
}
