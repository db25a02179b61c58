package input

import "golang.org/x/sys/unix"

// buffer is memory for an input, mapped apart from Go's heap and populated
// in large steps (MADV_POPULATE_WRITE) rather than a fault per page. It is never unmapped: the strings decoded from it live as long as
// the call, and toolkit reads one input per process. Where mapping fails,
// it falls back to the heap.
type buffer struct {
	b      []byte // len: bytes read; cap: bytes mapped and populated so far
	mapped []byte // the whole mapping: MaxSize+1 for an input of unknown size
}

// populateStep is how much more memory is populated at a time.
const populateStep = 8 << 20

// smallInput is the most input read into Go's heap: a call's input of
// unknown size (from a pipe) starts there, since most are a few hundred
// bytes, and moves to a mapping when it outgrows it. Mapping and populating
// the first step for every call cost 2 ms and 8 MiB of memory.
const smallInput = 64 << 10

func newBuffer(size int64) *buffer {
	switch {
	case size < 0:
		return &buffer{b: make([]byte, 0, smallInput)}
	case size < smallInput:
		return &buffer{b: make([]byte, 0, size+1)} // one more, to see the end
	}
	if buf := mapBuffer(int(size) + 1); buf != nil {
		return buf
	}
	return &buffer{b: make([]byte, 0, 1<<20)}
}

// mapBuffer maps memory for an input and populates its first n bytes, or
// returns nil.
func mapBuffer(n int) *buffer {
	m, err := unix.Mmap(-1, 0, MaxSize+1, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE|unix.MAP_NORESERVE)
	if err != nil {
		return nil
	}
	// Huge pages where the kernel gives them: on virtual machines, a first
	// touch of each 4 KiB page and each TLB miss cost far more than on metal
	// (reading and decoding 64 MiB: 320 ms in 4 KiB pages, 140 ms in 2 MiB ones).
	_ = unix.Madvise(m, unix.MADV_HUGEPAGE)
	buf := &buffer{mapped: m, b: m[:0:0]}
	buf.populate(n)
	return buf
}

// populate makes the first n bytes of the mapping ready to be written.
func (buf *buffer) populate(n int) {
	n = min(n, len(buf.mapped))
	if have := cap(buf.b); n > have {
		_ = unix.Madvise(buf.mapped[have:n], unix.MADV_POPULATE_WRITE) // faster; faults work too
	}
	buf.b = buf.mapped[:len(buf.b):n]
}

// grow makes room for more input, and reports false past MaxSize.
func (buf *buffer) grow() bool {
	if buf.mapped == nil {
		if cap(buf.b) > MaxSize {
			return false
		}
		if m := mapBuffer(len(buf.b) + populateStep); m != nil {
			m.b = m.b[:copy(m.b[:len(buf.b)], buf.b)]
			*buf = *m
			return true
		}
		bigger := make([]byte, len(buf.b), min(2*cap(buf.b)+1, MaxSize+1))
		copy(bigger, buf.b)
		buf.b = bigger
		return true
	}
	if cap(buf.b) >= len(buf.mapped) {
		return false
	}
	buf.populate(cap(buf.b) + populateStep)
	return true
}
