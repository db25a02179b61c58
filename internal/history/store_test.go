package history

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestIndexRoundTrip: an index written is read back as it was; a byte
// changed anywhere makes it corrupt, never another index.
func TestIndexRoundTrip(t *testing.T) {
	x := &Index{Entries: []Entry{
		{Path: "a", Mode: 0o100644, Size: 3, Mtime: 1, Ctime: 2, Ino: 3, Dev: 4, Sum: sha256.Sum256([]byte("a")), Flags: Stored},
		{Path: "dir", Mode: 0o040755},
		{Path: "dir/new\nline", Mode: 0o100600, Size: 1 << 40, Flags: Racy | Heavy},
	}}
	p := filepath.Join(t.TempDir(), "index")
	if err := x.write(p); err != nil {
		t.Fatal(err)
	}
	y, err := readIndex(p)
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
		if _, err := parseIndex(c); !errors.Is(err, errCorrupt) {
			t.Fatalf("byte %d changed: %v", i, err)
		}
	}
	if x, err := readIndex(filepath.Join(t.TempDir(), "none")); err != nil || len(x.Entries) != 0 {
		t.Fatalf("no index: %v %v", x, err)
	}
}

// FuzzIndex: any bytes read as an index are refused or give sorted entries
// that write back to the same bytes; never a panic. findEntries, which
// reads the same bytes a block at a time, refuses what parseIndex refuses
// and finds the entries it finds.
func FuzzIndex(f *testing.F) {
	x := &Index{Entries: []Entry{{Path: "a", Mode: 0o100644, Size: 1}, {Path: "b/c", Mode: 0o120777}}}
	p := filepath.Join(f.TempDir(), "index")
	if err := x.write(p); err != nil {
		f.Fatal(err)
	}
	good, _ := os.ReadFile(p)
	f.Add(good)
	f.Add([]byte("TKHIDX1\n"))
	fuzzed := filepath.Join(f.TempDir(), "fuzzed") // each worker runs its inputs one at a time
	f.Fuzz(func(t *testing.T, b []byte) {
		x, err := parseIndex(b)
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
		found, _, ok := findEntries(p, append(paths, "a"))
		if ok != (err == nil) || ok && len(found) != len(x.Entries) {
			t.Fatalf("parseIndex: %v; findEntries: %v, %d of %d entries", err, ok, len(found), len(paths))
		}
		if err != nil {
			return
		}
		for _, e := range x.Entries {
			if found[e.Path] != e {
				t.Fatalf("findEntries found %+v for %+v", found[e.Path], e)
			}
		}
		q := filepath.Join(t.TempDir(), "index")
		if err := x.write(q); err != nil {
			t.Fatal(err)
		}
		if again, _ := os.ReadFile(q); !bytes.Equal(again, b) {
			t.Fatalf("read and written again, %d bytes became %d", len(b), len(again))
		}
	})
}

