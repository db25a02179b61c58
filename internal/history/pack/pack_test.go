package pack

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// keepIn puts data in s: its sha256, and what put said.
func keepIn(s *Store, data []byte) ([32]byte, error) {
	sum := sha256.Sum256(data)
	return sum, s.Put(data, sum)
}

// nextPack makes s append to a pack of its own from its next put on.
func nextPack(t *testing.T, s *Store) {
	t.Helper()
	if err := s.next(); err != nil {
		t.Fatal(err)
	}
	s.curNum++
	s.cur.Close()
	s.curIdx.Close()
	s.cur = nil
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestStoreTornTail: a pack or its records cut short (toolkit killed mid-
// append) are cut back to their last whole frame when the store is opened,
// and what came before still reads; a byte changed in a frame is corrupt,
// never another content; the oldest packs go first past the cap.
func TestStoreTornTail(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, 1<<30)
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
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	pack, idx := filepath.Join(dir, "000001.pack"), filepath.Join(dir, "000001.idx")
	fi, _ := os.Stat(pack)
	if err := os.Truncate(pack, fi.Size()-3); err != nil { // the last frame torn
		t.Fatal(err)
	}
	s, err = Open(dir, 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	if s.Has(sums[2]) || !s.Has(sums[1]) {
		t.Fatal("the torn frame is kept, or the whole one before it is not")
	}
	if b, err := s.Get(sums[1]); err != nil || string(b) != "content 1\n" {
		t.Fatalf("get: %q %v", b, err)
	}
	if fi, _ := os.Stat(idx); fi.Size() != 2*idxRecord {
		t.Fatalf("records: %d bytes", fi.Size())
	}
	s.Close()
	b, _ := os.ReadFile(pack)
	b[len(b)-2] ^= 1
	os.WriteFile(pack, b, 0o600)
	s, _ = Open(dir, 1<<30)
	if _, err := s.Get(sums[1]); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("a corrupt frame: %v", err)
	}
	s.Close()

	// The cap: a new pack each time, the oldest dropped.
	capDir := t.TempDir()
	s, _ = Open(capDir, 1)
	first, _ := keepIn(s, []byte("first"))
	s.next()
	s.curNum++ // a pack of its own
	s.cur.Close()
	s.curIdx.Close()
	s.cur = nil
	second, _ := keepIn(s, []byte("second"))
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	if s.Has(first) || !s.Has(second) {
		t.Fatalf("the cap kept %v, dropped %v", s.Has(first), !s.Has(second))
	}
	s.Close()
}

// TestStoreLooksOnDisk: a call that looks up a few contents reads only
// the last pack's records (its torn tail cut, so that it is appended to
// as before) and looks through the other packs' records on disk, each
// whole record only; past fewLooks lookups, every record is read.
func TestStoreLooksOnDisk(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, 1<<30)
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
	must(t, s.Close())
	if got := s.packs(); !slices.Equal(got, []int{1, 2, 3}) {
		t.Fatalf("packs %v", got)
	}
	// The last pack's last frame torn; pack 2's last record names a
	// frame past its pack's end.
	fi, _ := os.Stat(s.packPath(3))
	must(t, os.Truncate(s.packPath(3), fi.Size()-3))
	fi, _ = os.Stat(s.packPath(2))
	must(t, os.Truncate(s.packPath(2), fi.Size()-1))

	s, err = Open(dir, 1<<30)
	must(t, err)
	defer s.Close()
	want := []bool{true, true, true, false, true, false}
	for i, sum := range sums {
		if got := s.Has(sum); got != want[i] {
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
		s.Has(sums[0])
	}
	if !s.loaded {
		t.Fatalf("%d lookups, and the records are still read from disk", fewLooks+len(sums))
	}
	for i, sum := range sums {
		b, err := s.Get(sum)
		if ok := err == nil && string(b) == fmt.Sprintf("content %d\n", i); ok != (i != 3) {
			t.Fatalf("content %d read back as %q: %v", i, b, err)
		}
	}
}

// FuzzPack: any bytes as a pack and its records, in append order and
// sealed (sorted, the same pack's bytes as pack 2), open as a store that
// gives back only contents whose sha256 checks, or nothing, and finds on
// disk only what it holds; never a panic.
func FuzzPack(f *testing.F) {
	dir := f.TempDir()
	s, _ := Open(dir, 1<<30)
	sum, _ := keepIn(s, []byte("hello\n"))
	s.Close()
	pack, _ := os.ReadFile(filepath.Join(dir, "000001.pack"))
	idx, _ := os.ReadFile(filepath.Join(dir, "000001.idx"))
	must(f, s.seal(1))
	sidx, _ := os.ReadFile(filepath.Join(dir, "000001.sidx"))
	f.Add(pack, idx, sidx, sum[:])
	f.Fuzz(func(t *testing.T, pack, idx, sidx, look []byte) {
		d := t.TempDir()
		os.WriteFile(filepath.Join(d, "000001.pack"), pack, 0o600)
		os.WriteFile(filepath.Join(d, "000001.idx"), idx, 0o600)
		os.WriteFile(filepath.Join(d, "000002.pack"), pack, 0o600)
		os.WriteFile(filepath.Join(d, "000002.sidx"), sidx, 0o600)
		s, err := Open(d, 1<<30)
		if err != nil {
			return
		}
		defer s.Close()
		var sum [32]byte
		copy(sum[:], look)
		if s.Has(sum) {
			if b, err := s.Get(sum); err == nil && sha256.Sum256(b) != sum {
				t.Fatal("a content that is not its sha256's")
			}
		}
		if s.ensure() != nil {
			return
		}
		for sum := range s.locs {
			if b, err := s.Get(sum); err == nil && sha256.Sum256(b) != sum {
				t.Fatal("a content that is not its sha256's")
			}
		}
	})
}

// TestGetAll: contents read side by side are what get reads one by one,
// across packs; one not stored, or whose frame is corrupt, is an error of
// its own and leaves the others whole.
func TestGetAll(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, 1<<30)
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
	must(t, s.Sync())
	sums, want = append(sums, sha256.Sum256([]byte("never kept"))), append(want, nil)
	// A byte of the frame of content 7 changed.
	l := s.locs[sums[7]]
	f, err := os.OpenFile(s.packPath(l.pack), os.O_WRONLY, 0)
	must(t, err)
	_, err = f.WriteAt([]byte{0xff}, l.off+frameHeader+1)
	must(t, err)
	must(t, f.Close())
	want[7] = nil
	got, errs := s.GetAll(sums)
	for i := range sums {
		one, oneErr := s.Get(sums[i])
		switch {
		case want[i] == nil && (errs[i] == nil || oneErr == nil):
			t.Fatalf("content %d read back: %v, %v", i, errs[i], oneErr)
		case want[i] != nil && (errs[i] != nil || !bytes.Equal(got[i], want[i]) || !bytes.Equal(one, want[i])):
			t.Fatalf("content %d: %v %v", i, errs[i], oneErr)
		}
	}
}

