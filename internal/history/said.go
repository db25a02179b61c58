package history

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

// The said file. What write, edit and patch say they wrote changes a few
// entries of a tree's index, which may hold tens of thousands: rewriting
// it whole cost such a call 5-33 ms in Go's source tree. Their entries are
// appended to a small file beside the index instead, which names the
// index it adds to (the sha256 that index ends with): readIndex applies
// it, and the next whole write of the index folds it in and removes it. A
// said file that names another index (one a kill left behind the index's
// rename) is not read.
//
// It is saidMagic, the index's sha256, then batches, one a call: the
// payload's length (4 bytes), the payload, its sha256. The payload is
// entries as the index keeps them, each after a byte that says whether
// the path is there (else it is gone). A torn batch, from a kill, ends
// what is read, and the next append cuts it off first.

// saidMagic starts a said file; its version is the last byte.
var saidMagic = []byte("TKHSAID1\n")

// maxSaid bounds a said file: an append that would pass it writes the
// index whole instead.
var maxSaid int64 = 256 << 10

// saidEntry is an entry a call said, or a path it said is gone.
type saidEntry struct {
	Entry
	There bool
}

// saidPath is the said file of the index at path.
func saidPath(path string) string { return path + ".said" }

// readSaid reads the said file at path, if it names the index whose sha256
// is sum: its entries, in the order said. size is the file's size.
func readSaid(path string, sum [32]byte) (said []saidEntry, size int64) {
	b, _, err := replace.ReadUpTo(nil, path, 2*maxSaid)
	if err != nil {
		return nil, 0
	}
	said, _ = parseSaid(b, sum)
	return said, int64(len(b))
}

// parseSaid reads a said file's bytes: its entries, if it names the index
// whose sha256 is sum, and how many of its bytes are whole batches (0
// where it names another index).
func parseSaid(b []byte, sum [32]byte) (said []saidEntry, good int) {
	head := len(saidMagic) + len(sum)
	if len(b) < head || !bytes.HasPrefix(b, saidMagic) || !bytes.Equal(b[len(saidMagic):head], sum[:]) {
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
		es, ok := parseSaidPayload(payload)
		if !ok {
			break
		}
		said = append(said, es...)
		r = r[4+n+sha256.Size:]
		good += 4 + n + sha256.Size
	}
	return said, good
}

// parseSaidPayload reads a batch's entries.
func parseSaidPayload(p []byte) ([]saidEntry, bool) {
	var es []saidEntry
	for len(p) > 0 {
		if len(p) < 3 {
			return nil, false
		}
		there, pl := p[0] == 1, int(binary.LittleEndian.Uint16(p[1:]))
		if len(p) < 3+pl+recLen {
			return nil, false
		}
		s := saidEntry{Entry: Entry{Path: string(p[3 : 3+pl])}, There: there}
		decodeRecord(&s.Entry, p[3+pl:])
		es = append(es, s)
		p = p[3+pl+recLen:]
	}
	return es, true
}

// appendSaid appends a call's entries to the said file of the index at
// path, whose sha256 is sum, synced: a said file that names another index
// is begun anew, a torn batch at its end cut off. It returns the file's
// size after, or errSaidFull where the batch would take it past maxSaid:
// the index is to be written whole then.
func appendSaid(path string, sum [32]byte, said []saidEntry) (int64, error) {
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

	f, err := os.OpenFile(saidPath(path), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxSaid+1))
	if err != nil {
		return 0, err
	}
	_, good := parseSaid(b, sum)
	if good == 0 {
		b = append(append([]byte{}, saidMagic...), sum[:]...)
		if _, err := f.WriteAt(b, 0); err != nil {
			return 0, err
		}
		good = len(b)
	}
	end := int64(good) + int64(len(batch))
	if end > maxSaid {
		return 0, errSaidFull
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

// errSaidFull: a said file would pass maxSaid.
var errSaidFull = errors.New("the said file is full")

// findEntries looks up paths in the index at path and its said file: a
// call that wrote a few files of a large tree reads the blocks of the index
// its table of contents names for them, or, where it has none that
// applies, reads the index a block at a time, checks it, and keeps only
// their entries. found holds the entries of the paths there; ok is false
// where there is no index, or none that checks.
func findEntries(path string, paths []string) (found map[string]Entry, v version, ok bool) {
	want := make(map[string]bool, len(paths))
	for _, p := range paths {
		want[p] = true
	}
	if found, v.sum, ok = findThroughTOC(path, want); !ok {
		if found, v.sum, ok = findWhole(path, want); !ok {
			return nil, version{}, false
		}
	}
	said, saidSize := readSaid(saidPath(path), v.sum)
	for _, s := range said {
		switch {
		case !want[s.Path]:
		case s.There:
			found[s.Path] = s.Entry
		default:
			delete(found, s.Path)
		}
	}
	v.said = saidSize
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
		l := 2 + int(binary.LittleEndian.Uint16(b)) + recLen
		if b, err = r.Peek(l); err != nil {
			return nil, sum, false
		}
		if name := b[2 : l-recLen]; want[string(name)] {
			e := Entry{Path: string(name)}
			decodeRecord(&e, b[l-recLen:])
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