// TestStoreTornTail: a pack or its records cut short (toolkit killed mid-
// append) are cut back to their last whole frame when the store is opened,
// and what came before still reads; a byte changed in a frame is corrupt,
// never another content; the oldest packs go first past the cap.
func TestStoreTornTail(t *testing.T) {
	dir := t.TempDir()
	s, err := openStore(dir, 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	var sums [][32]byte
	for i := range 3 {
		sum, err := keepIn(s, []byte(fmt.Sprintf("content %d\n", i)))
		if err != nil {
			t.Fatal(err)
		}
		sums = append(sums, sum)
	}
	if again, _ := keepIn(s, []byte("content 0\n")); again != sums[0] || s.total != s.sizes[1] {
		t.Fatal("a content twice")
	}
	if err := s.close(); err != nil {
		t.Fatal(err)
	}
	pack, idx := filepath.Join(dir, "000001.pack"), filepath.Join(dir, "000001.idx")
	fi, _ := os.Stat(pack)
	if err := os.Truncate(pack, fi.Size()-3); err != nil { // the last frame torn
		t.Fatal(err)
	}
	s, err = openStore(dir, 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	if s.has(sums[2]) || !s.has(sums[1]) {
		t.Fatal("the torn frame is kept, or the whole one before it is not")
	}
	if b, err := s.get(sums[1]); err != nil || string(b) != "content 1\n" {
		t.Fatalf("get: %q %v", b, err)
	}
	if fi, _ := os.Stat(idx); fi.Size() != 2*idxRecord {
		t.Fatalf("records: %d bytes", fi.Size())
	}
	s.close()
	b, _ := os.ReadFile(pack)
	b[len(b)-2] ^= 1
	os.WriteFile(pack, b, 0o600)
	s, _ = openStore(dir, 1<<30)
	if _, err := s.get(sums[1]); !errors.Is(err, errCorrupt) {
		t.Fatalf("a corrupt frame: %v", err)
	}
	s.close()

	// The cap: a new pack each time, the oldest dropped.
	capDir := t.TempDir()
	s, _ = openStore(capDir, 1)
	first, _ := keepIn(s, []byte("first"))
	s.next()
	s.curNum++ // a pack of its own
	s.cur.Close()
	s.curIdx.Close()
	s.cur = nil
	second, _ := keepIn(s, []byte("second"))
	if err := s.sync(); err != nil {
		t.Fatal(err)
	}
	if s.has(first) || !s.has(second) {
		t.Fatalf("the cap kept %v, dropped %v", s.has(first), !s.has(second))
	}
	s.close()
}

// keepIn puts data in s: its sha256, and what put said.
func keepIn(s *store, data []byte) ([32]byte, error) {
	sum := hashOf(data)
	return sum, s.put(data, sum)
}

// nextPack makes s append to a pack of its own from its next put on.
func nextPack(t *testing.T, s *store) {
	t.Helper()
	if err := s.next(); err != nil {
		t.Fatal(err)
	}
	s.curNum++
	s.cur.Close()
	s.curIdx.Close()
	s.cur = nil
}

// TestStoreLooksOnDisk: a call that looks up a few contents reads only
// the last pack's records (its torn tail cut, so that it is appended to
// as before) and looks through the other packs' records on disk, each
// whole record only; past fewLooks lookups, every record is read.
func TestStoreLooksOnDisk(t *testing.T) {
	dir := t.TempDir()
	s, err := openStore(dir, 1<<30)
	must(t, err)
	var sums [][32]byte
	for i := range 6 {
		if i > 0 && i%2 == 0 {
			nextPack(t, s)
		}
		sum, err := keepIn(s, []byte(fmt.Sprintf("content %d\n", i)))
		must(t, err)
		sums = append(sums, sum)
	}
	must(t, s.close())
	if got := s.packs(); !slices.Equal(got, []int{1, 2, 3}) {
		t.Fatalf("packs %v", got)
	}
	// The last pack's last frame torn; pack 2's last record names a
	// frame past its pack's end.
	fi, _ := os.Stat(s.packPath(3))
	must(t, os.Truncate(s.packPath(3), fi.Size()-3))
	fi, _ = os.Stat(s.packPath(2))
	must(t, os.Truncate(s.packPath(2), fi.Size()-1))

	s, err = openStore(dir, 1<<30)
	must(t, err)
	defer s.close()
	want := []bool{true, true, true, false, true, false}
	for i, sum := range sums {
		if got := s.has(sum); got != want[i] {
			t.Fatalf("content %d: has says %v", i, got)
		}
	}
	if s.loaded || len(s.locs) != 1 {
		t.Fatalf("after %d lookups: every record read %v, %d in memory", len(sums), s.loaded, len(s.locs))
	}
	if fi, _ := os.Stat(s.idxPath(3)); fi.Size() != idxRecord {
		t.Fatalf("the last pack's torn record is left: %d bytes", fi.Size())
	}
	again, err := keepIn(s, []byte("content 5\n"))
	must(t, err)
	if again != sums[5] || s.loaded {
		t.Fatal("put anew: another sum, or every record read")
	}
	for range fewLooks {
		s.has(sums[0])
	}
	if !s.loaded {
		t.Fatalf("%d lookups, and the records are still read from disk", fewLooks+len(sums))
	}
	for i, sum := range sums {
		b, err := s.get(sum)
		if ok := err == nil && string(b) == fmt.Sprintf("content %d\n", i); ok != (i != 3) {
			t.Fatalf("content %d read back as %q: %v", i, b, err)
		}
	}
}

// FuzzPack: any bytes as a pack and its records open as a store that
// gives back only contents whose sha256 checks, or nothing; never a panic.
func FuzzPack(f *testing.F) {
	dir := f.TempDir()
	s, _ := openStore(dir, 1<<30)
	keepIn(s, []byte("hello\n"))
	s.close()
	pack, _ := os.ReadFile(filepath.Join(dir, "000001.pack"))
	idx, _ := os.ReadFile(filepath.Join(dir, "000001.idx"))
	f.Add(pack, idx)
	f.Fuzz(func(t *testing.T, pack, idx []byte) {
		d := t.TempDir()
		os.WriteFile(filepath.Join(d, "000001.pack"), pack, 0o600)
		os.WriteFile(filepath.Join(d, "000001.idx"), idx, 0o600)
		s, err := openStore(d, 1<<30)
		if err != nil {
			return
		}
		defer s.close()
		for sum := range s.locs {
			if b, err := s.get(sum); err == nil && sha256.Sum256(b) != sum {
				t.Fatal("a content that is not its sha256's")
			}
		}
	})
}

// TestSaidFile: what a call said is appended beside the index, read with
// it, and looked up without parsing the index whole; a torn batch ends
// what is read and is cut off by the next append; a said file that names
// another index is not read; a whole write of the index folds it in; one
// that would pass maxSaid is refused.
func TestSaidFile(t *testing.T) {
	x := &Index{Entries: []Entry{
		{Path: "a", Mode: 0o100644, Size: 1},
		{Path: "b", Mode: 0o100600, Size: 2},
		{Path: "d/e", Mode: 0o100755, Size: 3},
	}}
	p := filepath.Join(t.TempDir(), "index")
	must(t, x.write(p))
	said := []saidEntry{
		{Entry: Entry{Path: "a", Mode: 0o100644, Size: 10, Flags: Racy}, There: true},
		{Entry: Entry{Path: "b"}},
		{Entry: Entry{Path: "c", Mode: 0o100644, Size: 5}, There: true},
	}
	size, err := appendSaid(p, x.v.sum, said)
	must(t, err)
	paths := func(x *Index) string {
		var s []string
		for _, e := range x.Entries {
			s = append(s, fmt.Sprintf("%s:%d", e.Path, e.Size))
		}
		return strings.Join(s, " ")
	}
	y, err := readIndex(p)
	must(t, err)
	if got := paths(y); got != "a:10 c:5 d/e:3" {
		t.Fatalf("index and said file read as %s", got)
	}
	if v := indexVersion(p); y.v != v || v.said != size {
		t.Fatalf("version read %+v, on disk %+v, appended to %d", y.v, v, size)
	}
	found, v, ok := findEntries(p, []string{"a", "b", "c", "d/e", "zz"})
	if !ok || v != y.v || len(found) != 3 || found["a"].Size != 10 || found["c"].Size != 5 || found["d/e"].Mode != 0o100755 {
		t.Fatalf("found %+v %+v %v", found, v, ok)
	}

	// A batch torn by a kill: not read; the next append cuts it off.
	f, err := os.OpenFile(saidPath(p), os.O_WRONLY|os.O_APPEND, 0)
	must(t, err)
	_, err = f.Write([]byte{40, 0, 0, 0, 1, 2, 3})
	must(t, err)
	must(t, f.Close())
	if y, err := readIndex(p); err != nil || paths(y) != "a:10 c:5 d/e:3" {
		t.Fatalf("with a torn batch: %v %v", paths(y), err)
	}
	size2, err := appendSaid(p, x.v.sum, []saidEntry{{Entry: Entry{Path: "d/e"}}})
	must(t, err)
	batch := int64(4 + 1 + 2 + len("d/e") + recLen + 32) // length, there, path, record, sha256
	if fi, _ := os.Stat(saidPath(p)); fi.Size() != size2 || size2 != size+batch {
		t.Fatalf("said file %d bytes, appended to %d: the torn batch is left after %d", fi.Size(), size2, size)
	}
	if y, err := readIndex(p); err != nil || paths(y) != "a:10 c:5" {
		t.Fatalf("after the torn batch cut off: %v %v", paths(y), err)
	}

	// Every byte of a batch checked: one changed ends what is read there.
	b, _ := os.ReadFile(saidPath(p))
	for i := len(saidMagic); i < len(b); i++ {
		c := bytes.Clone(b)
		c[i] ^= 0x40
		if _, good := parseSaid(c, x.v.sum); good >= len(b) {
			t.Fatalf("byte %d changed, and every batch still read", i)
		}
	}

	// The index written whole: the said file goes; one a kill left behind
	// the rename names the old index, and is not read.
	old := x.v.sum
	y, _ = readIndex(p)
	must(t, y.write(p))
	if _, err := os.Stat(saidPath(p)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the said file is left: %v", err)
	}
	_, err = appendSaid(p, old, []saidEntry{{Entry: Entry{Path: "a"}}})
	must(t, err)
	if y, err := readIndex(p); err != nil || paths(y) != "a:10 c:5" {
		t.Fatalf("a said file of another index was read: %v %v", paths(y), err)
	}

	defer func(m int64) { maxSaid = m }(maxSaid)
	maxSaid = 200
	if _, err := appendSaid(p, y.v.sum, said); !errors.Is(err, errSaidFull) {
		t.Fatalf("past maxSaid: %v", err)
	}
}

// FuzzSaid: any bytes read as a said file give whole batches only, that
// read the same when cut to them; never a panic.
func FuzzSaid(f *testing.F) {
	x := &Index{Entries: []Entry{{Path: "a", Mode: 0o100644, Size: 1}}}
	p := filepath.Join(f.TempDir(), "index")
	if err := x.write(p); err != nil {
		f.Fatal(err)
	}
	if _, err := appendSaid(p, x.v.sum, []saidEntry{{Entry: Entry{Path: "a", Size: 2}, There: true}, {Entry: Entry{Path: "b/c"}}}); err != nil {
		f.Fatal(err)
	}
	good, _ := os.ReadFile(saidPath(p))
	f.Add(good)
	f.Add(good[:len(good)-1])
	f.Fuzz(func(t *testing.T, b []byte) {
		var sum [32]byte
		if len(b) >= len(saidMagic)+32 {
			copy(sum[:], b[len(saidMagic):])
		}
		said, n := parseSaid(b, sum)
		if n > len(b) || n == 0 && said != nil {
			t.Fatalf("%d bytes read as %d, %d entries", len(b), n, len(said))
		}
		if again, m := parseSaid(b[:n], sum); m != n || fmt.Sprint(again) != fmt.Sprint(said) {
			t.Fatalf("cut to its %d whole bytes, read as %d", n, m)
		}
	})
}

// TestGetAll: contents read side by side are what get reads one by one,
// across packs; one not stored, or whose frame is corrupt, is an error of
// its own and leaves the others whole.
func TestGetAll(t *testing.T) {
	dir := t.TempDir()
	s, err := openStore(dir, 1<<30)
	must(t, err)
	var sums [][32]byte
	var want [][]byte
	for i := range 40 {
		if i == 20 {
			nextPack(t, s)
		}
		data := []byte(strings.Repeat(fmt.Sprintf("content %d\n", i), i))
		sum, err := keepIn(s, data)
		must(t, err)
		sums, want = append(sums, sum), append(want, data)
	}
	must(t, s.sync())
	sums, want = append(sums, hashOf([]byte("never kept"))), append(want, nil)
	// A byte of the frame of content 7 changed.
	l := s.locs[sums[7]]
	f, err := os.OpenFile(s.packPath(l.pack), os.O_WRONLY, 0)
	must(t, err)
	_, err = f.WriteAt([]byte{0xff}, l.off+frameHeader+1)
	must(t, err)
	must(t, f.Close())
	want[7] = nil
	got, errs := s.getAll(sums)
	for i := range sums {
		one, oneErr := s.get(sums[i])
		switch {
		case want[i] == nil && (errs[i] == nil || oneErr == nil):
			t.Fatalf("content %d read back: %v, %v", i, errs[i], oneErr)
		case want[i] != nil && (errs[i] != nil || !bytes.Equal(got[i], want[i]) || !bytes.Equal(one, want[i])):
			t.Fatalf("content %d: %v %v", i, errs[i], oneErr)
		}
	}
}

// TestStoreKeepsLive: past its cap the store lets go of its oldest pack,
// but not of what is live there: the baseline's content of a file no call
// changed since, which the next change of it needs, is copied out first,
// and that change is restorable; what goes is said to have gone from the
// store.
func TestStoreKeepsLive(t *testing.T) {
	was := maxPack
	maxPack = 4 << 20
	t.Cleanup(func() { maxPack = was })
	s := settings()
	s.StoreCap, s.MaxFile = 2_500_000, 500_000
	dir := newTreeWith(t, map[string]string{"a.txt": "line1\nline2\n"}, s)
	random := func(seed uint64) []byte {
		b := make([]byte, 440_000)
		rand.NewChaCha8([32]byte{byte(seed)}).Read(b)
		return b
	}
	callWith(t, dir, s, func() {
		for i := range 5 {
			must(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("big%d.bin", i)), random(uint64(i)), 0o644))
		}
	})
	callWith(t, dir, s, func() { must(t, os.WriteFile(filepath.Join(dir, "more.bin"), random(9), 0o644)) })
	packs, _ := filepath.Glob(filepath.Join(os.Getenv("TOOLKIT_STATE"), "history", "packs", "*.pack"))
	if len(packs) < 1 {
		t.Fatalf("packs: %v", packs)
	}
	var total int64
	for _, p := range packs {
		fi, _ := os.Stat(p)
		total += fi.Size()
	}
	if total > s.StoreCap {
		t.Errorf("the store holds %d bytes, over its cap of %d", total, s.StoreCap)
	}
	ch := callWith(t, dir, s, func() {
		f, err := os.OpenFile(filepath.Join(dir, "a.txt"), os.O_APPEND|os.O_WRONLY, 0)
		must(t, err)
		f.WriteString("line3\n")
		f.Close()
	})
	if len(ch.Files) != 1 || !ch.Files[0].Restorable {
		t.Fatalf("the change of a file the baseline kept: %+v", ch.Files)
	}
	res, _, err := UndoCalls(context.Background(), UndoArgs{Call: ch.Call}, s)
	if err != nil || len(res.Restored) != 1 {
		t.Fatalf("undo: %+v %v", res, err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(b) != "line1\nline2\n" {
		t.Fatalf("a.txt: %q", b)
	}
}
