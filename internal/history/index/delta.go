package index

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"io"
	"os"

	"toolkit/internal/replace"
)

// The delta. What write, edit and patch say they wrote changes a few
// entries of a tree's index, which may hold tens of thousands: rewriting
// it whole cost such a call 5-33 ms in Go's source tree. Their entries are
// appended to a small file beside the index instead, which names the
// index it adds to (the sha256 that index ends with): Read applies
// it, and the next whole write of the index folds it in and removes it. A
// delta that names another index (one a kill left behind the index's
// rename) is not read.
//
// It is deltaMagic, the index's sha256, then batches, one a call: the
// payload's length (4 bytes), the payload, its sha256. The payload is
// entries as the index keeps them, each after a byte that says whether
// the path is there (else it is gone). A torn batch, from a kill, ends
// what is read, and the next append cuts it off first.

// deltaMagic starts a delta; its Version is the last byte.
var deltaMagic = []byte("TKHSAID1\n")

// MaxDelta bounds a delta: an append that would pass it writes the
// index whole instead.
var MaxDelta int64 = 256 << 10

// Delta is an entry a call said, or a path it said is gone.
type Delta struct {
	Entry
	There bool
}

// DeltaPath is the delta of the index at path.
func DeltaPath(path string) string { return path + ".said" }

// readDelta reads the delta at path, if it names the index whose sha256
// is sum: its entries, in the order said. size is the file's size.
func readDelta(path string, sum [32]byte) (said []Delta, size int64) {
	b, _, err := replace.ReadUpTo(nil, path, 2*MaxDelta)
	if err != nil {
		return nil, 0
	}
	said, _ = parseDelta(b, sum)
	return said, int64(len(b))
}

// parseDelta reads a delta's bytes: its entries, if it names the index
// whose sha256 is sum, and how many of its bytes are whole batches (0
// where it names another index).
func parseDelta(b []byte, sum [32]byte) (said []Delta, good int) {
	head := len(deltaMagic) + len(sum)
	if len(b) < head || !bytes.HasPrefix(b, deltaMagic) || !bytes.Equal(b[len(deltaMagic):head], sum[:]) {
		return nil, 0
	}
	good = head
	for r := b[head:]; len(r) >= 4; {
		n := int(binary.LittleEndian.Uint32(r))
		if n > len(r)-4-sha256.Size {
			break
		}
		payload := r[4 : 4+n]
		if got := sha256.Sum256(payload); !bytes.Equal(got[:], r[4+n:4+n+sha256.Size]) {
			break
		}
		es, ok := parseDeltaPayload(payload)
		if !ok {
			break
		}
		said = append(said, es...)
		r = r[4+n+sha256.Size:]
		good += 4 + n + sha256.Size
	}
	return said, good
}

// parseDeltaPayload reads a batch's entries.
func parseDeltaPayload(p []byte) ([]Delta, bool) {
	var es []Delta
	for len(p) > 0 {
		path, rec, rest, ok := nextEntry(p[1:])
		if !ok {
			return nil, false
		}
		s := Delta{Entry: Entry{Path: string(path)}, There: p[0] == 1}
		decodeRecord(&s.Entry, rec)
		es = append(es, s)
		p = rest
	}
	return es, true
}

