// Package clean turns a command's raw output into text a model can read, as
// it streams: terminal escape sequences removed, a line that redraws itself
// with carriage returns reduced to what it last showed, and invalid UTF-8
// replaced by U+FFFD.
//
// The rules, byte by byte:
//
//   - CSI (ESC [ params intermediates final), which carries colours and cursor
//     moves, is removed. A byte that cannot be part of it (a control byte, a
//     byte ≥ 0x80) ends it and is kept.
//   - OSC, DCS, SOS, PM and APC strings (ESC ] … BEL or ESC \, and the like),
//     which carry titles and hyperlinks, are removed. One that runs to a
//     newline or past 4096 bytes without ending is abandoned there: the rest
//     of the output is kept.
//   - Other escape sequences (ESC 7, ESC ( B, …) are removed; an ESC followed
//     by a byte that cannot continue it is dropped alone.
//   - A carriage return moves back to the start of the line: whatever the line
//     shows next replaces what it showed. "\r\n" and a "\r" with nothing after
//     it on the line erase nothing, so "50%\r100%\n" is "100%\n" and "done\r\n"
//     is "done\n".
//   - Invalid UTF-8 becomes U+FFFD, one per byte that cannot start a character.
//     A sequence split between two writes is still one character.
//
// The escape states follow the DEC/ANSI parser that vt100.net describes
// (https://vt100.net/emu/dec_ansi_parser): ground, escape, escape
// intermediate, CSI, and the strings, one method each. toolkit only removes
// what they recognise, so it needs none of the parser's actions.
//
// Memory is bounded whatever comes: the line being written is held back (a
// later "\r" may erase it) only up to MaxPending bytes, and sequences are never
// buffered at all. With Raw set, only the UTF-8 rule applies.
package clean

import (
	"bytes"
	"io"
	"unicode/utf8"
)

// MaxPending is how much of an unfinished line is held back. Past it, the
// line so far is passed on, and a later "\r" erases only what came after.
const MaxPending = 64 << 10

// maxString bounds an OSC/DCS/… string before it is abandoned.
const maxString = 4096

// maxCSI bounds a CSI sequence before it is abandoned.
const maxCSI = 256

const esc = 0x1b

// state is where the parser is between two bytes.
type state uint8

const (
	ground       state = iota
	escape             // after ESC
	intermediate       // after ESC and intermediate bytes (ESC ( B)
	csi                // after ESC [
	str                // inside an OSC, DCS, SOS, PM or APC string
	strEsc             // after ESC inside a string: "\" ends it
)

// Cleaner cleans one stream and writes its text to the writer it was made
// with. Text that a later byte may still change (the unfinished line) is
// written only once it is final, or at Flush.
type Cleaner struct {
	w   io.Writer
	raw bool

	st     state
	seqLen int  // bytes so far in the current CSI or string
	held   int  // outside ground: bytes of the stream in the sequence so far, from its ESC
	erase  bool // a "\r" was seen; the next visible byte starts the line over
	carry  [utf8.UTFMax]byte
	ncarry int
	out    []byte // the unfinished line held back, then what this write adds

	noPassThrough bool // tests: every byte through the states
}

// New returns a Cleaner that writes text to w; with raw, it only replaces
// invalid UTF-8.
func New(w io.Writer, raw bool) *Cleaner {
	return &Cleaner{w: w, raw: raw}
}

// Write cleans p. It always takes all of p; the error is the writer's.
func (c *Cleaner) Write(p []byte) (int, error) {
	n := len(p)
	if c.passThrough(p) {
		return n, c.writeThrough(p)
	}
	if c.ncarry > 0 {
		p = c.finishCarry(p)
	}
	if c.raw {
		c.appendText(p)
		return n, c.emit(len(c.out))
	}
	// The held-back line has no line end: the final text ends at the
	// last line end after it, if any.
	for i := 0; i < len(p); {
		if c.st == ground {
			i += c.ground(p[i:])
			if c.st != ground {
				c.held = 1 // the ESC that began a sequence
			}
		} else if c.step(p[i]) {
			i++
			c.held++ // counted while a sequence runs, read only then
		}
	}
	end := lastNewline(c.out) + 1
	if len(c.out)-end > MaxPending {
		end = len(c.out)
	}
	return n, c.emit(end)
}

// passThrough reports whether p is text as it stands: valid UTF-8 with no
// ESC and no CR, coming between whole characters, outside any sequence.
// Most output is.
func (c *Cleaner) passThrough(p []byte) bool {
	if c.ncarry > 0 || c.st != ground || c.erase || c.noPassThrough {
		return false
	}
	if !c.raw && (bytes.IndexByte(p, esc) >= 0 || bytes.IndexByte(p, '\r') >= 0) {
		return false
	}
	return utf8.Valid(p)
}

