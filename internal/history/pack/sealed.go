package pack

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"toolkit/internal/replace"
)

// A sealed pack, one the store appends to no more, has its records sorted
// by sha256 in N.sidx, written whole (a temporary file, synced, renamed)
// when the store moves on to the next pack or first finds one unsealed:
//
//	record[48]... sha256[32] of the records
//
// so that a call looking up a few contents (a write's, an edit's) reads
// about log2(records) records of each sealed pack, not all of them. The
// pack being appended to keeps its records in append order (N.idx), whose
// torn tail can be cut.

func (s *Store) sidxPath(n int) string { return filepath.Join(s.dir, fmt.Sprintf("%06d.sidx", n)) }

// sealed says whether pack n is sealed.
func (s *Store) sealed(n int) bool {
	_, err := os.Stat(s.sidxPath(n))
	return err == nil
}

// seal sorts pack n's records into its N.sidx and removes its N.idx; a
// pack already sealed (or gone) is left as it is.
func (s *Store) seal(n int) error {
	f, err := os.Open(s.idxPath(n))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := os.Stat(s.sidxPath(n)); err == nil {
		return os.Remove(s.idxPath(n)) // sealed, its removal cut short
	}
	fi, err := os.Stat(s.packPath(n))
	if err != nil {
		return nil // a pack gone: its records are never read
	}
	var recs []byte
	if _, _, err := s.records(f, n, fi.Size(), func(sum [32]byte, l loc) bool {
		recs = appendRecord(recs, sum, l)
		return true
	}); err != nil {
		return err
	}
	sortRecords(recs)
	sum := sha256.Sum256(recs)
	if err := replace.WriteFile(s.sidxPath(n), append(recs, sum[:]...), true); err != nil {
		return err
	}
	return os.Remove(s.idxPath(n))
}

// appendRecord appends the 48-byte record of sum at l to b.
func appendRecord(b []byte, sum [32]byte, l loc) []byte {
	b = append(b, sum[:]...)
	b = binary.LittleEndian.AppendUint32(b, uint32(l.pack))
	b = binary.LittleEndian.AppendUint64(b, uint64(l.off))
	return binary.LittleEndian.AppendUint32(b, l.n)
}

// sortRecords sorts 48-byte records in place by their sha256.
func sortRecords(recs []byte) {
	n := len(recs) / idxRecord
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int {
		return bytes.Compare(recs[a*idxRecord:a*idxRecord+32], recs[b*idxRecord:b*idxRecord+32])
	})
	sorted := make([]byte, 0, len(recs))
	for _, i := range idx {
		sorted = append(sorted, recs[i*idxRecord:(i+1)*idxRecord]...)
	}
	copy(recs, sorted)
}

// loadSealed reads sealed pack n's records, checked whole against their
// sha256 and each frame within the pack's size bytes: a file that does
// not check is not read, and its contents are not in the store (until
// the pack goes, oldest first).
func (s *Store) loadSealed(n int, size int64) error {
	b, err := os.ReadFile(s.sidxPath(n))
	if err != nil {
		return err
	}
	recs, ok := checkedRecords(b)
	if !ok {
		return fmt.Errorf("%s: %w", s.sidxPath(n), ErrCorrupt)
	}
	for ; len(recs) >= idxRecord; recs = recs[idxRecord:] {
		if l := recordLoc(recs, n); l.off+frameHeader+int64(l.n) <= size {
			s.locs[[32]byte(recs[:32])] = l
		}
	}
	return nil
}

// checkedRecords are the records of a sealed pack's file b, where its
// sha256 checks.
func checkedRecords(b []byte) ([]byte, bool) {
	if len(b) < sha256.Size || (len(b)-sha256.Size)%idxRecord != 0 {
		return nil, false
	}
	recs := b[:len(b)-sha256.Size]
	sum := sha256.Sum256(recs)
	return recs, bytes.Equal(sum[:], b[len(recs):])
}

// recordLoc is where a record of pack n says its frame is.
func recordLoc(rec []byte, n int) loc {
	return loc{n, int64(binary.LittleEndian.Uint64(rec[36:])), binary.LittleEndian.Uint32(rec[44:])}
}

// findSealed looks sum up in sealed pack n's sorted records on disk, by
// binary search, keeping none.
func (s *Store) findSealed(n int, sum [32]byte) bool {
	f, err := os.Open(s.sidxPath(n))
	if err != nil {
		return false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || fi.Size() < sha256.Size {
		return false
	}
	count := int((fi.Size() - sha256.Size) / idxRecord)
	var rec [idxRecord]byte
	var readErr error
	i := sort.Search(count, func(i int) bool {
		if _, err := f.ReadAt(rec[:], int64(i)*idxRecord); err != nil {
			readErr = err
			return true
		}
		return bytes.Compare(rec[:32], sum[:]) >= 0
	})
	if readErr != nil || i == count {
		return false
	}
	if _, err := f.ReadAt(rec[:], int64(i)*idxRecord); err != nil {
		return false
	}
	l := recordLoc(rec[:], n)
	return [32]byte(rec[:32]) == sum && l.off+frameHeader+int64(l.n) <= s.sizes[n]
}
