package read

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"strings"

	"toolkit/internal/outcome"
	"toolkit/internal/root"
	"toolkit/internal/text"
)

// fileReader reads one regular file.
type fileReader struct {
	ctx    context.Context
	a      Args
	src    *source
	offset int64
	limit  int64
	enc    text.Encoding

	out        strings.Builder
	shown      int64 // lines shown
	firstShown int64
	maxText    int  // the most text shown
	full       bool // maxText reached
	crlf       bool
}

func (rd *fileReader) run() outcome.Outcome {
	src := rd.src
	enc, err := text.Binary(src.head, src.size)
	if err != nil {
		return outcome.Failure("%s: %s; not shown", rd.a.Path, err)
	}
	rd.enc = enc
	if src.size == int64(rd.enc.BOM) {
		if rd.offset > 1 {
			return outcome.Failure("%s: offset %d is past the end (the file has 0 lines)", rd.a.Path, rd.offset)
		}
		sum, _ := rd.wholeHash()
		return rd.done(fmt.Sprintf("[empty file; sha256 %s]\n", sum[:12]), 1, 0, new(int64(0)), nil, &sum)
	}
	if rd.offset < 0 && src.size > MaxWhole && rd.enc.Unit == 0 {
		return rd.tail()
	}
	return rd.forward()
}

// text is the file's text from its start, as UTF-8, hashed on the way when
// h is not nil.
func (rd *fileReader) text(h hash.Hash) (io.Reader, error) {
	var r io.Reader = io.NewSectionReader(rd.src.r, 0, rd.src.size)
	if h != nil {
		r = io.TeeReader(r, h)
	}
	if _, err := io.CopyN(io.Discard, r, int64(rd.enc.BOM)); err != nil {
		return nil, err
	}
	return text.NewReader(r, rd.enc), nil
}

// forward reads from the start, showing lines offset … offset+limit-1. A
// file of at most MaxWhole is read to its end, hashed and counted; a larger
// one only as far as the lines shown and countAhead on.
func (rd *fileReader) forward() outcome.Outcome {
	whole := rd.src.size <= MaxWhole
	first, last := rd.offset, rd.offset+rd.limit-1
	if rd.offset < 0 {
		// From the end: the count of lines first (a file read whole, or one
		// in UTF-16 or UTF-32, which is not read backwards).
		total, err := rd.countLines()
		if err := rd.ctx.Err(); err != nil {
			return outcome.Failure("%s: stopped: %s", rd.a.Path, context.Cause(rd.ctx))
		}
		if err != nil {
			return outcome.Failure("%s: %s", rd.a.Path, root.Reason(err))
		}
		first, last = max(1, total+rd.offset+1), total+rd.offset+rd.limit
		if last < 1 {
			// The lines asked for all come before the first: from it, then.
			first, last = 1, rd.limit
		}
	}
	var h hash.Hash
	if whole {
		h = sha256.New()
	}
	src, err := rd.text(h)
	if err != nil {
		return outcome.Failure("%s: %s", rd.a.Path, root.Reason(err))
	}
	sp := newSplitter(first, last, nil)
	sp.emit = func(l Line) {
		if !rd.add(l.Num, l) {
			sp.last = l.Num - 1
		}
	}
	buf := make([]byte, blockSize)
	var pastAt int64 = -1 // where reading went past the lines shown
	read := int64(0)
	atEnd, capped := false, false
	for {
		if err := rd.ctx.Err(); err != nil {
			return outcome.Failure("%s: stopped: %s", rd.a.Path, context.Cause(rd.ctx))
		}
		n, err := src.Read(buf)
		if n > 0 {
			sp.write(buf[:n])
			read += int64(n)
		}
		if err == io.EOF {
			atEnd = true
			break
		}
		if err != nil {
			return outcome.Failure("%s: %s", rd.a.Path, root.Reason(err))
		}
		if sp.lineBytes() > MaxWhole && sp.wanted() {
			// A line longer than anything worth counting: it is shown cut,
			// and reading stops with it.
			sp.capLine()
			capped = true
			break
		}
		if sp.line > sp.last && pastAt < 0 {
			pastAt = read
		}
		if !whole && pastAt >= 0 && read-pastAt >= countAhead {
			break
		}
	}
	var total *int64
	var sum *string
	if atEnd {
		sp.end()
		t := sp.lines()
		total = &t
		if first > t {
			return outcome.Failure("%s: offset %d is past the end (the file has %d lines)", rd.a.Path, *rd.a.Offset, t)
		}
		if h != nil {
			s := hex.EncodeToString(h.Sum(nil))
			sum = &s
		}
	}
	lastShown := rd.firstShown + rd.shown - 1
	var next *int64
	if capped || total == nil || lastShown < *total {
		n := lastShown + 1
		next = &n
	}
	shown := fmt.Sprintf("lines %d-%d", rd.firstShown, lastShown)
	switch {
	case total != nil:
		shown += fmt.Sprintf(" of %d", *total)
	case next != nil:
		shown += "; more follow"
	}
	if sum != nil {
		shown += "; sha256 " + (*sum)[:12]
	}
	if next != nil {
		shown += fmt.Sprintf("; next: offset %d", *next)
	}
	rd.out.WriteString("[" + shown + "]\n")
	rd.notes()
	return rd.done(rd.out.String(), rd.firstShown, rd.shown, total, next, sum)
}