// writeThrough writes p, which needs no cleaning, without copying it: the
// held-back line first, then p up to its last line end; the rest of p is
// held back in turn (a later "\r" may erase it).
func (c *Cleaner) writeThrough(p []byte) error {
	final := len(p)
	if !c.raw {
		if i := lastNewline(p); i >= 0 && len(p)-i-1 <= MaxPending {
			final = i + 1
		} else if i < 0 && len(c.out)+len(p) <= MaxPending {
			final = 0
		}
	}
	if final == 0 {
		c.out = append(c.out, p...)
		return nil
	}
	if err := c.emit(len(c.out)); err != nil {
		return err
	}
	if _, err := c.w.Write(p[:final]); err != nil {
		return err
	}
	c.out = append(c.out[:0], p[final:]...)
	return nil
}

// emit writes out[:end] and keeps the rest, the unfinished line, at the
// front of out.
func (c *Cleaner) emit(end int) error {
	var err error
	if end > 0 {
		_, err = c.w.Write(c.out[:end])
	}
	c.out = c.out[:copy(c.out, c.out[end:])]
	return err
}

// Pending is the unfinished line held back so far: what the stream shows
// now but a later "\r" may still erase. It is valid until the next Write.
func (c *Cleaner) Pending() []byte { return c.out }

// Unfinished is how many bytes at the end of what was written are a
// character or an escape sequence not finished yet: a stream that stops
// here for now (a job's log, looked at while it grows) shows them whole
// once it goes on from their first byte.
func (c *Cleaner) Unfinished() int {
	if c.st != ground {
		return c.held
	}
	return c.ncarry
}

// Hold writes the unfinished line, as Flush does, and leaves out what
// Unfinished counts, for a later stream to take up.
func (c *Cleaner) Hold() error {
	c.ncarry, c.held, c.st = 0, 0, ground
	return c.emit(len(c.out))
}

// Flush writes the rest of the text at the end of the stream: the unfinished
// line, and U+FFFD for an incomplete character. A lone ESC or an unfinished
// sequence at the end is dropped.
func (c *Cleaner) Flush() error {
	for range c.ncarry {
		c.visible()
		c.out = append(c.out, "\uFFFD"...)
	}
	c.ncarry = 0
	c.st = ground
	return c.emit(len(c.out))
}

// visible is called before a byte that shows on the line: after a "\r", it
// starts the line over.
func (c *Cleaner) visible() {
	if c.erase {
		c.erase = false
		c.out = c.out[:bytes.LastIndexByte(c.out, '\n')+1]
	}
}

// ground takes text up to the next byte that needs a look, and that byte,
// and returns how many bytes of p it used.
func (c *Cleaner) ground(p []byte) int {
	i := 0
	for i < len(p) && !special[p[i]] {
		i++
	}
	if i > 0 {
		if c.erase {
			// Text after a "\r": the line starts over, unless the text
			// begins with the line's end.
			if p[0] == '\n' {
				c.erase = false
			} else {
				c.visible()
			}
		}
		c.out = append(c.out, p[:i]...)
		return i
	}
	switch p[0] {
	case esc:
		if n := csiLen(p); n > 0 {
			return n // a whole CSI sequence (a colour, most often): stepped over at once
		}
		c.st = escape
		return 1
	case '\r':
		c.erase = true
		return 1
	}
	c.visible()
	return c.appendRune(p)
}

// special marks the bytes that end a run of text in the ground state.
var special = func() (t [256]bool) {
	t[esc], t['\r'] = true, true
	for b := utf8.RuneSelf; b < 256; b++ {
		t[b] = true
	}
	return t
}()

// csiLen is the length of the complete CSI sequence at the start of p, as
// csiParam takes it, or 0 when p does not hold all of one.
func csiLen(p []byte) int {
	if len(p) < 3 || p[1] != '[' {
		return 0
	}
	for j := 2; j < len(p) && j < maxCSI+1; j++ {
		switch b := p[j]; {
		case b >= 0x40 && b <= 0x7e:
			return j + 1
		case b < 0x20 || b > 0x3f:
			return 0
		}
	}
	return 0
}

// step feeds one byte to the escape states, and reports whether it was
// used: a byte that ends a sequence without being part of it goes back to
// the ground state to be looked at again.
func (c *Cleaner) step(b byte) bool {
	switch c.st {
	case escape:
		return c.escape(b)
	case intermediate:
		return c.intermediate(b)
	case csi:
		return c.csiParam(b)
	case str:
		return c.string(b)
	}
	return c.stringEscape(b)
}

