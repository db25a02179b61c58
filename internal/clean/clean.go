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
// Memory is bounded whatever comes: the line being written is held back (a
// later "\r" may erase it) only up to MaxPending bytes, and sequences are never
// buffered at all. With Raw set, only the UTF-8 rule applies.
package clean

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"slices"
	"unicode/utf8"
)

// MaxPending is how much of an unfinished line is held back. Past it, the
// line so far is passed on, and a later "\r" erases only what came after.
const MaxPending = 64 << 10

// slack is the room kept in the buffer past a write's bytes: a carried
// character, and csiRun's whole-window stores.
const slack = 64

// maxString bounds an OSC/DCS/… string before it is abandoned.
const maxString = 4096

// maxCSI bounds a CSI sequence before it is abandoned.
const maxCSI = 256

type state uint8

const (
	ground state = iota
	escape       // after ESC
	csi          // after ESC [
	str          // inside an OSC, DCS, SOS, PM or APC string
	strEsc       // after ESC inside a string: "\" ends it
	nf           // after ESC and intermediate bytes (ESC ( B)
)

// Cleaner cleans one stream. The zero value is ready to use.
type Cleaner struct {
	// Raw turns off everything but the UTF-8 rule.
	Raw bool

	st      state
	seqLen  int  // bytes so far in the current CSI or string
	erase   bool // a "\r" was seen; the next visible byte starts the line over
	carry   [utf8.UTFMax]byte
	ncarry  int
	out     []byte // the unfinished line held back, then this write's output
	pending int    // len(out) held back from the last write
	low     int    // the shortest out was in this write
}

// Write cleans p and returns the text that is final: everything up to the
// last line end, or more when the unfinished line is longer than MaxPending.
// The text comes in two parts, held then text: held is a line held back
// from earlier writes when p needed no cleaning, so that text can be p
// itself, uncopied. Both are valid until the next call.
func (c *Cleaner) Write(p []byte) (held, text []byte) {
	if c.Raw && c.ncarry == 0 && c.pending == 0 && utf8.Valid(p) {
		// Raw text that is valid UTF-8 is final as it is: no copy.
		return nil, p
	}
	if haveSpecials && !c.Raw && c.st == ground && !c.erase && c.ncarry == 0 && plainAVX2(p) == len(p) {
		return c.plainWrite(p)
	}
	c.front()
	if cap(c.out) < len(c.out)+len(p)+slack {
		grown := make([]byte, len(c.out), max(2*cap(c.out), len(c.out)+len(p)+slack))
		copy(grown, c.out)
		c.out = grown
	}
	if c.ncarry > 0 {
		p = c.finishCarry(p)
	}
	// The held-back line has no line end: split need look only after it,
	// or after the shortest out was, should a "\r" have erased some of it.
	c.low = len(c.out)
	if c.Raw {
		c.raw(p)
	} else {
		c.clean(p)
	}
	return nil, c.split(c.low)
}

// plainWrite is Write for a p with nothing to clean, in the ground state:
// the text is the line held back before it, then p as it is, but for the
// unfinished line at its end, which is held back in turn and is all that is
// copied.
func (c *Cleaner) plainWrite(p []byte) (held, text []byte) {
	// final: how much of p is final text. As split does, a line is held
	// back while it is at most MaxPending bytes long.
	final := len(p)
	if i := lastNewline(p); i >= 0 {
		if len(p)-i-1 <= MaxPending {
			final = i + 1
		}
	} else if c.pending+len(p) <= MaxPending {
		final = 0
	}
	c.front()
	if final == 0 {
		c.out = append(c.out, p...)
		c.pending = len(c.out)
		return nil, nil
	}
	// The held line goes out now; the new one is kept after it, which
	// leaves it whole until the next call.
	held = c.out[:len(c.out):len(c.out)]
	c.out = append(c.out, p[final:]...)
	c.pending = len(p) - final
	return held, p[:final]
}

// front moves the held-back line to the front of out: what was returned
// last time is gone.
func (c *Cleaner) front() {
	if c.pending < len(c.out) {
		n := copy(c.out, c.out[len(c.out)-c.pending:])
		c.out = c.out[:n]
	}
}

// Flush returns the rest of the text at the end of the stream: the unfinished
// line, and U+FFFD for an incomplete character. A lone ESC or an unfinished
// sequence at the end is dropped.
func (c *Cleaner) Flush() []byte {
	c.front()
	for range c.ncarry {
		c.visible()
		c.out = append(c.out, "\uFFFD"...)
	}
	c.ncarry = 0
	c.pending = 0
	c.st = ground
	return c.out
}

// split returns the final part of out and keeps the unfinished line. No line
// end comes before from.
func (c *Cleaner) split(from int) []byte {
	end := 0
	if i := lastNewline(c.out[from:]); i >= 0 {
		end = from + i + 1
	}
	if len(c.out)-end > MaxPending || c.Raw {
		end = len(c.out)
	}
	c.pending = len(c.out) - end
	return c.out[:end]
}

