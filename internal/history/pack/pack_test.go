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

// FuzzPack: any bytes as a pack and its records open as a store that
// gives back only contents whose sha256 checks, or nothing; never a panic.
func FuzzPack(f *testing.F) {
	dir := f.TempDir()
	s, _ := Open(dir, 1<<30)
	keepIn(s, []byte("hello\n"))
	s.Close()
	pack, _ := os.ReadFile(filepath.Join(dir, "000001.pack"))
	idx, _ := os.ReadFile(filepath.Join(dir, "000001.idx"))
	f.Add(pack, idx)
	f.Fuzz(func(t *testing.T, pack, idx []byte) {
		d := t.TempDir()
		os.WriteFile(filepath.Join(d, "000001.pack"), pack, 0o600)
		os.WriteFile(filepath.Join(d, "000001.idx"), idx, 0o600)
		s, err := Open(d, 1<<30)
		if err != nil {
			return
		}
		defer s.Close()
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
