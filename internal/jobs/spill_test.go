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

// TestExpireSpills: a call looks at the spills only once the oldest one
// kept may have outlived the lifetime, and then removes what has.
func TestExpireSpills(t *testing.T) {
	t.Setenv("TOOLKIT_STATE", filepath.Join(t.TempDir(), "state"))
	dir, err := SpillDir()
	if err != nil {
		t.Fatal(err)
	}
	spill := func(i int, age time.Duration) string {
		p := filepath.Join(dir, fmt.Sprintf("%s%032x%s", SpillPrefix, i, SpillSuffix))
		if err := os.WriteFile(p, []byte("output\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		at := time.Now().Add(-age)
		if err := os.Chtimes(p, at, at); err != nil {
			t.Fatal(err)
		}
		return p
	}
	there := func(p string) bool { _, err := os.Stat(p); return err == nil }
	stamp := filepath.Join(dir, sweptStamp)

	// No stamp yet: the spills are looked at, the expired one goes, and
	// the stamp says when the oldest one kept was written.
	expired, kept := spill(0, 2*time.Hour), spill(1, 30*time.Minute)
	ExpireSpills(time.Hour)
	if there(expired) || !there(kept) {
		t.Fatalf("expired there: %v, kept there: %v", there(expired), there(kept))
	}
	fi, err := os.Stat(stamp)
	if k, _ := os.Stat(kept); err != nil || !fi.ModTime().Equal(k.ModTime()) {
		t.Fatalf("stamp %v, %v; the oldest spill kept %v", fi, err, k.ModTime())
	}

	// Until that spill may have expired, a call reads no spill: one made
	// old behind the stamp's back stays.
	behind := spill(2, 2*time.Hour)
	ExpireSpills(time.Hour)
	if !there(behind) {
		t.Fatal("the spills were looked at while none could have expired")
	}

	// Once it may have, they are: the time passed, as if for both.
	old := time.Now().Add(-90 * time.Minute)
	for _, p := range []string{kept, stamp} {
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
	ExpireSpills(time.Hour)
	if there(behind) || there(kept) || countFiles(dir) != 0 {
		t.Fatalf("left %d spills", countFiles(dir))
	}
	// None kept: the stamp is the trim's own time.
	if fi, err := os.Stat(stamp); err != nil || time.Since(fi.ModTime()) > time.Minute {
		t.Fatalf("stamp %v, %v", fi, err)
	}
}

// countFiles counts the spills in dir.
func countFiles(dir string) int {
	spills, _ := filepath.Glob(filepath.Join(dir, SpillPrefix+"*"))
	return len(spills)
}
