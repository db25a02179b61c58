package index

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// tocIndex is an index of n entries, files in directories of a few levels
// with names that sort around "/" ("a.b", "a/b", "a0"), written at p.
func tocIndex(t testing.TB, p string, n int) *Index {
	x := &Index{}
	for i := range n {
		x.Entries = append(x.Entries, Entry{Path: fmt.Sprintf("d%d/s%d/f%04d", i%7, i%3, i), Mode: 0o100644, Size: int64(i), Ino: uint64(i + 1)})
	}
	x.Entries = append(x.Entries, Entry{Path: "a.b", Mode: 0o100644}, Entry{Path: "a", Mode: 0o040755}, Entry{Path: "a/b", Mode: 0o100644, Size: 7}, Entry{Path: "a0", Mode: 0o120777})
	slices.SortFunc(x.Entries, func(a, b Entry) int { return cmpPath(a.Path, b.Path) })
	if err := x.Write(p); err != nil {
		t.Fatal(err)
	}
	return x
}

// setOf is paths as a set, as Lookup asks for them.
func setOf(paths []string) map[string]bool {
	set := map[string]bool{}
	for _, p := range paths {
		set[p] = true
	}
	return set
}

func cmpPath(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// TestTOC: the paths a said call looks up are found through the index's
// table of contents as the whole index holds them, present or not; an
// index changed since its table was made (its ctime moved), a table made
// for another index, or a torn one, is not used, and the index is read
// whole and checked.
func TestTOC(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "x.index")
	x := tocIndex(t, p, 1000)
	var asked []string
	for _, e := range x.Entries {
		asked = append(asked, e.Path)
	}
	asked = append(asked, "", "0", "a/a", "a/c", "d3/s1", "d9/x", "zz", "d0/s0/f0000x")
	check := func(how string) {
		t.Helper()
		found, sum, ok := findThroughTOC(p, setOf(asked))
		if !ok || sum != x.V.Sum {
			t.Fatalf("%s: not found through the table (%v)", how, ok)
		}
		if len(found) != len(x.Entries) {
			t.Fatalf("%s: %d entries found, the index holds %d", how, len(found), len(x.Entries))
		}
		for _, e := range x.Entries {
			if found[e.Path] != e {
				t.Fatalf("%s: %q found as %+v, is %+v", how, e.Path, found[e.Path], e)
			}
		}
		for _, one := range []string{"d4/s2/f0998", "a/b", "a0", "zz"} {
			found, _, ok := findThroughTOC(p, setOf([]string{one}))
			if want := x.Find(one); !ok || len(found) != map[bool]int{true: 1}[want != nil] || want != nil && found[one] != *want {
				t.Fatalf("%s: %q alone: %+v %v", how, one, found, ok)
			}
		}
	}
	check("as written")
	if _, v, ok := Lookup(p, asked); !ok || v.Sum != x.V.Sum {
		t.Fatalf("Lookup: %v", ok)
	}

	// A byte of an entry changed in place (the same size): its ctime moved,
	// so the table is not used, and the whole index does not check.
	b, err := os.ReadFile(p)
	must(t, err)
	saved := slices.Clone(b)
	time.Sleep(10 * time.Millisecond)
	b[len(indexMagic)+8+2+len(x.Entries[0].Path)] ^= 1 // the first entry's mode
	f, err := os.OpenFile(p, os.O_WRONLY, 0)
	must(t, err)
	_, err = f.WriteAt(b, 0)
	must(t, err)
	must(t, f.Close())
	if _, _, ok := findThroughTOC(p, setOf(asked)); ok {
		t.Fatal("an index changed since its table was used through it")
	}
	if _, _, ok := Lookup(p, asked); ok {
		t.Fatal("an index that does not check was read")
	}

	// A table made for another index: not used; the index is read whole.
	must(t, os.WriteFile(p, saved, 0o600))
	old, err := os.ReadFile(tocPath(p))
	must(t, err)
	y := tocIndex(t, p, 300)
	must(t, os.WriteFile(tocPath(p), old, 0o600))
	if _, _, ok := findThroughTOC(p, setOf(asked)); ok {
		t.Fatal("another index's table was used")
	}
	found, v, ok := Lookup(p, asked)
	if !ok || v.Sum != y.V.Sum || len(found) != len(y.Entries) {
		t.Fatalf("read whole: %d entries of %d, %v", len(found), len(y.Entries), ok)
	}

	// Torn: not used.
	x = tocIndex(t, p, 1000)
	check("written again")
	toc, err := os.ReadFile(tocPath(p))
	must(t, err)
	must(t, os.WriteFile(tocPath(p), toc[:len(toc)-5], 0o600))
	if _, _, ok := findThroughTOC(p, setOf(asked)); ok {
		t.Fatal("a torn table was used")
	}
}

// FuzzTOC: a table whose marks are any bytes, its own sha256 and the
// index's stat made right so that its marks are read, never makes the
// lookup panic, and never finds a path the index does not hold or one it
// was not asked for.
func FuzzTOC(f *testing.F) {
	p := filepath.Join(f.TempDir(), "x.index")
	x := tocIndex(f, p, 200)
	good, err := os.ReadFile(tocPath(p))
	if err != nil {
		f.Fatal(err)
	}
	head := len(tocMagic) + 32 + 8*4
	f.Add(good[head:len(good)-sha256.Size], uint8(len(x.Entries)/tocEvery+1))
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 'a'}, uint8(1))
	var st unix.Stat_t
	if err := unix.Stat(p, &st); err != nil {
		f.Fatal(err)
	}
	asked := []string{"a", "a/b", "a0", "d1/s1/f0001", "nothere"}
	f.Fuzz(func(t *testing.T, marks []byte, n uint8) {
		b := append([]byte(nil), tocMagic...)
		b = append(b, x.V.Sum[:]...)
		b = binary.LittleEndian.AppendUint64(b, uint64(st.Size))
		b = binary.LittleEndian.AppendUint64(b, st.Ino)
		b = binary.LittleEndian.AppendUint64(b, uint64(st.Ctim.Nano()))
		b = binary.LittleEndian.AppendUint64(b, uint64(n))
		b = append(b, marks...)
		own := sha256.Sum256(b)
		if err := os.WriteFile(tocPath(p), append(b, own[:]...), 0o600); err != nil {
			t.Fatal(err)
		}
		found, _, ok := findThroughTOC(p, setOf(asked))
		if !ok {
			return
		}
		for path := range found {
			if x.Find(path) == nil || !slices.Contains(asked, path) {
				t.Fatalf("found %q, which the index does not hold or was not asked for", path)
			}
		}
	})
}