// add formats one line, and reports false when the text is full.
func (rd *fileReader) add(num int64, l Line) bool {
	if rd.full {
		return false
	}
	line := fmt.Sprintf("%6d\t", num)
	if l.Partial {
		line += "… "
	}
	line += string(l.Text)
	switch {
	case l.Capped || l.Partial && l.Chars > MaxChars:
		line += fmt.Sprintf("… [line cut: more than %d characters]", l.Chars-MaxChars)
	case l.Chars > MaxChars:
		line += fmt.Sprintf("… [line cut: %d characters]", l.Chars-MaxChars)
	}
	if rd.out.Len()+len(line)+1 > rd.maxText && rd.shown > 0 {
		rd.full = true
		return false
	}
	if rd.shown == 0 {
		rd.firstShown = num
	}
	rd.out.WriteString(line)
	rd.out.WriteByte('\n')
	rd.shown++
	rd.crlf = rd.crlf || l.CRLF
	return true
}

func (rd *fileReader) notes() {
	if rd.enc.Name != "" {
		fmt.Fprintf(&rd.out, "[%s text, shown as UTF-8]\n", rd.enc.Name)
	}
	if rd.crlf {
		rd.out.WriteString("[CRLF line endings]\n")
	}
}

func (rd *fileReader) done(text string, first, shown int64, total, next *int64, sum *string) outcome.Outcome {
	d := Details{Path: rd.a.Path, Kind: "file", Bytes: rd.src.size, FirstLine: first, LinesShown: shown, TotalLines: total, NextOffset: next, SHA256: sum}
	return outcome.Success(text, d)
}

// wholeHash is the sha256 of the file's bytes.
func (rd *fileReader) wholeHash() (string, error) { return hashOf(rd.src.r, rd.src.size) }

// hashOf is the sha256 of the first size bytes of r.
func hashOf(r io.ReaderAt, size int64) (string, error) {
	h := sha256.New()
	_, err := io.Copy(h, io.NewSectionReader(r, 0, size))
	return hex.EncodeToString(h.Sum(nil)), err
}

// countLines counts the lines of the (decoded) text.
func (rd *fileReader) countLines() (int64, error) {
	sp := newSplitter(1, 0, func(Line) {})
	src, err := rd.text(nil)
	if err != nil {
		return 0, err
	}
	buf := make([]byte, blockSize)
	for {
		if err := rd.ctx.Err(); err != nil {
			return 0, context.Cause(rd.ctx)
		}
		n, err := src.Read(buf)
		sp.write(buf[:n])
		if err == io.EOF {
			sp.end()
			return sp.lines(), nil
		}
		if err != nil {
			return 0, err
		}
	}
}