// visible is called before a byte that shows on the line: after a "\r", it
// starts the line over.
func (c *Cleaner) visible() {
	if c.erase {
		c.erase = false
		c.out = c.out[:lastNewline(c.out)+1]
		c.low = min(c.low, len(c.out))
	}
}

// finishCarry completes a character split across writes, returning the rest of p.
func (c *Cleaner) finishCarry(p []byte) []byte {
	var buf [2 * utf8.UTFMax]byte
	n := copy(buf[:], c.carry[:c.ncarry])
	n += copy(buf[n:], p[:min(len(p), utf8.UTFMax)])
	if !utf8.FullRune(buf[:n]) {
		// Still not enough bytes (p is tiny): keep carrying.
		copy(c.carry[:], buf[:n])
		c.ncarry = n
		return nil
	}
	r, size := utf8.DecodeRune(buf[:n])
	c.visible()
	if r == utf8.RuneError && size == 1 {
		// The carried first byte is invalid on its own; the bytes after it are
		// looked at afresh.
		c.out = append(c.out, "\uFFFD"...)
		rest := c.ncarry - 1
		c.ncarry = 0
		if rest > 0 {
			// Those carried bytes come back as the start of the input.
			again := make([]byte, 0, rest+len(p))
			again = append(again, buf[1:1+rest]...)
			return append(again, p...)
		}
		return p
	}
	c.out = append(c.out, buf[:size]...)
	used := size - c.ncarry
	c.ncarry = 0
	return p[used:]
}

const (
	lo8 = 0x0101010101010101
	hi8 = 0x8080808080808080
)

// plain returns the length of the run at the start of p without ESC, CR or
// bytes ≥ 0x80, eight bytes at a time: most output is such runs.
func plain(p []byte) int {
	i := 0
	for ; i+8 <= len(p); i += 8 {
		w := binary.LittleEndian.Uint64(p[i:])
		e := w ^ (lo8 * 0x1b)
		r := w ^ (lo8 * '\r')
		// The lowest flagged byte is exact: a false flag only ever sits
		// above a true one.
		if m := (w | ((e - lo8) &^ e) | ((r - lo8) &^ r)) & hi8; m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
	}
	for ; i < len(p); i++ {
		if b := p[i]; b == 0x1b || b == '\r' || b >= 0x80 {
			break
		}
	}
	return i
}

// csiLen returns the length of the complete CSI sequence at the start of p
// (ESC [ parameters intermediates final), or 0 when p does not start with
// one that ends within it and within maxCSI bytes.
func csiLen(p []byte) int {
	if len(p) < 3 || p[1] != '[' {
		return 0
	}
	for j := 2; j < len(p) && j < maxCSI; j++ {
		switch b := p[j]; {
		case b >= 0x40 && b <= 0x7e:
			return j + 1
		case b < 0x20 || b > 0x3f:
			return 0
		}
	}
	return 0
}

// text returns the length of the run at the start of p without ESC or CR.
func text(p []byte) int {
	i := 0
	for ; i+8 <= len(p); i += 8 {
		w := binary.LittleEndian.Uint64(p[i:])
		e := w ^ (lo8 * 0x1b)
		r := w ^ (lo8 * '\r')
		// The high bit of w is cleared first: bytes ≥ 0x80 are text here.
		if (((e-lo8)&^e)|((r-lo8)&^r))&^w&hi8 != 0 {
			break
		}
	}
	for ; i < len(p); i++ {
		if b := p[i]; b == 0x1b || b == '\r' {
			break
		}
	}
	return i
}

// lastNewline is bytes.LastIndexByte(p, '\n'), whose standard version goes
// a byte at a time, and a line with no end is scanned whole: it looks at 4 KiB
// windows from the end, asks the vectorised bytes.IndexByte whether a window
// holds a line end at all, and looks for the last one only in the window
// that does.
func lastNewline(p []byte) int {
	const window = 4 << 10
	for end := len(p); end > 0; {
		start := max(0, end-window)
		if bytes.IndexByte(p[start:end], '\n') >= 0 {
			return start + lastNewlineSWAR(p[start:end])
		}
		end = start
	}
	return -1
}

// lastNewlineSWAR is lastNewline eight bytes at a time.
func lastNewlineSWAR(p []byte) int {
	i := len(p)
	for ; i >= 8; i -= 8 {
		w := binary.LittleEndian.Uint64(p[i-8:]) ^ (lo8 * '\n')
		if (w-lo8)&^w&hi8 != 0 {
			break
		}
	}
	for i--; i >= 0; i-- {
		if p[i] == '\n' {
			return i
		}
	}
	return -1
}

