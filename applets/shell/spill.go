package shell

import (
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"toolkit/internal/tempfile"
)

// spillHold is the most raw output kept in memory before the spill file is
// made. It is small rather than the whole limit: the cutter holds the text
// already, and fresh memory costs more to touch than a file costs to write
// (a page fault took about 10 µs on the virtual machines this was measured on).
const spillHold = 64 << 10

// spill keeps the raw output in a file, but only when the text is cut: the
// first hold bytes wait in memory, and the file is made when more come (and
// removed again if there was no cut after all). It stops at max bytes.
//
// Up to the cut limit the file is written through the page cache. Past it
// the call is being cut, and the rest (up to 256 MiB) goes to the disk with
// O_DIRECT from a goroutine of its own, while the reader goes on: copying
// that much into the page cache cost more CPU than all of toolkit's reading
// and scanning on the machines this was measured on, and took fresh memory
// each time. A disk too slow for that, or a file system that refuses
// O_DIRECT, gets the page cache again for the rest of the call.
type spill struct {
	dir  string
	max  int64
	hold int
	mem  []byte
	f    *os.File
	size int64 // bytes handed to the file
	over bool  // the output went on past max
	path string

	// The first write that failed: its error, and where it was to start
	// (the file holds the output up to there).
	err   error
	errAt int64

	directFrom  int64   // where the O_DIRECT writing begins
	directTried bool    // once a call
	d           *direct // the O_DIRECT writer, while there is one
	// openDirect opens the spill file again for O_DIRECT writes.
	openDirect func(path string, f *os.File) (directFile, error)
	joinWait   time.Duration // the longest the end waits for the last block
}

func newSpill(dir string, limit int, max int64) spill {
	hold := min(limit, spillHold)
	return spill{
		dir: dir, max: max, hold: hold, mem: make([]byte, 0, hold),
		directFrom: (int64(limit) + directBlock - 1) / directBlock * directBlock,
		openDirect: openDirect, joinWait: directJoinWait,
	}
}

func (s *spill) write(p []byte) {
	if s.err != nil || s.over {
		return
	}
	if s.f == nil {
		if len(s.mem)+len(p) <= s.hold {
			s.mem = append(s.mem, p...)
			return
		}
		if !s.open() {
			return
		}
	}
	s.put(p)
}

func (s *spill) open() bool {
	f, err := tempfile.Create(s.dir, "toolkit-shell-", ".log")
	if err != nil {
		s.fail(err, 0)
		s.mem = nil
		return false
	}
	s.f, s.path = f, f.Name()
	s.put(s.mem)
	s.mem = nil
	return s.err == nil
}

func (s *spill) put(p []byte) {
	if room := s.max - s.size; int64(len(p)) > room {
		p = p[:room]
		s.over = true
	}
	if s.size < s.directFrom {
		n := min(int64(len(p)), s.directFrom-s.size)
		s.buffered(p[:n])
		p = p[n:]
	}
	if s.size == s.directFrom && len(p) > 0 && s.err == nil && !s.directTried {
		s.startDirect()
	}
	if s.d != nil && !s.d.stopped && len(p) > 0 {
		n := s.d.put(p)
		s.size += int64(n)
		p = p[n:]
		if s.d.slow.Load() {
			s.stopDirect()
		}
	}
	if len(p) > 0 && s.err == nil {
		s.buffered(p)
	}
	if s.over {
		s.stopDirect()
		note := fmt.Appendf(nil, "\n[toolkit: the output went on; this file keeps its first %d bytes]\n", s.max)
		_, _ = s.f.WriteAt(note, s.size)
	}
}

// room is where the next read can go to be spilled without a copy: the
// free end of the block being filled, or nothing.
func (s *spill) room() []byte {
	if s.d == nil || s.d.stopped || s.over || s.err != nil {
		return nil
	}
	return s.d.cur[len(s.d.cur):cap(s.d.cur)]
}

// buffered writes p at the end of the file, through the page cache.
func (s *spill) buffered(p []byte) {
	n, err := s.f.WriteAt(p, s.size)
	s.size += int64(n)
	if err != nil {
		s.fail(err, s.size)
	}
}

