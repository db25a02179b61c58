package grep

import (
	"bytes"
	"errors"
	"slices"
	"time"
	"toolkit/internal/text"
	"toolkit/internal/walk"
)

// buffers are what a file is searched in, one set a goroutine at a time,
// on a free list rather than in a sync.Pool, which a collection empties
// (and the next file's buffer would then fault its pages in afresh).
type buffers struct {
	buf []byte // the file, or a piece of it
	// The start of a file read in pieces, kept for read's rule on
	// whether it looks binary once a later piece matches.
	head [text.SniffSize]byte
}

var bufs = make(chan *buffers, 64)

func getBuf() *buffers {
	select {
	case b := <-bufs:
		return b
	default:
		return new(buffers)
	}
}

func putBuf(b *buffers) {
	select {
	case bufs <- b:
	default:
	}
}

// chunk is how much of a file is searched at once: a larger one is read
// and searched a piece of whole lines at a time, as ripgrep reads it, so
// that a search holds about this much a goroutine whatever the size of its
// largest file. A search that must see the whole file at once (matches
// across lines, lines of context, text in UTF-16 or UTF-32) reads it whole.
// firstRead is what is read of a file first, and looked at for a NUL:
// ripgrep's buffer, so that a large binary file costs that and no more.
// Variables for the tests, which make them small.
var chunk, firstRead = 256 << 10, 64 << 10

