package cut

import "encoding/binary"

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
// Eight bytes without a letter hold no word and end any match begun before
// them, so they are passed over at once: most of a stream of zeros or
// digits costs a load and a few operations per eight bytes.
func hasFailure(b []byte) bool {
	var d, seen uint64
	step := func(block []byte) {
		for _, c := range block {
			d = (d<<1 | first) & masks[c]
			seen |= d
		}
	}
	i := 0
	for ; i+8 <= len(b) && seen&final == 0; i += 8 {
		if noLetters(b[i:]) {
			d = 0
			continue
		}
		step(b[i : i+8])
	}
	if seen&final == 0 {
		step(b[i:])
	}
	return seen&final != 0
}

// noLetters reports whether the eight bytes at the start of b hold no ASCII
// letter. It works on the eight as one uint64 (the "has a byte between m and
// n" trick of Sean Anderson's Bit Twiddling Hacks): setting bit 0x20 makes
// every letter lower case and moves no other byte into 'a'..'z', and bytes
// ≥ 0x80 are left out by the final mask.
func noLetters(b []byte) bool {
	const (
		lo8 = 0x0101010101010101
		hi8 = 0x8080808080808080
	)
	w := binary.LittleEndian.Uint64(b) | lo8*0x20
	const m, n = 'a' - 1, 'z' + 1
	low := w & (lo8 * 0x7f)
	between := (lo8*(127+n) - low) &^ w & (low + lo8*(127-m)) & hi8
	return between == 0
}