// fail records a write that failed at offset at, keeping the earliest.
func (s *spill) fail(err error, at int64) {
	if s.err == nil || at < s.errAt {
		s.err, s.errAt = err, at
	}
}

func (s *spill) startDirect() {
	s.directTried = true
	f, err := s.openDirect(s.path, s.f)
	if err != nil {
		return // the page cache, then
	}
	d, err := newDirect(f, s.f, s.size)
	if err != nil {
		f.Close()
		return
	}
	s.d = d
}

// stopDirect writes what the O_DIRECT writer has not been given through the
// page cache, and sends it nothing more. The block it may be writing is
// waited for by joinDirect.
func (s *spill) stopDirect() {
	if s.d == nil || s.d.stopped {
		return
	}
	s.d.stopped = true
	close(s.d.todo)
	if len(s.d.cur) > 0 {
		if n, err := s.f.WriteAt(s.d.cur, s.d.off); err != nil {
			s.fail(err, s.d.off+int64(n))
		}
	}
}

// joinDirect waits for the O_DIRECT writer to end, but not for ever: a disk
// that holds a write for longer than joinWait leaves the file without
// that block, and says so.
func (s *spill) joinDirect() {
	d := s.d
	if d == nil {
		return
	}
	s.stopDirect()
	s.d = nil
	t := time.NewTimer(s.joinWait)
	defer t.Stop()
	select {
	case <-d.done:
	case <-t.C:
		s.fail(fmt.Errorf("the disk took more than %v to write %s", s.joinWait, size(directBlock)), d.written.Load())
		return // the block may still be on its way: its memory stays
	}
	if d.err != nil {
		s.fail(d.err, d.errAt)
	}
	d.close()
}

// keep makes sure the file holds the output, closes it, and returns its path.
func (s *spill) keep() string {
	if s.f == nil && s.err == nil {
		s.open()
	}
	s.joinDirect()
	if s.f != nil {
		if err := s.f.Close(); err != nil {
			s.fail(err, s.size)
		}
	}
	return s.path
}

// discard removes the file, if one was made.
func (s *spill) discard() {
	if s.d != nil {
		s.d.cur = s.d.cur[:0] // no need to write what goes anyway
		s.joinDirect()
	}
	if s.f != nil {
		s.f.Close()
		os.Remove(s.path)
	}
	s.mem = nil
}

// where says where the whole output is, for the cut line.
func (s *spill) where() string {
	switch {
	case s.path == "":
		return "the whole output could not be kept: " + errText(s.err)
	case s.err != nil:
		return fmt.Sprintf("the output could not all be kept (%s); its first %d bytes are in %s", errText(s.err), s.errAt, s.path)
	case s.over:
		return fmt.Sprintf("the first %s of the output is in %s", size(s.max), s.path)
	}
	return "the whole output is in " + s.path
}

// The O_DIRECT writer's sizes and limits.
const (
	// directBlock is one write. Two blocks take turns: the reader fills one
	// while the other is on its way to the disk.
	directBlock = 1 << 20
	// A disk slower than minDirectRate (measured over the first
	// directProbe bytes or more) costs the reader more in waiting than the
	// page cache costs it in copying.
	minDirectRate = 512 << 20 // bytes a second
	directProbe   = 4 << 20
	// The reader waits at most directWait for the writer to give a block
	// back, then goes back to the page cache.
	directWait = 50 * time.Millisecond
	// The end of the call waits at most directJoinWait for the last block.
	directJoinWait = 2 * time.Second
)

// directFile is where the O_DIRECT writer writes: the spill file opened with
// O_DIRECT (tests give other ones).
type directFile interface {
	WriteAt(p []byte, off int64) (int, error)
	Close() error
}

