package cut

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

// hasFailure reports whether b contains one of the words, in any case. It
// runs two independent matches, over the two halves of b, so that the
// processor can overlap them; the second half starts early enough to see a
// word that spans the middle.
func hasFailure(b []byte) bool {
	if len(b) < 64 {
		var d, seen uint64
		for _, c := range b {
			d = (d<<1 | first) & masks[c]
			seen |= d
		}
		return seen&final != 0
	}
	half := len(b) / 2
	x := b[:half]
	y := b[half-(maxWord-1):]
	var dx, dy, seen uint64
	n := min(len(x), len(y))
	for i := 0; i < n; i++ {
		dx = (dx<<1 | first) & masks[x[i]]
		dy = (dy<<1 | first) & masks[y[i]]
		seen |= dx | dy
	}
	for _, c := range y[n:] {
		dy = (dy<<1 | first) & masks[c]
		seen |= dy
	}
	return seen&final != 0
}