// TestStoreSealed: a pack the store moved on from is sealed, its records
// sorted in N.sidx and its N.idx gone; a few lookups find what it holds
// by binary search on disk (and nothing it does not), every record reads
// back from it, and the pack appended to keeps its records in order. A
// store whose older packs were never sealed seals them when first
// opened; a sealed file that does not check holds nothing.
func TestStoreSealed(t *testing.T) {
	old := MaxPack
	MaxPack = 4 << 10
	t.Cleanup(func() { MaxPack = old })
	dir := t.TempDir()
	s, err := Open(dir, 1<<30)
	must(t, err)
	var sums [][32]byte
	for i := range 60 {
		// 1 KiB each that flate cannot shrink: a few a pack.
		b := make([]byte, 1024)
		for j := range b {
			b[j] = byte(sha256.Sum256(fmt.Appendf(nil, "%d %d", i, j))[0])
		}
		sum, err := keepIn(s, b)
		must(t, err)
		sums = append(sums, sum)
	}
	must(t, s.Close())
	packs := s.packs()
	if len(packs) < 5 {
		t.Fatalf("%d packs", len(packs))
	}
	for _, n := range packs {
		_, idxErr := os.Stat(s.idxPath(n))
		if last := n == packs[len(packs)-1]; s.sealed(n) == last || (idxErr == nil) != last {
			t.Fatalf("pack %d of %v: sealed %v, its idx %v", n, packs, s.sealed(n), idxErr)
		}
	}
	s, err = Open(dir, 1<<30)
	must(t, err)
	for _, i := range []int{0, 17, 59} {
		if !s.Has(sums[i]) {
			t.Fatalf("content %d not found on disk", i)
		}
	}
	if s.Has(sha256.Sum256([]byte("never kept"))) || s.loaded {
		t.Fatal("found what was never kept, or read every record")
	}
	for i, sum := range sums {
		if b, err := s.Get(sum); err != nil || sha256.Sum256(b) != sum {
			t.Fatalf("content %d: %v", i, err)
		}
	}
	must(t, s.Close())

	// Unsealed, as a store before sealing left them: sealed when opened.
	for _, n := range packs[:len(packs)-1] {
		b, _ := os.ReadFile(s.sidxPath(n))
		recs, _ := checkedRecords(b)
		// In append order again: by offset.
		var unsorted []byte
		for off := int64(0); ; {
			found := false
			for r := recs; len(r) >= idxRecord; r = r[idxRecord:] {
				if l := recordLoc(r, n); l.off == off {
					unsorted = append(unsorted, r[:idxRecord]...)
					off, found = l.off+frameHeader+int64(l.n), true
					break
				}
			}
			if !found {
				break
			}
		}
		must(t, os.WriteFile(s.idxPath(n), unsorted, 0o600))
		must(t, os.Remove(s.sidxPath(n)))
	}
	s, err = Open(dir, 1<<30)
	must(t, err)
	if !s.Has(sums[3]) || !s.sealed(packs[0]) {
		t.Fatal("an unsealed pack is not sealed, or its content not found")
	}
	must(t, s.Close())

	// A sealed file with a byte changed: its pack holds nothing.
	b, _ := os.ReadFile(s.sidxPath(packs[0]))
	b[5] ^= 1
	must(t, os.WriteFile(s.sidxPath(packs[0]), b, 0o600))
	s, err = Open(dir, 1<<30)
	must(t, err)
	defer s.Close()
	must(t, s.ensure())
	for sum, l := range s.locs {
		if l.pack == packs[0] {
			t.Fatalf("%x read from a sealed file that does not check", sum[:4])
		}
	}
	if _, err := s.Get(sums[59]); err != nil {
		t.Fatalf("the last content: %v", err)
	}
}

