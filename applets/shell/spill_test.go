package shell

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"toolkit/internal/jobs"
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

// TestSpillTrimsBehind: with the state's spills at their cap, a cut output
// makes the oldest go while it is written, before it is kept (the removal
// overlaps the command's run); an output that is not cut makes none go.
func TestSpillTrimsBehind(t *testing.T) {
	for _, cut := range []bool{true, false} {
		t.Setenv("TOOLKIT_STATE", filepath.Join(t.TempDir(), "state"))
		dir, err := jobs.SpillDir()
		if err != nil {
			t.Fatal(err)
		}
		// Four older spills that fill the cap (sparse: no disk).
		each := jobs.SpillCap(dir, 0) / 4
		var old []string
		for i := range 4 {
			p := filepath.Join(dir, fmt.Sprintf("%s%032x%s", jobs.SpillPrefix, i, jobs.SpillSuffix))
			if err := os.WriteFile(p, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Truncate(p, each); err != nil {
				t.Fatal(err)
			}
			at := time.Now().Add(time.Duration(i-5) * time.Minute)
			if err := os.Chtimes(p, at, at); err != nil {
				t.Fatal(err)
			}
			old = append(old, p)
		}
		h := Options{MaxOutput: 1 << 20, JobLifetime: time.Hour}.withDefaults()
		if cut {
			h.MaxOutput = 1000
		}
		o := newOutput(h)
		for range 8 {
			o.write(bytes.Repeat([]byte("a line of output\n"), 4096))
		}
		o.spill.trimmed()
		_, err = os.Stat(old[0])
		if gone := os.IsNotExist(err); gone != cut {
			t.Fatalf("cut %v: the oldest spill gone %v before the output ended", cut, gone)
		}
		var b strings.Builder
		o.finish(&b)
		for _, p := range old[1:] {
			if _, err := os.Stat(p); err != nil {
				t.Fatalf("cut %v: a spill within the cap went: %v", cut, err)
			}
		}
	}
}
