package shell

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// spillData is n bytes that differ from place to place, so that a piece
// written in the wrong place shows.
func spillData(n int) []byte {
	b := make([]byte, n)
	_, _ = rand.NewChaCha8([32]byte{1}).Read(b)
	return b
}

// feed writes data to s in pieces of uneven sizes, as reads of a pipe bring
// them.
func feed(s *spill, data []byte) {
	sizes := []int{65536, 4096, 1, 61439, 32768, 100000}
	for i := 0; len(data) > 0; i++ {
		n := min(sizes[i%len(sizes)], len(data))
		s.Write(data[:n])
		data = data[n:]
	}
}

// TestSpillKeepsAll: the file holds the output exactly, across the move from
// memory to the file, whatever the sizes of the writes.
func TestSpillKeepsAll(t *testing.T) {
	for _, n := range []int{spillHold + 1, spillHold + 4096, 3 << 20} {
		s := newSpill(t.TempDir(), 1<<20, MaxSpill)
		want := spillData(n)
		feed(s, want)
		path := s.keep()
		got, err := os.ReadFile(path)
		if err != nil || s.err != nil || !bytes.Equal(got, want) {
			t.Fatalf("%d bytes: the file holds %d, errors %v, %v", n, len(got), err, s.err)
		}
		if s.where() != "the whole output is in "+path {
			t.Fatalf("where: %q", s.where())
		}
	}
}

// TestSpillSmallStaysInMemory: output that fits in memory makes no file
// unless it is kept, and a discarded one leaves none.
func TestSpillSmallStaysInMemory(t *testing.T) {
	dir := t.TempDir()
	s := newSpill(dir, 1<<20, MaxSpill)
	feed(s, spillData(spillHold))
	if names, _ := os.ReadDir(dir); len(names) != 0 || s.f != nil {
		t.Fatalf("a file was made for %d bytes: %v", spillHold, names)
	}
	s.Write([]byte("x"))
	s.discard()
	if names, _ := os.ReadDir(dir); len(names) != 0 {
		t.Fatalf("discard left %v", names)
	}
}

// TestSpillCannotOpen: a directory that is not there is said in the cut
// line, with the path it tried.
func TestSpillCannotOpen(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "gone")
	s := newSpill(dir, 10, MaxSpill)
	feed(s, spillData(100))
	if path := s.keep(); path != "" || !strings.HasPrefix(s.where(), "the whole output could not be kept: "+dir+"/toolkit-shell-") {
		t.Fatalf("keep %q, where %q", path, s.where())
	}
}
