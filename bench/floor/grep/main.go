// Command grep is the floor toolkit grep is measured against: the least a
// Go program using the standard library alone does to print ripgrep's
// lines for a pattern whose every match holds one of a few class strings,
// written for speed and nothing else. Its walk and reads are the best of
// ../shared/research/grep-floor.md: a stack of open directories shared by
// one goroutine a CPU (and the runtime a P more), each listed with
// getdents into a buffer it keeps, its files opened by name at their
// directory and read with plain system calls into one buffer a goroutine,
// the buffer searched whole; no ignore files, no hidden names, no sorting,
// no limit, no binary test but a NUL.
// A line is a candidate when it holds one of the literals, and each of the
// -also ones, and is printed when the expression, if one is given, matches
// it. A literal is a class string: each of its places a byte or a range of
// ASCII bytes, [x-y] (\ quotes the byte after it). It is found from its
// rarest place: a byte with bytes.IndexByte, a range eight bytes at a time,
// as toolkit's grep finds one; the other places are checked around a hit.
//
//	grep [-re EXPR] [-also LITERAL]... LITERAL... DIR
package main

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"flag"
	"fmt"
	"math/bits"
	"os"
	"regexp"
	"runtime"
	"strconv"
	"sync"
	"syscall"
)

func main() {
	s := &search{out: bufio.NewWriterSize(os.Stdout, 64<<10)}
	expr := flag.String("re", "", "a regular expression each printed line matches")
	flag.Func("also", "a literal each candidate line holds too", func(l string) error {
		s.also = append(s.also, parse(l))
		return nil
	})
	flag.Parse()
	args := flag.Args()
	if len(args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: grep [-re EXPR] [-also LITERAL]... LITERAL... DIR")
		os.Exit(2)
	}
	for _, l := range args[:len(args)-1] {
		s.lits = append(s.lits, parse(l))
	}
	if *expr != "" {
		s.re = regexp.MustCompile(*expr)
	}
	fd, err := syscall.Open(args[len(args)-1], syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	s.cond.L = &s.mu
	s.todo = []dir{{fd, args[len(args)-1]}}
	// A goroutine a CPU, and the runtime a P more, as toolkit's walk has:
	// one idle while every goroutine is in a system call, so that the
	// runtime does not hand a P in a call to a thread of its own.
	n := runtime.GOMAXPROCS(0)
	runtime.GOMAXPROCS(n + 1)
	var wg sync.WaitGroup
	for range n {
		wg.Go(s.work)
	}
	wg.Wait()
	s.out.Flush()
}

type dir struct {
	fd   int
	path string
}

type search struct {
	lits []literal
	also []literal
	re   *regexp.Regexp

	mu     sync.Mutex
	cond   sync.Cond
	todo   []dir
	active int

	outMu sync.Mutex
	out   *bufio.Writer
}

func (s *search) work() {
	names := make([]byte, 32<<10)
	buf := make([]byte, 0, 4<<20)
	var lines []byte
	s.mu.Lock()
	for {
		for len(s.todo) == 0 && s.active > 0 {
			s.cond.Wait()
		}
		if len(s.todo) == 0 {
			s.cond.Broadcast()
			s.mu.Unlock()
			return
		}
		d := s.todo[len(s.todo)-1]
		s.todo = s.todo[:len(s.todo)-1]
		s.active++
		s.mu.Unlock()
		buf, lines = s.dir(d, names, buf, lines)
		s.mu.Lock()
		s.active--
	}
}

// dir lists d, puts its subdirectories on the stack and searches its files.
func (s *search) dir(d dir, names, buf, lines []byte) ([]byte, []byte) {
	defer syscall.Close(d.fd)
	var files []string
	for {
		n, err := syscall.Getdents(d.fd, names)
		if err != nil || n <= 0 {
			break
		}
		for b := names[:n]; len(b) >= 19; {
			size := int(binary.NativeEndian.Uint16(b[16:]))
			kind, name := b[18], b[19:size]
			b = b[size:]
			name = name[:bytes.IndexByte(name, 0)]
			if name[0] == '.' {
				continue
			}
			switch kind {
			case syscall.DT_DIR:
				fd, err := syscall.Openat(d.fd, string(name), syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
				if err == nil {
					s.mu.Lock()
					s.todo = append(s.todo, dir{fd, d.path + "/" + string(name)})
					s.mu.Unlock()
					s.cond.Signal()
				}
			case syscall.DT_REG:
				files = append(files, string(name))
			}
		}
	}
	for _, name := range files {
		buf = s.read(d.fd, name, buf)
		if i := bytes.IndexByte(buf, 0); i >= 0 {
			continue // binary
		}
		lines = s.lines(d.path+"/"+name, buf, lines[:0])
		if len(lines) > 0 {
			s.outMu.Lock()
			s.out.Write(lines)
			s.outMu.Unlock()
		}
	}
	return buf, lines
}

// read reads the file name of the directory dir into buf.
func (s *search) read(dir int, name string, buf []byte) []byte {
	buf = buf[:0]
	fd, err := syscall.Openat(dir, name, syscall.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
	if err != nil {
		return buf
	}
	defer syscall.Close(fd)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := syscall.Read(fd, buf[len(buf):cap(buf)])
		if n <= 0 || err != nil {
			return buf
		}
		buf = buf[:len(buf)+n]
	}
}

// place is one place of a literal: the bytes from lo to hi.
type place struct{ lo, hi byte }

// literal is a class string: a text holds it where each byte is in its
// place.
type literal []place

// parse reads a literal: bytes, [x-y] ranges, \ quoting the next byte.
func parse(l string) literal {
	var lit literal
	for i := 0; i < len(l); i++ {
		switch {
		case l[i] == '\\' && i+1 < len(l):
			i++
			lit = append(lit, place{l[i], l[i]})
		case l[i] == '[' && i+4 < len(l) && l[i+2] == '-' && l[i+4] == ']':
			lit = append(lit, place{l[i+1], l[i+3]})
			i += 4
		default:
			lit = append(lit, place{l[i], l[i]})
		}
	}
	return lit
}

// rank is how common a byte is in source text, from 1 (the rarest) to 4,
// and a range as its commonest byte and a rank more for each further
// kind: a literal is found from its rarest place, as ripgrep finds one.
func rank(p place) int {
	r := 0
	for c := int(p.lo); c <= int(p.hi); c++ {
		r = max(r, rankByte(byte(c)))
	}
	if p.lo != p.hi {
		r++
	}
	return r
}

func rankByte(c byte) int {
	switch {
	case c == ' ' || c == 'e' || c == 't' || c == '\n':
		return 4
	case c >= 'a' && c <= 'z':
		return 3
	case c >= 'A' && c <= 'Z' || c >= '0' && c <= '9':
		return 2
	case c == '(' || c == ')' || c == '.' || c == '"' || c == '\t':
		return 2
	}
	return 1
}

// finder finds one literal from its rarest place.
type finder struct {
	lit literal
	at  int // the rarest place
}

func newFinder(lit literal) *finder {
	f := &finder{lit: lit}
	for i := range lit {
		if rank(lit[i]) < rank(lit[f.at]) {
			f.at = i
		}
	}
	return f
}

// holds says whether buf holds the literal at i.
func (f *finder) holds(buf []byte, i int) bool {
	if i < 0 || len(buf)-i < len(f.lit) {
		return false
	}
	for k, p := range f.lit {
		if c := buf[i+k]; c < p.lo || c > p.hi {
			return false
		}
	}
	return true
}

// anchor is the first place at or after i of a byte in the literal's
// rarest place, or -1: with bytes.IndexByte for one byte, else eight
// bytes at a time (Bit Twiddling Hacks' hasbetween, for a range of ASCII
// bytes but NUL), and the last few one by one.
func (f *finder) anchor(buf []byte, i int) int {
	p := f.lit[f.at]
	if p.lo == p.hi {
		if j := bytes.IndexByte(buf[i:], p.lo); j >= 0 {
			return i + j
		}
		return -1
	}
	if p.lo > 0 && p.hi < 0x80 {
		const ones, low7 = 0x0101010101010101, 0x7f7f7f7f7f7f7f7f
		m, n := uint64(p.lo)-1, uint64(p.hi)+1
		for ; i+8 <= len(buf); i += 8 {
			x := binary.LittleEndian.Uint64(buf[i:])
			if hit := (ones*(127+n) - x&low7) & ^x & (x&low7 + ones*(127-m)) & (ones << 7); hit != 0 {
				return i + bits.TrailingZeros64(hit)/8
			}
		}
	}
	for ; i < len(buf); i++ {
		if buf[i] >= p.lo && buf[i] <= p.hi {
			return i
		}
	}
	return -1
}

// find is the first place at or after pos where the literal starts, or -1.
func (f *finder) find(buf []byte, pos int) int {
	for i := pos + f.at; i < len(buf); {
		j := f.anchor(buf, i)
		if j < 0 {
			return -1
		}
		if f.holds(buf, j-f.at) {
			return j - f.at
		}
		i = j + 1
	}
	return -1
}

// lines appends to out the lines of buf that hold a literal (and match
// the expression), as path:LINE:text. Each literal's next place is kept
// until the search passes it.
func (s *search) lines(path string, buf, out []byte) []byte {
	finders := make([]*finder, len(s.lits))
	next := make([]int, len(s.lits))
	for i, l := range s.lits {
		finders[i] = newFinder(l)
		next[i] = -2 // not looked for yet
	}
	also := make([]*finder, len(s.also))
	for i, l := range s.also {
		also[i] = newFinder(l)
	}
	line, counted := 1, 0
	for pos := 0; pos < len(buf); {
		at := -1
		for i, f := range finders {
			if next[i] == -2 || next[i] >= 0 && next[i] < pos {
				next[i] = f.find(buf, pos)
			}
			if next[i] >= 0 && (at < 0 || next[i] < at) {
				at = next[i]
			}
		}
		if at < 0 {
			break
		}
		ls := bytes.LastIndexByte(buf[:at], '\n') + 1
		le := len(buf)
		if i := bytes.IndexByte(buf[at:], '\n'); i >= 0 {
			le = at + i
		}
		if s.candidate(also, buf[ls:le]) && (s.re == nil || s.re.Match(buf[ls:le])) {
			line += bytes.Count(buf[counted:ls], []byte{'\n'})
			counted = ls
			out = append(out, path...)
			out = append(out, ':')
			out = strconv.AppendInt(out, int64(line), 10)
			out = append(out, ':')
			out = append(out, buf[ls:le]...)
			out = append(out, '\n')
		}
		pos = le + 1
	}
	return out
}

// candidate says whether line holds each of the -also literals.
func (s *search) candidate(also []*finder, line []byte) bool {
	for _, f := range also {
		if f.find(line, 0) < 0 {
			return false
		}
	}
	return true
}
