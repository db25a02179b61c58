package index

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestIndexRoundTrip: an index written is read back as it was; a byte
// changed anywhere makes it corrupt, never another index.
func TestIndexRoundTrip(t *testing.T) {
	x := &Index{Entries: []Entry{
		{Path: "a", Mode: 0o100644, Size: 3, Mtime: 1, Ctime: 2, Ino: 3, Dev: 4, Sum: sha256.Sum256([]byte("a")), Flags: Stored},
		{Path: "dir", Mode: 0o040755},
		{Path: "dir/new\nline", Mode: 0o100600, Size: 1 << 40, Flags: Racy | Heavy},
	}}
	p := filepath.Join(t.TempDir(), "index")
	if err := x.Write(p); err != nil {
		t.Fatal(err)
	}
	y, err := Read(p)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(x.Entries) != fmt.Sprint(y.Entries) {
		t.Fatalf("read back %+v\nwant %+v", y.Entries, x.Entries)
	}
	b, _ := os.ReadFile(p)
	for i := range b {
		c := bytes.Clone(b)
		c[i] ^= 0x40
		if _, err := Parse(c); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("byte %d changed: %v", i, err)
		}
	}
	if x, err := Read(filepath.Join(t.TempDir(), "none")); err != nil || len(x.Entries) != 0 {
		t.Fatalf("no index: %v %v", x, err)
	}
}

// FuzzIndex: any bytes read as an index are refused or give sorted entries
// that write back to the same bytes; never a panic. Lookup, which
// reads the same bytes a block at a time, refuses what Parse refuses
// and finds the entries it finds.
func FuzzIndex(f *testing.F) {
	x := &Index{Entries: []Entry{{Path: "a", Mode: 0o100644, Size: 1}, {Path: "b/c", Mode: 0o120777}}}
	p := filepath.Join(f.TempDir(), "index")
	if err := x.Write(p); err != nil {
		f.Fatal(err)
	}
	good, _ := os.ReadFile(p)
	f.Add(good)
	f.Add([]byte("TKHIDX1\n"))
	fuzzed := filepath.Join(f.TempDir(), "fuzzed") // each worker runs its inputs one at a time
	f.Fuzz(func(t *testing.T, b []byte) {
		x, err := Parse(b)
		p := fuzzed
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		var paths []string
		if err == nil {
			for _, e := range x.Entries {
				paths = append(paths, e.Path)
			}
		}
		found, _, ok := Lookup(p, append(paths, "a"))
		if ok != (err == nil) || ok && len(found) != len(x.Entries) {
			t.Fatalf("Parse: %v; Lookup: %v, %d of %d entries", err, ok, len(found), len(paths))
		}
		if err != nil {
			return
		}
		for _, e := range x.Entries {
			if found[e.Path] != e {
				t.Fatalf("Lookup found %+v for %+v", found[e.Path], e)
			}
		}
		q := filepath.Join(t.TempDir(), "index")
		if err := x.Write(q); err != nil {
			t.Fatal(err)
		}
		if again, _ := os.ReadFile(q); !bytes.Equal(again, b) {
			t.Fatalf("read and written again, %d bytes became %d", len(b), len(again))
		}
	})
}

