package shell

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestSpillStops: past its bound, the spill file says it stops, and the cut
// line says the file holds only the first part.
func TestSpillStops(t *testing.T) {
	dir := t.TempDir()
	o := Run(context.Background(), Args{Command: "seq 1 100000", Host: Options{MaxOutput: 1000, MaxSpill: 5000, SpillDir: dir}})
	d := o.Details.(Details)
	if d.Cut == nil {
		t.Fatalf("no cut: %q", o.Text)
	}
	if !strings.Contains(o.Text, "; the first 4.9 KiB of the output is in "+d.Cut.SpillPath+"]") {
		t.Fatalf("the cut line does not say the file stops: %q", o.Text)
	}
	b, err := os.ReadFile(d.Cut.SpillPath)
	if err != nil {
		t.Fatal(err)
	}
	want := "[toolkit: the output went on; this file keeps its first 5000 bytes]\n"
	if len(b) != 5000+1+len(want) || !strings.HasSuffix(string(b), "\n"+want) {
		t.Fatalf("spill file of %d bytes ends %q", len(b), b[max(0, len(b)-100):])
	}
	if fi, _ := os.Stat(d.Cut.SpillPath); fi.Mode().Perm() != 0o600 {
		t.Fatalf("spill file mode %v", fi.Mode())
	}
}

// TestDrainKeepsReading: the drain keeps at most its bound, says so, and
// reads on to the end, so that a writer never blocks.
func TestDrainKeepsReading(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	log, err := os.Create(filepath.Join(t.TempDir(), "log"))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { drain(r, log, 1000); close(done) }()
	// 1 MiB, far more than the pipe holds: the write ends only if the drain
	// reads on past its bound.
	if _, err := io.Copy(w, bytes.NewReader(bytes.Repeat([]byte("x"), 1<<20))); err != nil {
		t.Fatal(err)
	}
	w.Close()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("the drain did not end")
	}
	b, _ := os.ReadFile(log.Name())
	if !bytes.HasPrefix(b, bytes.Repeat([]byte("x"), 1000)) || !bytes.HasSuffix(b, []byte("keeps its first 1000 bytes]\n")) || len(b) > 1100 {
		t.Fatalf("log of %d bytes: %q", len(b), b[min(len(b), 990):])
	}
}

func TestSeconds(t *testing.T) {
	for d, want := range map[time.Duration]string{30 * time.Second: "30 s", 250 * time.Millisecond: "0.25 s", 1500 * time.Millisecond: "1.5 s", 2 * time.Second: "2 s"} {
		if got := seconds(d); got != want {
			t.Errorf("seconds(%v) = %q, want %q", d, got, want)
		}
	}
}

func TestSize(t *testing.T) {
	for n, want := range map[int64]string{812: "812 bytes", 12 << 10: "12.0 KiB", 12900000: "12.3 MiB", 3 << 30: "3.0 GiB"} {
		if got := size(n); got != want {
			t.Errorf("size(%d) = %q, want %q", n, got, want)
		}
	}
}
