package shell

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"os"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// spillData is n bytes that differ from block to block, so that a block
// written in the wrong place shows.
func spillData(n int) []byte {
	b := make([]byte, n)
	_, _ = rand.NewChaCha8([32]byte{1}).Read(b)
	return b
}

// feed writes data to s in pieces of uneven sizes, as reads of a pipe bring
// them; each read goes where the reader puts it, into s.room when it has any.
func feed(s *spill, data []byte) {
	sizes := []int{65536, 4096, 1, 61439, 32768, 100000}
	for i := 0; len(data) > 0; i++ {
		n := min(sizes[i%len(sizes)], len(data))
		p := data[:n]
		if room := s.room(); len(room) > 0 {
			p = room[:copy(room[:min(n, len(room))], data)]
		}
		s.write(p)
		data = data[len(p):]
	}
}

// feedCopied writes data to s from memory of its own.
func feedCopied(s *spill, data []byte) {
	for len(data) > 0 {
		n := min(65536, len(data))
		s.write(data[:n])
		data = data[n:]
	}
}

// fakeDirect stands for the O_DIRECT file, or wraps it: it counts the
// writes and passes each on to f after before says so. withFake gives it
// the spill file through a plain descriptor.
type fakeDirect struct {
	f      directFile
	writes atomic.Int64
	before func(n int64, off int64) error // the nth write, from 1
}

func (d *fakeDirect) WriteAt(p []byte, off int64) (int, error) {
	n := d.writes.Add(1)
	if d.before != nil {
		if err := d.before(n, off); err != nil {
			return 0, err
		}
	}
	return d.f.WriteAt(p, off)
}

func (d *fakeDirect) Close() error { return d.f.Close() }

func withFake(t *testing.T, s *spill, fake *fakeDirect) {
	s.openDirect = func(path string, _ *os.File) (directFile, error) {
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		fake.f = f
		return fake, nil
	}
}

