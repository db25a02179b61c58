package shell

import (
	"context"
	"os"
	"strings"
	"testing"
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
