package cut

import "encoding/binary"

const (
	lo8 = 0x0101010101010101
	hi8 = 0x8080808080808080
)

// The words that make a line look like a failure, in lower case.
var words = []string{"error", "fail", "fatal", "panic", "exception", "traceback"}

// maxWord is the length of the longest word.
const maxWord = 9

// The words are matched all at once, case-insensitively, with the shift-and
// algorithm: bit k of the state is set when the last bytes read match the
// first bits of a word up to its letter at bit k. Every word has its own bits
// in one uint64.
var (
	masks [256]uint64 // for each byte, the bits of the word letters it is
	first uint64      // the bits of the words' first letters
	final uint64      // the bits of the words' last letters
)

func init() {
	bit := 0
	for _, w := range words {
		first |= 1 << bit
		for i := 0; i < len(w); i++ {
			masks[w[i]] |= 1 << bit
			masks[w[i]-'a'+'A'] |= 1 << bit
			bit++
		}
		final |= 1 << (bit - 1)
	}
}

// hasFailure reports whether b contains one of the words, in any case.
//
// hasFailureScalar runs four independent matches over the four quarters of b, so that the
// processor overlaps them; each quarter after the first starts early enough
// to see a word that spans into it. Eight bytes without a letter reset a
// match, so such words are skipped at once: most of a stream of zeros or
// digits costs nothing.
func hasFailure(b []byte) bool {
	if len(b) >= 64 {
		if found, ok := hasFailureAnchored(b); ok {
			return found
		}
	}
	return hasFailureScalar(b)
}

// hasFailureScalar is hasFailure on any processor.
func hasFailureScalar(b []byte) bool {
	if len(b) < 256 {
		return match(b, 0) != 0
	}
	q := len(b) / 4
	const back = maxWord - 1
	a, c, d, e := b[:q], b[q-back:2*q], b[2*q-back:3*q], b[3*q-back:]
	var da, dc, dd, de, seen uint64
	n := len(a) // the shortest; the others are back bytes longer, e a little more
	i := 0
	for ; i+8 <= n; i += 8 {
		if noLetters(a[i:]) && noLetters(c[i:]) && noLetters(d[i:]) && noLetters(e[i:]) {
			da, dc, dd, de = 0, 0, 0, 0
			continue
		}
		for k := i; k < i+8; k++ {
			da = (da<<1 | first) & masks[a[k]]
			dc = (dc<<1 | first) & masks[c[k]]
			dd = (dd<<1 | first) & masks[d[k]]
			de = (de<<1 | first) & masks[e[k]]
			seen |= da | dc | dd | de
		}
	}
	for ; i < n; i++ {
		da = (da<<1 | first) & masks[a[i]]
		dc = (dc<<1 | first) & masks[c[i]]
		dd = (dd<<1 | first) & masks[d[i]]
		de = (de<<1 | first) & masks[e[i]]
		seen |= da | dc | dd | de
	}
	if seen&final != 0 {
		return true
	}
	return match(c[n:], dc)|match(d[n:], dd)|match(e[n:], de) != 0
}

// hasFailureAnchored finds failure words from where they can start: every
// word begins with one of six three-letter anchors, which anchors looks for
// 64 or 32 bytes at a time; the exact match runs only on a block that has one.
// It reports ok false when anchors cannot run here.
func hasFailureAnchored(b []byte) (found, ok bool) {
	pos := 0
	for {
		rest := b[pos:]
		off, size := anchors(rest)
		switch {
		case off == -2:
			return false, false
		case off == -1:
			// The blocks anchors looked at hold no anchor; the starts it
			// left to the caller are at the end.
			i := 0
			for len(rest)-i >= size+2 {
				i += size
			}
			return match(rest[i:], 0) != 0, true
		}
		block := rest[off:min(len(rest), off+size+maxWord-1)]
		if match(block, 0) != 0 {
			return true, true
		}
		pos += off + size
	}
}

// anchorWords are the three letters every failure word starts with.
var anchorWords = []string{"err", "exc", "fai", "fat", "pan", "tra"}

// match runs the shift-and match over b from state d and returns the final
// bits it reached.
func match(b []byte, d uint64) uint64 {
	var seen uint64
	for _, c := range b {
		d = (d<<1 | first) & masks[c]
		seen |= d
	}
	return seen & final
}

// noLetters reports whether the eight bytes at the start of b hold no ASCII
// letter (a word's bytes are all letters).
func noLetters(b []byte) bool {
	w := binary.LittleEndian.Uint64(b) | lo8*0x20 // lower case; others move, but stay non-letters or ≥ 0x80
	// Bytes in 'a'..'z': the "has between" trick, for bytes below 0x80.
	const m, n = 'a' - 1, 'z' + 1
	low := w & (lo8 * 0x7f)
	between := (lo8*(127+n) - low) &^ w & (low + lo8*(127-m)) & hi8
	return between == 0
}