// AppendDelta appends a call's entries to the delta of the index at
// path, whose sha256 is sum, synced: a delta that names another index
// is begun anew, a torn batch at its end cut off. It returns the file's
// size after, or ErrDeltaFull where the batch would take it past MaxDelta:
// the index is to be written whole then.
func AppendDelta(path string, sum [32]byte, said []Delta) (int64, error) {
	var payload []byte
	for i := range said {
		payload = append(payload, 0)
		if said[i].There {
			payload[len(payload)-1] = 1
		}
		payload = appendEntry(payload, &said[i].Entry)
	}
	batch := binary.LittleEndian.AppendUint32(nil, uint32(len(payload)))
	batch = append(batch, payload...)
	ps := sha256.Sum256(payload)
	batch = append(batch, ps[:]...)

	f, err := os.OpenFile(DeltaPath(path), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxDelta+1))
	if err != nil {
		return 0, err
	}
	_, good := parseDelta(b, sum)
	if good == 0 {
		b = append(append([]byte{}, deltaMagic...), sum[:]...)
		if _, err := f.WriteAt(b, 0); err != nil {
			return 0, err
		}
		good = len(b)
	}
	end := int64(good) + int64(len(batch))
	if end > MaxDelta {
		return 0, ErrDeltaFull
	}
	if err := f.Truncate(int64(good)); err != nil {
		return 0, err
	}
	if _, err := f.WriteAt(batch, int64(good)); err != nil {
		return 0, err
	}
	if err := f.Sync(); err != nil {
		return 0, err
	}
	return end, nil
}

// ErrDeltaFull: a delta would pass MaxDelta.
var ErrDeltaFull = errors.New("the delta is full")

// Lookup looks up paths in the index at path and its delta: a
// call that wrote a few files of a large tree reads the blocks of the index
// its table of contents names for them, or, where it has none that
// applies, reads the index a block at a time, checks it, and keeps only
// their entries. found holds the entries of the paths there; ok is false
// where there is no index, or none that checks.
func Lookup(path string, paths []string) (found map[string]Entry, v Version, ok bool) {
	want := make(map[string]bool, len(paths))
	for _, p := range paths {
		want[p] = true
	}
	if found, v.Sum, ok = findThroughTOC(path, want); !ok {
		if found, v.Sum, ok = findWhole(path, want); !ok {
			return nil, Version{}, false
		}
	}
	said, saidSize := readDelta(DeltaPath(path), v.Sum)
	for _, s := range said {
		switch {
		case !want[s.Path]:
		case s.There:
			found[s.Path] = s.Entry
		default:
			delete(found, s.Path)
		}
	}
	v.Said = saidSize
	return found, v, true
}

// findWhole looks up the paths in want in the index at path, read a block
// at a time and checked whole, keeping only their entries; it returns the
// index's sha256.
func findWhole(path string, want map[string]bool) (found map[string]Entry, sum [32]byte, ok bool) {
	f, err := os.Open(path)
	if err != nil {
		return nil, sum, false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, sum, false
	}
	size := fi.Size()
	if size < int64(len(indexMagic))+8+sha256.Size {
		return nil, sum, false
	}
	found = make(map[string]Entry, len(want))
	h := sha256.New()
	// Each entry is looked at where it lies in the reader's buffer, which
	// holds the longest (a path of 64 KiB).
	r := bufio.NewReaderSize(io.TeeReader(io.LimitReader(f, size-sha256.Size), h), 128<<10)
	head, err := r.Peek(len(indexMagic) + 8)
	if err != nil || !bytes.Equal(head[:len(indexMagic)], indexMagic) {
		return nil, sum, false
	}
	n := binary.LittleEndian.Uint64(head[len(indexMagic):])
	r.Discard(len(head))
	if n > uint64(size)/(2+recLen) {
		return nil, sum, false
	}
	for range n {
		b, err := r.Peek(2)
		if err != nil {
			return nil, sum, false
		}
		l := entryLen(b)
		if b, err = r.Peek(l); err != nil {
			return nil, sum, false
		}
		path, rec, _, ok := nextEntry(b)
		if !ok {
			return nil, sum, false
		}
		if want[string(path)] {
			e := Entry{Path: string(path)}
			decodeRecord(&e, rec)
			found[e.Path] = e
		}
		r.Discard(l)
	}
	if _, err := r.ReadByte(); err != io.EOF {
		return nil, sum, false // more than n entries
	}
	if _, err := f.ReadAt(sum[:], size-sha256.Size); err != nil || !bytes.Equal(h.Sum(nil), sum[:]) {
		return nil, [32]byte{}, false
	}
	return found, sum, true
}