// file searches one file. A file is read up to its first NUL, as ripgrep
// reads it: one with a NUL is binary, and counted if what comes before it
// matches; so is one whose start looks binary (read's rule). Neither shows
// a line.
func (s *search) file(e walk.Entry) {
	f, err := e.Open(MaxFile)
	switch {
	case errors.Is(err, walk.ErrNotRegular):
		return // swapped for a FIFO or device: never read
	case errors.Is(err, walk.ErrTooLarge):
		s.tooLarge.Add(1)
		return
	case err != nil:
		s.unreadable.Add(1)
		return
	}
	defer f.Close()
	b := getBuf()
	defer putBuf(b)
	buf := b.buf[:0]
	defer func() { b.buf = buf[:0] }()
	size := chunk // what buf holds before it is searched
	whole := s.find.multi || s.before > 0 || s.after > 0
	if whole {
		size = max(size, int(f.Size)+1) // read at once, but for the first read
	}
	fs := fileScan{rel: e.Path, first: true, line: 1}
	var read int64
	checked := 0 // bytes of buf looked at for a NUL
	noEnd := 0   // bytes at buf's start known to hold no line end
	wide, nul, end := false, false, false
	for !end {
		if len(buf) >= size {
			// A line longer than a piece, or a file read whole that grew:
			// twice as much, or at once the rest of the file where that
			// is at most four times as much, so that a long line leaves
			// the collector less than doubling up to it would.
			size = 2 * len(buf)
			if rest := len(buf) + int(max(f.Size-read, 0)) + 1; rest <= 4*len(buf) {
				size = max(size, rest)
			}
		}
		want := size - len(buf)
		if read == 0 {
			want = firstRead
		}
		if cap(buf)-len(buf) < want {
			// Of the size asked for, no more: a search allocates what
			// its files need (TestReadAllocates).
			buf = append(make([]byte, 0, len(buf)+want), buf...)
		}
		n, err := f.Read(buf[len(buf) : len(buf)+want])
		if err != nil {
			s.unreadable.Add(1)
			return
		}
		buf = buf[:len(buf)+n]
		read += int64(n)
		if read > MaxFile {
			s.tooLarge.Add(1) // it grew as it was read
			return
		}
		end = n < want // a regular file reads short only at its end
		if fs.first {
			if !end && len(buf) < text.SniffSize+4 {
				continue // the file's start tells its encoding, and whether it looks binary
			}
			if text.WideBOM(buf) {
				wide, whole = true, true // its NULs are its characters'
			}
		}
		if !wide {
			if i := bytes.IndexByte(buf[checked:], 0); i >= 0 {
				buf = buf[:checked+i]
				nul, end = true, true
			}
			checked = len(buf)
		}
		piece := buf
		if !end {
			if whole {
				continue
			}
			// The piece ends at the last line end, looked for only in
			// what was read since the last piece (the rest it left holds
			// none), and backwards, byte by byte, only once a pass of
			// bytes.IndexByte found one: a long line is looked at once.
			fresh := buf[noEnd:]
			if bytes.IndexByte(fresh, '\n') < 0 {
				noEnd = len(buf)
				continue
			}
			piece = buf[:noEnd+bytes.LastIndexByte(fresh, '\n')+1]
		}
		raw := len(piece)
		if fs.first {
			// Text in UTF-16 or UTF-32 with a byte-order mark (read's
			// rule) is searched decoded; a UTF-8 byte-order mark is not
			// part of line 1. Whether it looks binary is read from its
			// start, as from a whole file's, once it matches.
			fs.first = false
			enc := text.Detect(buf[:min(len(buf), text.SniffSize)], end && len(buf) <= text.SniffSize)
			piece = text.Decode(piece, enc)
			if end {
				fs.head, fs.size = piece[:min(len(piece), text.SniffSize)], int64(len(piece))
			} else {
				start := buf[enc.BOM:] // read over by the next piece
				fs.head, fs.size = b.head[:copy(b.head[:], start)], f.Size
			}
		}
		if !fs.done {
			counted := s.scan(piece, &fs)
			if !end {
				// The lines after the last match, for the next piece's
				// numbers; at the end no line is numbered after them.
				fs.line += int64(bytes.Count(piece[counted:], []byte{'\n'}))
			}
		}
		buf = buf[:copy(buf, buf[raw:])]
		checked, noEnd = len(buf), len(buf)
	}
	s.searched.Add(1)
	if fs.n == 0 {
		return
	}
	if nul || fs.binary() {
		s.binary.Add(1)
		return
	}
	var mtime time.Time
	if s.newest {
		mtime, _ = e.ModTime()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.matches += fs.n
	s.counts = append(s.counts, fileCount{fs.display, fs.n, mtime})
	if len(fs.hits) > 0 {
		s.kept.add(fs.display, fs.hits)
	}
}

// fileScan is one file's search, a piece of whole lines at a time.
type fileScan struct {
	rel     string // the file's path from the start of the walk
	display string // and as it is shown, once it has a match
	first   bool   // no piece searched yet
	line    int64  // the number of the piece's first line
	n       int64  // matching lines so far
	hits    []*hit
	done    bool // no more to find: max_count matches, or one in a binary file

	// The start of the file, and its size, to tell whether it looks
	// binary (read's rule): asked only of a file that matches.
	head     []byte
	size     int64
	isBinary int8 // 0 not asked yet, 1 no, 2 yes
}

// binary says whether the file looks binary by its start.
func (fs *fileScan) binary() bool {
	if fs.isBinary == 0 {
		fs.isBinary = 1
		if enc, err := text.Binary(fs.head, fs.size); err != nil || enc.Unit != 0 {
			fs.isBinary = 2
		}
	}
	return fs.isBinary == 2
}

// scan finds the matches in one piece of a file, whole lines. In a file
// that looks binary, it finds one and stops: such a file is counted, not
// shown. fs.line is then the number of the line at buf[counted:].
func (s *search) scan(buf []byte, fs *fileScan) (counted int) {
	last := 0
	s.find.each(buf, 0, func(ls, le, ms, me int) bool {
		fs.line += int64(bytes.Count(buf[last:ls], []byte{'\n'}))
		last = ls
		fs.n++
		if fs.display == "" {
			fs.display = s.display(fs.rel)
		}
		if fs.n == 1 && fs.binary() {
			fs.done = true
			return false
		}
		if s.mode == "lines" {
			fs.hit(s, buf, ls, le, ms, me)
		}
		fs.done = fs.n == s.most
		return !fs.done
	})
	return last
}

// hit keeps the matching line at ls..le (a match from ms to me), with its
// context.
func (fs *fileScan) hit(s *search, buf []byte, ls, le, ms, me int) {
	// A hit that can never be shown is counted, not laid out: past the
	// first kept.n of its file, or in a file whose path sorts after the
	// first kept.n hits already held.
	if len(fs.hits) >= s.kept.n || s.kept.past(fs.display) {
		return
	}
	first := le // the end of the match's first line
	if i := bytes.IndexByte(buf[ls:le], '\n'); i >= 0 {
		first = ls + i
	}
	mls, mle := -1, -1 // the match in its first line, where it was worked out
	if ms >= 0 {
		mls, mle = ms-ls, min(me, first)-ls
	}
	h := &hit{path: fs.display, line: fs.line, text: showLine(buf[ls:first], mls, mle)}
	end := fs.line // the match's last line
	for start := first + 1; first < le && start <= le; {
		stop := le
		if i := bytes.IndexByte(buf[start:le], '\n'); i >= 0 {
			stop = start + i
		}
		end++
		h.more = append(h.more, ctxLine{end, showLine(buf[start:stop], -1, -1)})
		start = stop + 1
	}
	h.before = linesBefore(buf, ls, fs.line, s.before)
	h.after = linesAfter(buf, le, end, s.after)
	fs.hits = append(fs.hits, h)
}

// linesBefore are up to n lines before the line starting at ls.
func linesBefore(buf []byte, ls int, line int64, n int) []ctxLine {
	var out []ctxLine
	end := ls - 1 // the \n that ends the line before
	for i := 1; i <= n && end >= 0; i++ {
		start := bytes.LastIndexByte(buf[:end], '\n') + 1
		out = append(out, ctxLine{line - int64(i), showLine(buf[start:end], -1, -1)})
		end = start - 1
	}
	slices.Reverse(out)
	return out
}

// linesAfter are up to n lines after the line ending at le.
func linesAfter(buf []byte, le int, line int64, n int) []ctxLine {
	var out []ctxLine
	start := le + 1
	for i := 1; i <= n && start < len(buf); i++ {
		end := len(buf)
		if j := bytes.IndexByte(buf[start:], '\n'); j >= 0 {
			end = start + j
		}
		out = append(out, ctxLine{line + int64(i), showLine(buf[start:end], -1, -1)})
		start = end + 1
	}
	return out
}