// openDirect opens the spill file again, for O_DIRECT writes, and makes sure
// it is the same file.
func openDirect(path string, f *os.File) (directFile, error) {
	d, err := os.OpenFile(path, os.O_WRONLY|syscall.O_DIRECT|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, err
	}
	a, err := f.Stat()
	if err != nil {
		d.Close()
		return nil, err
	}
	b, err := d.Stat()
	if err != nil || !os.SameFile(a, b) {
		d.Close()
		return nil, errors.New("the spill file is not the one made")
	}
	return d, nil
}

// direct writes whole blocks of the spill at aligned offsets from a
// goroutine of its own.
type direct struct {
	f        directFile
	fallback *os.File // the spill as first opened, for a block O_DIRECT refuses
	mem      []byte   // the two blocks, page-aligned as O_DIRECT needs them

	// The reader's side.
	cur     []byte // the block being filled; nil when the writer kept both
	off     int64  // where cur goes in the file
	stopped bool   // todo is closed

	todo    chan block
	free    chan []byte
	done    chan struct{}
	slow    atomic.Bool  // the writer says: send nothing more
	written atomic.Int64 // the file holds the output up to here

	// The writer's side, read once done is closed.
	err   error
	errAt int64
}

type block struct {
	b   []byte
	off int64
}

func newDirect(f directFile, fallback *os.File, off int64) (*direct, error) {
	mem, err := unix.Mmap(-1, 0, 2*directBlock, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return nil, err
	}
	d := &direct{
		f: f, fallback: fallback, mem: mem,
		cur: mem[:0:directBlock], off: off,
		todo: make(chan block, 2), free: make(chan []byte, 2), done: make(chan struct{}),
	}
	d.written.Store(off)
	d.free <- mem[directBlock:directBlock:len(mem)]
	go d.run()
	return d, nil
}

// put copies as much of p into the blocks as it can, sending each block that
// fills, and returns how much it took: less than len(p) when the writer
// could not take a block in time, or said it is too slow.
func (d *direct) put(p []byte) int {
	took := 0
	for len(p) > 0 && d.cur != nil && !d.slow.Load() {
		free := d.cur[len(d.cur):cap(d.cur)]
		var n int
		if &free[0] == &p[0] {
			n = min(len(free), len(p)) // read into the block: in place already
		} else {
			n = copy(free, p)
		}
		d.cur = d.cur[:len(d.cur)+n]
		took += n
		p = p[n:]
		if len(d.cur) == cap(d.cur) && !d.send() {
			break
		}
	}
	return took
}

// send hands the full block to the writer and takes the other one back,
// waiting at most directWait for it. The full block is queued first, so
// that the writer goes from one block to the next without waiting for the
// reader to wake.
func (d *direct) send() bool {
	d.todo <- block{d.cur, d.off} // room for both blocks: never waits
	d.off += int64(len(d.cur))
	d.cur = nil
	select {
	case d.cur = <-d.free:
	default:
		t := time.NewTimer(directWait)
		select {
		case d.cur = <-d.free:
		case <-t.C:
			d.slow.Store(true)
		}
		t.Stop()
	}
	return d.cur != nil
}

func (d *direct) run() {
	defer close(d.done)
	// The disk's rate so far: bytes it took with O_DIRECT, and the time.
	var took int64
	var busy time.Duration
	for b := range d.todo {
		t := time.Now()
		n, err := d.f.WriteAt(b.b, b.off)
		busy += time.Since(t)
		took += int64(n)
		if errors.Is(err, syscall.EINVAL) {
			// O_DIRECT refused these bytes (an alignment the device
			// wants larger, or a file system that takes the flag and not
			// the writes): this block and the rest go the other way.
			d.slow.Store(true)
			n, err = d.fallback.WriteAt(b.b, b.off)
		}
		if err != nil && d.err == nil {
			d.err, d.errAt = err, b.off+int64(n)
			d.slow.Store(true)
		}
		if d.err == nil {
			d.written.Store(b.off + int64(n))
		}
		if took >= directProbe && float64(took) < busy.Seconds()*minDirectRate {
			d.slow.Store(true)
		}
		d.free <- b.b[:0]
	}
}

// close frees the blocks; the writer must have ended.
func (d *direct) close() {
	d.f.Close()
	_ = unix.Munmap(d.mem)
}
