// Package read shows a text file as numbered lines, the way a model can quote
// them back.
//
//	toolkit read [flags] PATH
//	echo '{"path":"main.go","offset":10,"limit":20}' | toolkit read
//
// Each line is "%6d\t" and the line, as cat -n prints it, without its
// terminator; a line longer than 2000 characters is cut there and ends with
// "… [line cut: N characters]", N the characters left out. offset picks the
// first line (from 1); a negative offset counts from the end (-100: the last
// 100 lines), and then the lines are numbered from the end too (-100 … -1),
// each number being the offset that reaches it: the end of a file is found by
// reading backwards, so the count of lines before it is not known. limit is
// how many lines (default 2000); at most 256 KiB of text is shown. When more
// lines follow, a last line says how to go on:
//
//	[lines 1-2000 of 53211; next: offset 2001]
//
// The total is given when toolkit read the file to its end (always with
// --json, which hashes the whole file; otherwise when it ends within 1 MiB
// after the lines shown): else the line says "more follow".
//
// An empty file is "[empty file]". A UTF-8 BOM is dropped; UTF-16 with a BOM
// is decoded; CRLF lines are shown without "\r", noted once at the end; stray
// invalid bytes become U+FFFD. A file with a NUL in its first 8 KiB, or mostly
// invalid UTF-8, is refused as binary. A directory lists its entries, sorted,
// directories with a trailing "/". FIFOs, sockets and devices are refused
// before anything reads them, so reading never hangs.
package read

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"toolkit/internal/cmdline"
	"toolkit/internal/outcome"
	"toolkit/internal/root"
)

// Args is the input of one read call.
type Args struct {
	Path   string `json:"path" flag:"PATH" check:"required,nonempty,nonul" desc:"The file (or directory) to show. Relative paths start at the working directory (at the root with --root)."`
	Offset *int   `json:"offset,omitempty" flag:"--offset N" usage:"first line to show, from 1; N < 0 counts from the end" desc:"The first line to show, from 1. Negative counts from the end: -100 shows the last 100 lines, numbered -100 to -1."`
	Limit  *int   `json:"limit,omitempty" flag:"--limit N" usage:"show N lines (default 2000)" check:"min=1" desc:"How many lines to show; default 2000."`

	// Host holds the settings a host chooses, not the model.
	Host Options `json:"-"`
}

// Options are the host's settings for a read.
type Options struct {
	// Root, when set, confines the path.
	Root *root.Root
	// Hash computes the sha256 of the whole file, and with it the total
	// number of lines: --json asks for it.
	Hash bool
}

// Details are the facts of a read for --json.
type Details struct {
	Path       string  `json:"path"`
	Kind       string  `json:"kind"` // "file" or "directory"
	SHA256     *string `json:"sha256"`
	Bytes      int64   `json:"bytes"`
	FirstLine  int64   `json:"first_line"`
	LinesShown int64   `json:"lines_shown"`
	TotalLines *int64  `json:"total_lines"`
	NextOffset *int64  `json:"next_offset"`
}

// Limits.
const (
	DefaultLimit = 2000
	MaxText      = 256 << 10 // the most text shown
	sniffSize    = 8 << 10   // what the binary test looks at
	countAhead   = 1 << 20   // read on this far to learn the total
	blockSize    = 64 << 10
)

// Applet is read's command line and in-process call.
var Applet = cmdline.Applet[Args]{
	Name:     "read",
	Usage:    "show a text file as numbered lines (or a directory's entries)",
	Synopsis: "toolkit read [flags] PATH",
	Example:  `{"path":"main.go","offset":10,"limit":20}`,
	Run: func(ctx context.Context, a *Args, h cmdline.Host) outcome.Outcome {
		a.Host = Options{Root: h.Root, Hash: h.Details}
		return Run(ctx, *a)
	},
}

