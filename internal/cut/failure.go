package cut

import "sync"

// The words that make a line look like a failure, in lower case.
var words = []string{"error", "fail", "fatal", "panic", "exception", "traceback"}

// maxWord is the length of the longest word.
const maxWord = 9

// The words are matched all at once, case-insensitively, with the shift-and
// algorithm (Baeza-Yates and Gonnet, "A new approach to text searching",
// 1992): bit k of the state is set when the last bytes read match a word up
// to its letter at bit k. Every word has its own bits in one uint64.
var (
	masks [256]uint64 // for each byte, the bits of the word letters it is
	first uint64      // the bits of the words' first letters
	final uint64      // the bits of the words' last letters
)

// pairs are the pairs of letters side by side in a word, in every case, by
// their two bytes (the first the low one): a table of 64 KiB, so that a
// look is one load. A word is four letters or more, so that each place of
// it holds, at most two bytes in, a place a multiple of three from the
// start of the text that starts one of its pairs: only those places are
// looked at until one does.
var pairs [1 << 16]bool

// minWord is the length of the shortest word.
const minWord = 4

// tables fills masks, first, final and pairs once, when the first output
// is scanned: not at the start of every toolkit process, most of which
// never cut an output, nor for a command that prints nothing (the pairs'
// 64 KiB cost six page faults and 30 µs).
var tables sync.Once

func fillTables() {
	bit := 0
	for _, w := range words {
		if len(w) < minWord || len(w) > maxWord {
			panic("cut: a failure word of " + w)
		}
		first |= 1 << bit
		for i := 0; i < len(w); i++ {
			masks[w[i]] |= 1 << bit
			masks[w[i]-'a'+'A'] |= 1 << bit
			bit++
			if i > 0 {
				for _, a := range []byte{w[i-1], w[i-1] - 'a' + 'A'} {
					for _, b := range []byte{w[i], w[i] - 'a' + 'A'} {
						pairs[int(a)|int(b)<<8] = true
					}
				}
			}
		}
		final |= 1 << (bit - 1)
	}
}

// hasFailure reports whether b contains one of the words, in any case. It
// looks at the places a multiple of three in; where one starts a pair of a
// word, the shift-and reads the bytes around it that a word holding the
// pair may span (from two bytes before it), going on from where it last
// stopped when that is near. The places are tried four at a time, with one
// branch for the four, until one starts a pair: a text of no words' pairs
// costs three loads every three bytes and a test every twelve (4 times
// faster than a test at each place); one of nothing but pairs is read once.
func hasFailure(b []byte) bool {
	var d uint64
	read := 0 // the shift-and has read b up to here, and d is its state
	p := 0
	for {
		// Four places at once, twelve bytes apart in all, while they are in b.
		for ; p+10 < len(b); p += 12 {
			w := b[p : p+11 : p+11]
			if pairs[uint16(w[0])|uint16(w[1])<<8] || pairs[uint16(w[3])|uint16(w[4])<<8] ||
				pairs[uint16(w[6])|uint16(w[7])<<8] || pairs[uint16(w[9])|uint16(w[10])<<8] {
				break
			}
		}
		if p+1 >= len(b) {
			return false
		}
		end := min(p+12, len(b)-1)
		for ; p < end; p += 3 {
			if !pairs[uint16(b[p])|uint16(b[p+1])<<8] {
				continue
			}
			from := max(p-2, 0)
			if from <= read {
				from = read
			} else {
				d = 0
			}
			to := min(len(b), p+maxWord)
			for _, c := range b[from:to] {
				d = (d<<1 | first) & masks[c]
				if d&final != 0 {
					return true
				}
			}
			read = to
		}
	}
}