func checkSpill(t *testing.T, s *spill, want []byte) {
	t.Helper()
	path := s.keep()
	if s.err != nil {
		t.Fatalf("spill error: %v", s.err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		i := 0
		for i < min(len(got), len(want)) && got[i] == want[i] {
			i++
		}
		t.Fatalf("spill file of %d bytes, want %d; they differ from byte %d", len(got), len(want), i)
	}
}

// TestSpillDirect: past the cut limit the spill goes to the disk with
// O_DIRECT, and the file holds the output exactly, whatever the sizes of
// the reads and a last block that is not whole.
func TestSpillDirect(t *testing.T) {
	dir := t.TempDir()
	s := newSpill(dir, 1<<20, MaxSpill)
	counted := &fakeDirect{}
	s.openDirect = func(path string, f *os.File) (directFile, error) {
		d, err := openDirect(path, f)
		if err != nil {
			t.Skipf("no O_DIRECT in %s: %v", dir, err)
		}
		counted.f = d
		return counted, nil
	}
	data := spillData(6<<20 + 12345)
	feed(&s, data)
	checkSpill(t, &s, data)
	// The first block goes whatever the disk's speed.
	if counted.writes.Load() == 0 {
		t.Fatal("nothing was written with O_DIRECT")
	}

	// The same from buffers of the reader's own.
	s = newSpill(dir, 1<<20, MaxSpill)
	fake := &fakeDirect{}
	withFake(t, &s, fake)
	feedCopied(&s, data)
	checkSpill(t, &s, data)
	if fake.writes.Load() == 0 {
		t.Fatal("nothing was written with O_DIRECT")
	}
}

// TestSpillDirectRefused: a file system that takes O_DIRECT at open and
// refuses the writes gets every byte all the same, without an error.
func TestSpillDirectRefused(t *testing.T) {
	s := newSpill(t.TempDir(), 1<<20, MaxSpill)
	fake := &fakeDirect{before: func(int64, int64) error { return syscall.EINVAL }}
	withFake(t, &s, fake)
	data := spillData(5 << 20)
	feed(&s, data)
	checkSpill(t, &s, data)
	if n := fake.writes.Load(); n > 2 {
		t.Fatalf("%d writes tried after the first was refused", n-1)
	}
}

// TestSpillDirectHeld: while the disk holds a write, the reader does not
// wait for it past directWait: the rest goes through the page cache, and the
// held block and the one queued behind it land when the disk lets them go.
func TestSpillDirectHeld(t *testing.T) {
	s := newSpill(t.TempDir(), 1<<20, MaxSpill)
	release := make(chan struct{})
	fake := &fakeDirect{before: func(int64, int64) error { <-release; return nil }}
	withFake(t, &s, fake)
	data := spillData(8 << 20)
	fed := make(chan struct{})
	go func() {
		feed(&s, data)
		close(fed)
	}()
	select {
	case <-fed:
	case <-time.After(30 * time.Second):
		t.Fatal("the reader waited for a held O_DIRECT write")
	}
	close(release)
	checkSpill(t, &s, data)
	if n := fake.writes.Load(); n != 2 {
		t.Fatalf("%d O_DIRECT writes, want the held one and the one queued behind it", n)
	}
}

// TestSpillDirectHung: a write the disk never finishes does not keep the
// call from answering; the cut line says how much of the file is whole.
func TestSpillDirectHung(t *testing.T) {
	s := newSpill(t.TempDir(), 1<<20, MaxSpill)
	s.joinWait = 10 * time.Millisecond
	release := make(chan struct{})
	defer close(release)
	fake := &fakeDirect{before: func(int64, int64) error { <-release; return nil }}
	withFake(t, &s, fake)
	feed(&s, spillData(3<<20))
	path := s.keep()
	want := "the output could not all be kept (the disk took more than 10ms to write " + size(directBlock) + "); its first 1048576 bytes are in " + path
	if got := s.where(); got != want {
		t.Fatalf("where = %q\nwant    %q", got, want)
	}
}

// TestSpillDirectFails: a failed O_DIRECT write is said with the length of
// the output before it.
func TestSpillDirectFails(t *testing.T) {
	s := newSpill(t.TempDir(), 1<<20, MaxSpill)
	fake := &fakeDirect{before: func(n, off int64) error {
		if n == 3 {
			return syscall.ENOSPC
		}
		return nil
	}}
	withFake(t, &s, fake)
	feed(&s, spillData(4<<20))
	path := s.keep()
	at := 1<<20 + 2*directBlock
	want := "the output could not all be kept (no space left on device); its first " + strconv.Itoa(at) + " bytes are in " + path
	if got := s.where(); got != want {
		t.Fatalf("where = %q\nwant    %q", got, want)
	}
	if !errors.Is(s.err, syscall.ENOSPC) {
		t.Fatalf("err = %v", s.err)
	}
}

// TestSpillDirectSlowDisk: a disk slower than minDirectRate is left after
// the first directProbe bytes, and the rest goes through the page cache.
func TestSpillDirectSlowDisk(t *testing.T) {
	s := newSpill(t.TempDir(), 1<<20, MaxSpill)
	pause := time.Duration(float64(directBlock) / minDirectRate * 2 * float64(time.Second))
	fake := &fakeDirect{before: func(int64, int64) error { time.Sleep(pause); return nil }}
	withFake(t, &s, fake)
	data := spillData(12 << 20)
	feed(&s, data)
	checkSpill(t, &s, data)
	if n, most := fake.writes.Load(), int64(directProbe/directBlock+1); n > most {
		t.Fatalf("%d O_DIRECT writes at half the least rate; want at most %d", n, most)
	}
}

// TestSpillDirectStops: past max, the file says it stops, after exactly max
// bytes of output, also when O_DIRECT writes them.
func TestSpillDirectStops(t *testing.T) {
	s := newSpill(t.TempDir(), 1<<20, 3<<20+777)
	fake := &fakeDirect{}
	withFake(t, &s, fake)
	data := spillData(5 << 20)
	feed(&s, data)
	want := append(data[:3<<20+777:3<<20+777], "\n[toolkit: the output went on; this file keeps its first 3146505 bytes]\n"...)
	checkSpill(t, &s, want)
	if fake.writes.Load() == 0 {
		t.Fatal("nothing was written with O_DIRECT")
	}
}
