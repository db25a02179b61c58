package jobs

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestTrimSpills: six whole outputs of 256 MiB leave at most the cap, the
// oldest gone first and the one just written kept; one older than the
// lifetime goes.
func TestTrimSpills(t *testing.T) {
	t.Setenv("TOOLKIT_STATE", filepath.Join(t.TempDir(), "state"))
	dir, err := SpillDir()
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for i := range 6 {
		p := filepath.Join(dir, fmt.Sprintf("%s%032x%s", SpillPrefix, i, SpillSuffix))
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
		if err := os.Truncate(p, 256<<20); err != nil { // sparse: no disk
			t.Fatal(err)
		}
		at := time.Now().Add(time.Duration(i-6) * time.Minute)
		if err := os.Chtimes(p, at, at); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	newest := paths[5]
	kept, _ := TrimSpills(time.Hour, newest)
	if cap := SpillCap(dir, kept.Bytes); kept.Bytes > cap || kept.Bytes > MaxSpills {
		t.Fatalf("kept %d bytes, over the cap of %d", kept.Bytes, cap)
	}
	if _, err := os.Stat(newest); err != nil {
		t.Fatal("the spill just written went")
	}
	if _, err := os.Stat(paths[0]); err == nil {
		t.Fatal("the oldest spill stayed")
	}
	// One older than the lifetime goes.
	old := time.Now().Add(-2 * time.Hour)
	if err := os.Chtimes(newest, old, old); err != nil {
		t.Fatal(err)
	}
	if kept, _ := TrimSpills(time.Hour, ""); kept.Files != countFiles(dir) {
		t.Fatalf("kept %+v, %d files there", kept, countFiles(dir))
	}
	if _, err := os.Stat(newest); err == nil {
		t.Fatal("a spill older than the lifetime stayed")
	}
}

func countFiles(dir string) int {
	e, _ := os.ReadDir(dir)
	return len(e)
}