// Run reads one file and returns what to show.
func Run(ctx context.Context, a Args) outcome.Outcome {
	limit := int64(DefaultLimit)
	if a.Limit != nil {
		limit = int64(*a.Limit)
	}
	offset := int64(1)
	if a.Offset != nil && *a.Offset != 0 {
		offset = int64(*a.Offset) // 0 is taken as the start, as models often mean it
	}
	r := a.Host.Root
	fi, err := r.Stat(a.Path)
	if err != nil {
		return outcome.Failure("%s", describe(r, a.Path, err))
	}
	if fi.IsDir() {
		return listDir(a, offset, limit)
	}
	if !fi.Mode().IsRegular() {
		return outcome.Failure("%s: not a regular file", a.Path)
	}
	// Opened without waiting on anything, and checked again on the open
	// descriptor: a file swapped for a FIFO after the stat is still refused.
	f, err := r.OpenFile(a.Path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return outcome.Failure("%s", describe(r, a.Path, err))
	}
	defer f.Close()
	if fi, err = f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return outcome.Failure("%s: not a regular file", a.Path)
	}
	rd := &fileReader{a: a, f: f, size: fi.Size(), offset: offset, limit: limit}
	return rd.run()
}

// describe words an error for path: "no such file", "permission denied", …
func describe(r *root.Root, path string, err error) string {
	switch {
	case errors.Is(err, fs.ErrNotExist) && !errors.Is(err, root.ErrOutside):
		return path + ": no such file"
	case errors.Is(err, syscall.ENOTDIR):
		// Name the part of the path that is a file.
		for dir := filepath.Dir(path); dir != "." && dir != "/" && dir != path; dir = filepath.Dir(dir) {
			if fi, err := r.Stat(dir); err == nil && !fi.IsDir() {
				return fmt.Sprintf("%s: %s is not a directory", path, dir)
			}
		}
	}
	return path + ": " + root.Reason(err)
}

// fileReader reads one regular file.
type fileReader struct {
	a      Args
	f      *os.File
	size   int64
	offset int64
	limit  int64

	out        strings.Builder
	shown      int64 // lines shown
	firstShown int64
	full       bool // MaxText reached
	crlf       bool
	hash       hash.Hash
	utf16      binary16 // the file is UTF-16: how
	start      int64    // where the text starts, after a BOM
	hashed     bool     // the hash has seen the whole file
}

type binary16 int

const (
	notUTF16 binary16 = iota
	utf16LE
	utf16BE
)

func (rd *fileReader) run() outcome.Outcome {
	head := make([]byte, min(rd.size, sniffSize))
	if _, err := rd.f.ReadAt(head, 0); err != nil && err != io.EOF {
		return outcome.Failure("%s: %s", rd.a.Path, root.Reason(err))
	}
	switch {
	case bytes.HasPrefix(head, []byte{0xEF, 0xBB, 0xBF}):
		rd.start = 3
	case bytes.HasPrefix(head, []byte{0xFF, 0xFE}):
		rd.utf16, rd.start = utf16LE, 2
	case bytes.HasPrefix(head, []byte{0xFE, 0xFF}):
		rd.utf16, rd.start = utf16BE, 2
	}
	if rd.utf16 == notUTF16 && looksBinary(head[rd.start:]) {
		return outcome.Failure("%s: binary file (%s, %d bytes); not shown", rd.a.Path, mimeType(head), rd.size)
	}
	if rd.a.Host.Hash {
		rd.hash = sha256.New()
	}
	if rd.size == rd.start {
		if rd.offset != 1 && rd.offset != -1 && rd.offset > 0 {
			return outcome.Failure("%s: offset %d is past the end (the file has 0 lines)", rd.a.Path, rd.offset)
		}
		return rd.done("[empty file]\n", 1, 0, zero(), nil)
	}
	if rd.offset < 0 && rd.utf16 == notUTF16 {
		return rd.tail()
	}
	return rd.forward()
}

func zero() *int64 { z := int64(0); return &z }