// escape: after ESC. "[" opens a CSI; "]", "P", "X", "^" and "_" open a
// string; an intermediate byte (0x20-0x2f) waits for its final; a final byte
// (0x30-0x7e) ends the sequence; anything else drops the ESC alone.
func (c *Cleaner) escape(b byte) bool {
	switch {
	case b == '[':
		c.st, c.seqLen = csi, 0
	case b == ']' || b == 'P' || b == 'X' || b == '^' || b == '_':
		c.st, c.seqLen = str, 0
	case b >= 0x20 && b <= 0x2f:
		c.st = intermediate
	case b >= 0x30 && b <= 0x7e:
		c.st = ground
	case b == esc:
		// ESC ESC: the first is dropped, the second starts afresh.
	default:
		c.st = ground
		return false
	}
	return true
}

// intermediate: ESC and intermediate bytes (ESC ( B): more of them, then a
// final byte.
func (c *Cleaner) intermediate(b byte) bool {
	switch {
	case b >= 0x20 && b <= 0x2f:
		return true
	case b >= 0x30 && b <= 0x7e:
		c.st = ground
		return true
	}
	c.st = ground
	return false
}

// csiParam: inside ESC [: parameter and intermediate bytes (0x20-0x3f) up to
// maxCSI of them, then a final byte (0x40-0x7e).
func (c *Cleaner) csiParam(b byte) bool {
	c.seqLen++
	switch {
	case b >= 0x40 && b <= 0x7e:
		c.st = ground
		return true
	case b >= 0x20 && b <= 0x3f && c.seqLen < maxCSI:
		return true
	}
	c.st = ground
	return false
}

// string: inside an OSC, DCS, SOS, PM or APC string, up to BEL or ESC \.
// One that reaches a line end or maxString bytes is abandoned there.
func (c *Cleaner) string(b byte) bool {
	c.seqLen++
	switch {
	case b == 0x07:
		c.st = ground
	case b == esc:
		c.st = strEsc
	case b == '\n' || c.seqLen > maxString:
		c.st = ground
		return false
	}
	return true
}

// stringEscape: ESC inside a string. "\" ends the string; anything else ends
// it too, and the ESC starts a new sequence.
func (c *Cleaner) stringEscape(b byte) bool {
	if b == '\\' {
		c.st = ground
		return true
	}
	c.st = escape
	return false
}

// appendRune copies the UTF-8 character at the start of p, or U+FFFD for an
// invalid byte, and returns how many bytes of p it used. An incomplete
// character at the end of p is carried to the next write.
func (c *Cleaner) appendRune(p []byte) int {
	r, size := utf8.DecodeRune(p)
	if r == utf8.RuneError && size == 1 {
		if !utf8.FullRune(p) {
			c.ncarry = copy(c.carry[:], p)
			return len(p)
		}
		c.out = append(c.out, "\uFFFD"...)
		return 1
	}
	c.out = append(c.out, p[:size]...)
	return size
}

// appendText appends p as appendRune does, a run of ASCII at a time.
func (c *Cleaner) appendText(p []byte) {
	for len(p) > 0 {
		i := 0
		for i < len(p) && p[i] < utf8.RuneSelf {
			i++
		}
		c.out = append(c.out, p[:i]...)
		if p = p[i:]; len(p) > 0 {
			p = p[c.appendRune(p):]
		}
	}
}

// lastNewline is bytes.LastIndexByte(p, '\n'). A long p with no line end
// near its end (one endless line: a stream of zeros) is first ruled out with
// bytes.IndexByte, which is many times faster than the backwards scan.
func lastNewline(p []byte) int {
	const near = 4 << 10
	if len(p) <= near {
		return bytes.LastIndexByte(p, '\n')
	}
	if i := bytes.LastIndexByte(p[len(p)-near:], '\n'); i >= 0 {
		return len(p) - near + i
	}
	if bytes.IndexByte(p[:len(p)-near], '\n') < 0 {
		return -1
	}
	return bytes.LastIndexByte(p[:len(p)-near], '\n')
}

// finishCarry completes a character split across writes, returning the rest of p.
func (c *Cleaner) finishCarry(p []byte) []byte {
	var buf [2 * utf8.UTFMax]byte
	n := copy(buf[:], c.carry[:c.ncarry])
	n += copy(buf[n:], p[:min(len(p), utf8.UTFMax)])
	if !utf8.FullRune(buf[:n]) {
		// Still not enough bytes (p is tiny): keep carrying.
		c.ncarry = copy(c.carry[:], buf[:n])
		return nil
	}
	r, size := utf8.DecodeRune(buf[:n])
	c.visible()
	if r == utf8.RuneError && size == 1 {
		// The carried first byte is invalid on its own; the bytes after it are
		// looked at afresh, as the start of the input.
		c.out = append(c.out, "\uFFFD"...)
		rest := c.ncarry - 1
		c.ncarry = 0
		if rest > 0 {
			return append(append(make([]byte, 0, rest+len(p)), buf[1:1+rest]...), p...)
		}
		return p
	}
	c.out = append(c.out, buf[:size]...)
	used := size - c.ncarry
	c.ncarry = 0
	return p[used:]
}