// TestSaidFile: what a call said is appended beside the index, read with
// it, and looked up without parsing the index whole; a torn batch ends
// what is read and is cut off by the next append; a delta that names
// another index is not read; a whole write of the index folds it in; one
// that would pass MaxDelta is refused.
func TestSaidFile(t *testing.T) {
	x := &Index{Entries: []Entry{
		{Path: "a", Mode: 0o100644, Size: 1},
		{Path: "b", Mode: 0o100600, Size: 2},
		{Path: "d/e", Mode: 0o100755, Size: 3},
	}}
	p := filepath.Join(t.TempDir(), "index")
	must(t, x.Write(p))
	said := []Delta{
		{Entry: Entry{Path: "a", Mode: 0o100644, Size: 10, Flags: Racy}, There: true},
		{Entry: Entry{Path: "b"}},
		{Entry: Entry{Path: "c", Mode: 0o100644, Size: 5}, There: true},
	}
	size, err := AppendDelta(p, x.V.Sum, said)
	must(t, err)
	paths := func(x *Index) string {
		var s []string
		for _, e := range x.Entries {
			s = append(s, fmt.Sprintf("%s:%d", e.Path, e.Size))
		}
		return strings.Join(s, " ")
	}
	y, err := Read(p)
	must(t, err)
	if got := paths(y); got != "a:10 c:5 d/e:3" {
		t.Fatalf("index and delta read as %s", got)
	}
	if v := VersionOf(p); y.V != v || v.Said != size {
		t.Fatalf("version read %+v, on disk %+v, appended to %d", y.V, v, size)
	}
	found, v, ok := Lookup(p, []string{"a", "b", "c", "d/e", "zz"})
	if !ok || v != y.V || len(found) != 3 || found["a"].Size != 10 || found["c"].Size != 5 || found["d/e"].Mode != 0o100755 {
		t.Fatalf("found %+v %+v %v", found, v, ok)
	}

	// A batch torn by a kill: not read; the next append cuts it off.
	f, err := os.OpenFile(DeltaPath(p), os.O_WRONLY|os.O_APPEND, 0)
	must(t, err)
	_, err = f.Write([]byte{40, 0, 0, 0, 1, 2, 3})
	must(t, err)
	must(t, f.Close())
	if y, err := Read(p); err != nil || paths(y) != "a:10 c:5 d/e:3" {
		t.Fatalf("with a torn batch: %v %v", paths(y), err)
	}
	size2, err := AppendDelta(p, x.V.Sum, []Delta{{Entry: Entry{Path: "d/e"}}})
	must(t, err)
	batch := int64(4 + 1 + 2 + len("d/e") + recLen + 32) // length, there, path, record, sha256
	if fi, _ := os.Stat(DeltaPath(p)); fi.Size() != size2 || size2 != size+batch {
		t.Fatalf("delta %d bytes, appended to %d: the torn batch is left after %d", fi.Size(), size2, size)
	}
	if y, err := Read(p); err != nil || paths(y) != "a:10 c:5" {
		t.Fatalf("after the torn batch cut off: %v %v", paths(y), err)
	}

	// Every byte of a batch checked: one changed ends what is read there.
	b, _ := os.ReadFile(DeltaPath(p))
	for i := len(deltaMagic); i < len(b); i++ {
		c := bytes.Clone(b)
		c[i] ^= 0x40
		if _, good := parseDelta(c, x.V.Sum); good >= len(b) {
			t.Fatalf("byte %d changed, and every batch still read", i)
		}
	}

	// The index written whole: the delta goes; one a kill left behind
	// the rename names the old index, and is not read.
	old := x.V.Sum
	y, _ = Read(p)
	must(t, y.Write(p))
	if _, err := os.Stat(DeltaPath(p)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the delta is left: %v", err)
	}
	_, err = AppendDelta(p, old, []Delta{{Entry: Entry{Path: "a"}}})
	must(t, err)
	if y, err := Read(p); err != nil || paths(y) != "a:10 c:5" {
		t.Fatalf("a delta of another index was read: %v %v", paths(y), err)
	}

	defer func(m int64) { MaxDelta = m }(MaxDelta)
	MaxDelta = 200
	if _, err := AppendDelta(p, y.V.Sum, said); !errors.Is(err, ErrDeltaFull) {
		t.Fatalf("past MaxDelta: %v", err)
	}
}

// FuzzSaid: any bytes read as a delta give whole batches only, that
// read the same when cut to them; never a panic.
func FuzzSaid(f *testing.F) {
	x := &Index{Entries: []Entry{{Path: "a", Mode: 0o100644, Size: 1}}}
	p := filepath.Join(f.TempDir(), "index")
	if err := x.Write(p); err != nil {
		f.Fatal(err)
	}
	if _, err := AppendDelta(p, x.V.Sum, []Delta{{Entry: Entry{Path: "a", Size: 2}, There: true}, {Entry: Entry{Path: "b/c"}}}); err != nil {
		f.Fatal(err)
	}
	good, _ := os.ReadFile(DeltaPath(p))
	f.Add(good)
	f.Add(good[:len(good)-1])
	f.Fuzz(func(t *testing.T, b []byte) {
		var sum [32]byte
		if len(b) >= len(deltaMagic)+32 {
			copy(sum[:], b[len(deltaMagic):])
		}
		said, n := parseDelta(b, sum)
		if n > len(b) || n == 0 && said != nil {
			t.Fatalf("%d bytes read as %d, %d entries", len(b), n, len(said))
		}
		if again, m := parseDelta(b[:n], sum); m != n || fmt.Sprint(again) != fmt.Sprint(said) {
			t.Fatalf("cut to its %d whole bytes, read as %d", n, m)
		}
	})
}