// forward reads from the start, showing lines offset … offset+limit-1.
func (rd *fileReader) forward() outcome.Outcome {
	first, shift := rd.offset, int64(0)
	if first < 0 {
		// UTF-16 read from the end: count the lines first; number them
		// from the end all the same.
		total, err := rd.countLines()
		if err != nil {
			return outcome.Failure("%s: %s", rd.a.Path, root.Reason(err))
		}
		first, shift = max(1, total+rd.offset+1), total+1
	}
	last := first + rd.limit - 1
	sp := newSplitter(first, last, nil)
	sp.emit = func(l Line) {
		if !rd.add(l.Num-shift, l) {
			sp.last = l.Num - 1
		}
	}
	// Read to the end when the hash needs it; otherwise stop once past the
	// lines shown and far enough on to learn the total, or not.
	src := rd.source()
	buf := make([]byte, blockSize)
	var pastAt int64 = -1 // where reading went past the lines shown
	read := int64(0)
	atEnd := false
	for {
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
		if sp.line > sp.last && pastAt < 0 {
			pastAt = read
		}
		if rd.hash == nil && pastAt >= 0 && read-pastAt >= countAhead {
			break
		}
	}
	if atEnd {
		sp.end()
	}
	var total *int64
	if atEnd {
		t := sp.lines()
		total = &t
		if first > t {
			return outcome.Failure("%s: offset %d is past the end (the file has %d lines)", rd.a.Path, first, t)
		}
	}
	var next *int64
	lastShown := rd.firstShown + rd.shown - 1
	if total == nil || lastShown+shift < *total {
		n := lastShown + 1
		next = &n
	}
	rd.goOn(lastShown, total, next)
	return rd.done(rd.out.String(), rd.firstShown, rd.shown, total, next)
}