// BenchmarkHasOnDisk: a write's lookup of a content not kept yet, in a
// store of 4 packs of 10,000 small contents each, through the records on
// disk: sealed (a binary search of each sealed pack's sorted records)
// against the same packs' records in append order (each read whole).
func BenchmarkHasOnDisk(b *testing.B) {
	old := MaxPack
	MaxPack = 10_000 * (frameHeader + 20)
	b.Cleanup(func() { MaxPack = old })
	dir := b.TempDir()
	s, err := Open(dir, 1<<40)
	must(b, err)
	for i := range 40_000 {
		_, err := keepIn(s, fmt.Appendf(nil, "content %d", i))
		must(b, err)
	}
	must(b, s.Close())
	absent := sha256.Sum256([]byte("never kept"))
	lookups := func(b *testing.B) {
		s, err := Open(dir, 1<<40)
		must(b, err)
		defer s.Close()
		must(b, s.ensureTail())
		for b.Loop() {
			s.looks = 0
			if s.Has(absent) || s.loaded {
				b.Fatal("found, or every record read")
			}
		}
	}
	b.Run("sealed", lookups)
	packs := s.packs()
	for _, n := range packs[:len(packs)-1] {
		sealed, _ := os.ReadFile(s.sidxPath(n))
		recs, _ := checkedRecords(sealed)
		var each [][]byte
		for i := range len(recs) / idxRecord {
			each = append(each, recs[i*idxRecord:(i+1)*idxRecord])
		}
		slices.SortFunc(each, func(x, y []byte) int { return int(recordLoc(x, n).off - recordLoc(y, n).off) })
		must(b, os.WriteFile(s.idxPath(n), slices.Concat(each...), 0o600))
		must(b, os.Rename(s.sidxPath(n), s.sidxPath(n)+".away"))
	}
	b.Run("unsealed", func(b *testing.B) {
		s, err := Open(dir, 1<<40)
		must(b, err)
		defer s.Close()
		s.tail = true // as if opened: its older packs are not sealed again
		for _, n := range packs {
			if fi, err := os.Stat(s.packPath(n)); err == nil {
				s.sizes[n] = fi.Size()
			}
		}
		s.curNum = packs[len(packs)-1]
		for b.Loop() {
			s.looks = 0
			if s.Has(absent) || s.loaded {
				b.Fatal("found, or every record read")
			}
		}
	})
}