// tail shows lines counted from the end of a file too large to read whole,
// found by reading backwards from its end, at most MaxWhole of it: what
// comes before is never read. The lines are numbered from the end.
func (rd *fileReader) tail() outcome.Outcome {
	size := rd.src.size
	want := -rd.offset // lines wanted from the end
	buf := make([]byte, blockSize)
	var last [1]byte
	if _, err := rd.src.r.ReadAt(last[:], size-1); err != nil {
		return outcome.Failure("%s: %s", rd.a.Path, root.Reason(err))
	}
	pos := size
	if last[0] == '\n' {
		pos-- // that line end belongs to the last line
	}
	need := want // line ends still to find, each one before a wanted line
	start := int64(rd.enc.BOM)
	found, partial := false, false
	for pos > start && !found {
		if err := rd.ctx.Err(); err != nil {
			return outcome.Failure("%s: stopped: %s", rd.a.Path, context.Cause(rd.ctx))
		}
		if size-pos >= MaxWhole {
			// As far back as a call reads: the line here starts further.
			start, found, partial = pos, true, true
			break
		}
		n := min(int64(blockSize), pos-start)
		pos -= n
		b := buf[:n]
		if _, err := rd.src.r.ReadAt(b, pos); err != nil && err != io.EOF {
			return outcome.Failure("%s: %s", rd.a.Path, root.Reason(err))
		}
		if c := int64(bytes.Count(b, nl)); c < need {
			need -= c
			continue
		}
		for {
			i := bytes.LastIndexByte(b, '\n')
			if need--; need == 0 {
				start, found = pos+int64(i)+1, true
				break
			}
			b = b[:i]
		}
	}
	inTail := want // lines from start to the end
	if !found || partial {
		inTail = want - need + 1
	}
	// The lines shown are offset … offset+limit-1, of those there are; when
	// they all come before the first, from the first on.
	firstWanted, lastWanted := max(1, rd.offset+inTail+1), min(int64(-1), rd.offset+rd.limit-1)+inTail+1
	if lastWanted < 1 {
		firstWanted, lastWanted = 1, rd.limit
	}
	sp := newSplitter(firstWanted, lastWanted, nil)
	sp.emit = func(l Line) {
		l.Partial = partial && l.Num == 1
		if !rd.add(l.Num-inTail-1, l) {
			sp.last = l.Num - 1
		}
	}
	sec := io.NewSectionReader(rd.src.r, start, size-start)
	for {
		n, err := sec.Read(buf)
		sp.write(buf[:n])
		if err == io.EOF || sp.line > sp.last {
			break
		}
		if err != nil {
			return outcome.Failure("%s: %s", rd.a.Path, root.Reason(err))
		}
		if sp.lineBytes() > MaxWhole && sp.wanted() {
			sp.capLine()
			break
		}
	}
	sp.end()
	lastShown := rd.firstShown + rd.shown - 1
	var next *int64
	switch {
	case lastShown < -1:
		n := lastShown + 1
		next = &n
		fmt.Fprintf(&rd.out, "[lines %d to %d, counted from the end; next: offset %d]\n", rd.firstShown, lastShown, n)
	case partial:
		fmt.Fprintf(&rd.out, "[the last %d lines, the first only from %d MiB before the end]\n", rd.shown, MaxWhole>>20)
	case found:
		fmt.Fprintf(&rd.out, "[the last %d lines; earlier: offset %d]\n", rd.shown, rd.firstShown-rd.limit)
	}
	rd.notes()
	var total *int64
	if !found {
		total = &inTail
	}
	return rd.done(rd.out.String(), rd.firstShown, rd.shown, total, next, nil)
}