// add formats one line, and reports false when the text is full.
func (rd *fileReader) add(num int64, l Line) bool {
	if rd.full {
		return false
	}
	line := fmt.Sprintf("%6d\t%s", num, l.Text)
	if l.Chars > MaxChars {
		line += fmt.Sprintf("… [line cut: %d characters]", l.Chars-MaxChars)
	}
	if rd.out.Len()+len(line)+1 > MaxText && rd.shown > 0 {
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

// goOn writes the closing lines: how to go on, and the notes.
func (rd *fileReader) goOn(lastShown int64, total, next *int64) {
	switch {
	case next != nil && total != nil:
		fmt.Fprintf(&rd.out, "[lines %d-%d of %d; next: offset %d]\n", rd.firstShown, lastShown, *total, *next)
	case next != nil:
		fmt.Fprintf(&rd.out, "[lines %d-%d; more follow; next: offset %d]\n", rd.firstShown, lastShown, *next)
	}
	rd.notes()
}

func (rd *fileReader) notes() {
	switch rd.utf16 {
	case utf16LE:
		rd.out.WriteString("[UTF-16LE text, shown as UTF-8]\n")
	case utf16BE:
		rd.out.WriteString("[UTF-16BE text, shown as UTF-8]\n")
	}
	if rd.crlf {
		rd.out.WriteString("[CRLF line endings]\n")
	}
}

func (rd *fileReader) done(text string, first, shown int64, total, next *int64) outcome.Outcome {
	d := Details{Path: rd.a.Path, Kind: "file", Bytes: rd.size, FirstLine: first, LinesShown: shown, TotalLines: total, NextOffset: next}
	if rd.hash != nil {
		if err := rd.finishHash(); err != nil {
			return outcome.Failure("%s: %s", rd.a.Path, root.Reason(err))
		}
		sum := hex.EncodeToString(rd.hash.Sum(nil))
		d.SHA256 = &sum
	}
	return outcome.Success(text, d)
}

// source is the file's text from its start, as UTF-8, hashed on the way
// when a hash is asked for.
func (rd *fileReader) source() io.Reader {
	var r io.Reader = io.NewSectionReader(rd.f, 0, rd.size)
	if rd.hash != nil {
		r = io.TeeReader(r, rd.hash)
		rd.hashed = true
	}
	r = &skipReader{r: r, skip: rd.start}
	if rd.utf16 != notUTF16 {
		r = &utf16Reader{r: r, big: rd.utf16 == utf16BE}
	}
	return r
}

// finishHash hashes whatever of the file the read did not go through.
func (rd *fileReader) finishHash() error {
	if rd.hashed {
		return nil // source() hashed it all: with a hash, reads go to the end
	}
	_, err := io.Copy(rd.hash, io.NewSectionReader(rd.f, 0, rd.size))
	rd.hashed = true
	return err
}

// tail shows lines counted from the end, found by reading backwards from
// it: what comes before them is never read (unless a hash is asked for).
func (rd *fileReader) tail() outcome.Outcome {
	want := -rd.offset // lines wanted from the end
	buf := make([]byte, blockSize)
	var last [1]byte
	if _, err := rd.f.ReadAt(last[:], rd.size-1); err != nil {
		return outcome.Failure("%s: %s", rd.a.Path, root.Reason(err))
	}
	pos := rd.size
	if last[0] == '\n' {
		pos-- // that line end belongs to the last line
	}
	need := want // line ends still to find, each one before a wanted line
	start := rd.start
	found := false
	for pos > rd.start && !found {
		n := min(int64(blockSize), pos-rd.start)
		pos -= n
		b := buf[:n]
		if _, err := rd.f.ReadAt(b, pos); err != nil && err != io.EOF {
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
	if !found {
		inTail = want - need + 1
	}
	sp := newSplitter(1, rd.limit, nil)
	sp.emit = func(l Line) {
		if !rd.add(l.Num-inTail-1, l) {
			sp.last = l.Num - 1
		}
	}
	sec := io.NewSectionReader(rd.f, start, rd.size-start)
	for {
		n, err := sec.Read(buf)
		sp.write(buf[:n])
		if err == io.EOF || sp.line > sp.last {
			break
		}
		if err != nil {
			return outcome.Failure("%s: %s", rd.a.Path, root.Reason(err))
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
	case found:
		fmt.Fprintf(&rd.out, "[the last %d lines; earlier: offset %d]\n", rd.shown, rd.firstShown-rd.limit)
	}
	rd.notes()
	var total *int64
	if !found {
		total = &inTail
	}
	if rd.hash != nil {
		n, err := rd.hashAll()
		if err != nil {
			return outcome.Failure("%s: %s", rd.a.Path, root.Reason(err))
		}
		total = &n
	}
	return rd.done(rd.out.String(), rd.firstShown, rd.shown, total, next)
}

// hashAll hashes the whole file and counts its lines on the way.
func (rd *fileReader) hashAll() (int64, error) {
	buf := make([]byte, blockSize)
	sec := io.NewSectionReader(rd.f, 0, rd.size)
	var lines int64
	var last byte
	for {
		n, err := sec.Read(buf)
		rd.hash.Write(buf[:n])
		lines += int64(bytes.Count(buf[:n], nl))
		if n > 0 {
			last = buf[n-1]
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return 0, err
		}
	}
	rd.hashed = true
	if rd.size > rd.start && last != '\n' {
		lines++
	}
	return lines, nil
}

// countLines counts the lines of the (decoded) text.
func (rd *fileReader) countLines() (int64, error) {
	sp := newSplitter(1, 0, func(Line) {})
	src := &skipReader{r: io.NewSectionReader(rd.f, 0, rd.size), skip: rd.start}
	var r io.Reader = src
	if rd.utf16 != notUTF16 {
		r = &utf16Reader{r: src, big: rd.utf16 == utf16BE}
	}
	buf := make([]byte, blockSize)
	for {
		n, err := r.Read(buf)
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

// Description tells a model when to use read and what it returns.
const Description = `Read a text file in the sandbox as numbered lines, or list a directory. Use it to look at source, logs and output files before changing or quoting them.

Each line is its number, a tab, and the line, as cat -n prints them: when you quote or edit a line, leave the number and the tab out. The first 2000 lines by default; offset (from 1) and limit choose others, and a negative offset reads from the end (offset -100: the last 100 lines, numbered -100 to -1). When more lines follow, a last line in brackets says which offset to read next.

Limits: a line over 2000 characters is cut and says how much was left out; at most 256 KiB of text per call. A binary file is refused with its type and size. A directory lists its entries, directories with a trailing /. The result's details include the file's sha256, for the write tool's if_match.`
