// Command grep is the floor toolkit grep is measured against: the least a
// Go program using the standard library alone does to print ripgrep's
// lines for a pattern with a literal in every match, written for speed
// and nothing else. Its walk and reads are the best of
// ../shared/research/grep-floor.md: a stack of open directories shared by
// one goroutine a CPU (and the runtime a P more), each listed with
// getdents into a buffer it keeps, its files opened by name at their
// directory and read with plain system calls into one buffer a goroutine,
// the buffer searched whole; no ignore files, no hidden names, no sorting,
// no limit, no binary test but a NUL.
// A line is a candidate when it holds one of the literals (found with
// bytes.Index), and is printed when the expression, if one is given,
// matches it.
//
//	grep [-re EXPR] LITERAL... DIR
package main

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"flag"
	"fmt"
	"os"
	"regexp"
	"runtime"
	"strconv"
	"sync"
	"syscall"
)

func main() {
	expr := flag.String("re", "", "a regular expression each printed line matches")
	flag.Parse()
	args := flag.Args()
	if len(args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: grep [-re EXPR] LITERAL... DIR")
		os.Exit(2)
	}
	s := &search{out: bufio.NewWriterSize(os.Stdout, 64<<10)}
	for _, l := range args[:len(args)-1] {
		s.lits = append(s.lits, []byte(l))
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
	lits [][]byte
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

// rank is how common a byte is in source text, from 1 (the rarest) to 4:
// a literal is found from its rarest byte, as ripgrep finds one.
func rank(c byte) int {
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

// finder finds one literal from its rarest byte.
type finder struct {
	lit []byte
	at  int // the place of the rarest byte in lit
}

func newFinder(lit []byte) *finder {
	f := &finder{lit: lit}
	for i := range lit {
		if rank(lit[i]) < rank(lit[f.at]) {
			f.at = i
		}
	}
	return f
}

// find is the first place at or after pos where the literal starts, or -1.
func (f *finder) find(buf []byte, pos int) int {
	for i := pos + f.at; i < len(buf); {
		j := bytes.IndexByte(buf[i:], f.lit[f.at])
		if j < 0 {
			return -1
		}
		start := i + j - f.at
		if start+len(f.lit) <= len(buf) && bytes.Equal(buf[start:start+len(f.lit)], f.lit) {
			return start
		}
		i += j + 1
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
		if s.re == nil || s.re.Match(buf[ls:le]) {
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
