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
// it. A literal is a class string: each of its places a byte or a set of
// bytes in brackets, [Ff] or [a-z] (\ quotes the byte after it). It is
// found from its rarest place, as toolkit's grep finds one: up to three
// bytes with bytes.IndexByte, a range of ASCII eight bytes at a time; the
// other places are checked around a hit.
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
	"strings"
	"sync"
	"syscall"
)

func main() {
	s := &search{out: bufio.NewWriterSize(os.Stdout, 64<<10)}
	expr := flag.String("re", "", "a regular expression each printed line matches")
	flag.Func("also", "a literal each candidate line holds too", func(l string) error {
		s.also = append(s.also, newFinder(parse(l)))
		return nil
	})
	flag.Parse()
	args := flag.Args()
	if len(args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: grep [-re EXPR] [-also LITERAL]... LITERAL... DIR")
		os.Exit(2)
	}
	for _, l := range args[:len(args)-1] {
		s.lits = append(s.lits, newFinder(parse(l)))
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
	lits []*finder // worked out once, copied for each text
	also []*finder
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

// place is one place of a literal: the bytes it may be.
type place [4]uint64

func (p *place) add(c byte)      { p[c>>6] |= 1 << (c & 63) }
func (p *place) has(c byte) bool { return p[c>>6]&(1<<(c&63)) != 0 }

// members are the place's bytes, up to n of them.
func (p *place) members(n int) []byte {
	var out []byte
	for c := 0; c < 256 && len(out) < n; c++ {
		if p.has(byte(c)) {
			out = append(out, byte(c))
		}
	}
	return out
}

// literal is a class string: a text holds it where each byte is in its
// place.
type literal []place

// parse reads a literal: bytes, sets of bytes and ranges in brackets
// ([Ff], [a-z]), \ quoting the next byte.
func parse(l string) literal {
	var lit literal
	for i := 0; i < len(l); i++ {
		var p place
		switch {
		case l[i] == '\\' && i+1 < len(l):
			i++
			p.add(l[i])
		case l[i] == '[' && strings.IndexByte(l[i+1:], ']') > 0:
			end := i + 1 + strings.IndexByte(l[i+1:], ']')
			for k := i + 1; k < end; k++ {
				if k+2 < end && l[k+1] == '-' {
					for c := int(l[k]); c <= int(l[k+2]); c++ {
						p.add(byte(c))
					}
					k += 2
				} else {
					p.add(l[k])
				}
			}
			i = end
		default:
			p.add(l[i])
		}
		lit = append(lit, p)
	}
	return lit
}

// rank is how common a byte is in source text, from 1 (the rarest) to 4,
// and a set as its commonest byte, a rank more when it has several: a
// literal is found from its rarest place, as ripgrep finds one.
func rank(p place) int {
	r := 0
	for c := range 256 {
		if p.has(byte(c)) {
			r = max(r, rankByte(byte(c)))
		}
	}
	if len(p.members(2)) > 1 {
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

// finder finds one literal in one text from its rarest place: where that
// place is up to three bytes, with bytes.IndexByte for each, each byte's
// next place kept until the search passes it; where it is a range of
// ASCII (but NUL), eight bytes at a time (Bit Twiddling Hacks'
// hasbetween); else a byte at a time.
type finder struct {
	lit    literal
	at     int    // the rarest place
	keys   []byte // its bytes, when they are few
	next   []int  // where each key is next, -2 before it is looked for
	lo, hi byte   // its range, when it is one (hi >= lo)
}

func newFinder(lit literal) *finder {
	f := &finder{lit: lit}
	for i := range lit {
		if rank(lit[i]) < rank(lit[f.at]) {
			f.at = i
		}
	}
	p := &lit[f.at]
	if m := p.members(4); len(m) <= 3 {
		f.keys, f.next = m, make([]int, len(m))
		f.reset()
		return f
	}
	m := p.members(256)
	if lo, hi := m[0], m[len(m)-1]; lo > 0 && hi < 0x80 && int(hi-lo)+1 == len(m) {
		f.lo, f.hi = lo, hi
	}
	return f
}

// copy is a finder of its own for one text.
func (f *finder) copy() *finder {
	c := *f
	c.next = make([]int, len(f.keys))
	c.reset()
	return &c
}

// reset readies the finder for a new text.
func (f *finder) reset() {
	for k := range f.next {
		f.next[k] = -2
	}
}

// holds says whether buf holds the literal at i.
func (f *finder) holds(buf []byte, i int) bool {
	if i < 0 || len(buf)-i < len(f.lit) {
		return false
	}
	for k := range f.lit {
		if !f.lit[k].has(buf[i+k]) {
			return false
		}
	}
	return true
}

// anchor is the first place at or after i of a byte of the literal's
// rarest place, or -1.
func (f *finder) anchor(buf []byte, i int) int {
	if f.keys != nil {
		first := -1
		for k, key := range f.keys {
			if f.next[k] != -1 && f.next[k] < i {
				f.next[k] = -1
				if j := bytes.IndexByte(buf[i:], key); j >= 0 {
					f.next[k] = i + j
				}
			}
			if f.next[k] >= 0 && (first < 0 || f.next[k] < first) {
				first = f.next[k]
			}
		}
		return first
	}
	if f.hi >= f.lo && f.hi > 0 {
		const ones, low7 = 0x0101010101010101, 0x7f7f7f7f7f7f7f7f
		m, n := uint64(f.lo)-1, uint64(f.hi)+1
		for ; i+8 <= len(buf); i += 8 {
			x := binary.LittleEndian.Uint64(buf[i:])
			if hit := (ones*(127+n) - x&low7) & ^x & (x&low7 + ones*(127-m)) & (ones << 7); hit != 0 {
				return i + bits.TrailingZeros64(hit)/8
			}
		}
	}
	p := &f.lit[f.at]
	for ; i < len(buf); i++ {
		if p.has(buf[i]) {
			return i
		}
	}
	return -1
}

// find is the first place at or after pos where the literal starts, or -1.
// Between calls on one text, pos never goes back.
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

// lines appends to out the lines of buf that hold a literal (and each
// -also one, and match the expression), as path:LINE:text. Each literal's
// next place is kept until the search passes it.
func (s *search) lines(path string, buf, out []byte) []byte {
	finders := make([]*finder, len(s.lits))
	next := make([]int, len(s.lits))
	for i, f := range s.lits {
		finders[i] = f.copy()
		next[i] = -2 // not looked for yet
	}
	also := make([]*finder, len(s.also))
	for i, f := range s.also {
		also[i] = f.copy()
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
		f.reset() // a new text
		if f.find(line, 0) < 0 {
			return false
		}
	}
	return true
}