// ascii returns the length of the run at the start of p of bytes < 0x80.
func ascii(p []byte) int {
	i := 0
	for ; i+8 <= len(p); i += 8 {
		if binary.LittleEndian.Uint64(p[i:])&hi8 != 0 {
			break
		}
	}
	for ; i < len(p) && p[i] < 0x80; i++ {
	}
	return i
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

func (c *Cleaner) raw(p []byte) {
	for len(p) > 0 {
		n := ascii(p)
		c.out = append(c.out, p[:n]...)
		p = p[n:]
		if len(p) > 0 {
			p = p[c.appendRune(p):]
		}
	}
}

func (c *Cleaner) clean(p []byte) {
	// With AVX2, the bytes to look at are found 64 at a time, as a mask
	// kept for the block it covers: escapes come every few bytes in coloured
	// text, and each costs a bit scan, not a search.
	blk, mask := -64, uint64(0)
	i := 0
	for i < len(p) {
		if c.st == ground {
			if haveCSI && !c.erase && len(p)-i >= 64 {
				// With AVX-512, runs of text and colours are copied 64 bytes
				// at a time, up to a byte to look at here.
				c.out = slices.Grow(c.out, len(p)-i+slack)
				n, w := csiRun(c.out[len(c.out):cap(c.out)], p[i:])
				if n > 0 {
					c.out = c.out[:len(c.out)+w]
					i += n
					continue
				}
			}
			var n int
			if haveSpecials {
				for j := i; ; {
					if j >= len(p) {
						n = j - i
						break
					}
					if j < blk || j >= blk+64 {
						if len(p)-j < 64 {
							n = j - i + plain(p[j:])
							break
						}
						blk, mask = j, specials(p[j:])
					}
					if m := mask >> uint(j-blk); m != 0 {
						n = j - i + bits.TrailingZeros64(m)
						break
					}
					j = blk + 64
				}
			} else {
				n = plain(p[i:])
			}
			if n > 0 {
				run := p[i : i+n]
				if c.erase {
					// Text after a "\r": the line starts over, unless the run
					// begins with the line's end.
					if run[0] == '\n' {
						c.erase = false
					} else {
						c.visible()
					}
				}
				c.out = append(c.out, run...)
				i += n
				continue
			}
			b := p[i]
			switch {
			case b == 0x1b:
				// A whole CSI sequence in this write (a colour, most often)
				// is stepped over in one go.
				if n := csiLen(p[i:]); n > 0 {
					i += n
					continue
				}
				c.st = escape
				i++
			case b == '\r':
				c.erase = true
				i++
			default: // ≥ 0x80: take the whole run of valid UTF-8 at once.
				c.visible()
				end := i + text(p[i:])
				if utf8.Valid(p[i:end]) {
					c.out = append(c.out, p[i:end]...)
					i = end
					continue
				}
				// Invalid somewhere in the run: a character at a time, to its end.
				for i < end {
					n := ascii(p[i:end])
					c.out = append(c.out, p[i:i+n]...)
					if i += n; i < end {
						i += c.appendRune(p[i:])
					}
				}
			}
			continue
		}
		if c.st == csi {
			// Parameters come in runs; step over them without the switch.
			j := i
			for j < len(p) && p[j] >= 0x20 && p[j] <= 0x3f {
				j++
			}
			c.seqLen += j - i
			i = j
			if i == len(p) {
				break
			}
		}
		b := p[i]
		i++
		switch c.st {
		case escape:
			switch {
			case b == '[':
				c.st, c.seqLen = csi, 0
			case b == ']' || b == 'P' || b == 'X' || b == '^' || b == '_':
				c.st, c.seqLen = str, 0
			case b >= 0x20 && b <= 0x2f:
				c.st = nf
			case b >= 0x30 && b <= 0x7e:
				c.st = ground
			case b == 0x1b:
				// ESC ESC: the first is dropped, the second starts afresh.
			default:
				// Not a sequence: drop the ESC, keep the byte.
				c.st = ground
				i--
			}
		case csi:
			c.seqLen++
			switch {
			case b >= 0x40 && b <= 0x7e:
				c.st = ground
			case b >= 0x20 && b <= 0x3f && c.seqLen < maxCSI:
			default:
				c.st = ground
				i--
			}
		case nf:
			switch {
			case b >= 0x20 && b <= 0x2f:
			case b >= 0x30 && b <= 0x7e:
				c.st = ground
			default:
				c.st = ground
				i--
			}
		case str:
			c.seqLen++
			switch {
			case b == 0x07:
				c.st = ground
			case b == 0x1b:
				c.st = strEsc
			case b == '\n' || c.seqLen > maxString:
				c.st = ground
				i--
			}
		case strEsc:
			if b == '\\' {
				c.st = ground
			} else {
				// ESC that does not end the string starts a new sequence.
				c.st = escape
				i--
			}
		}
	}
}
