package index

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"os"
	"slices"
	"strings"
	"toolkit/internal/replace"

	"golang.org/x/sys/unix"
)

// An index's table of contents (trees/ID.index.toc) lets a call that looks
// up a few paths (write, edit and patch: the files they wrote and the
// directories above them) read a few blocks of the index, where it would
// read and hash all of it: 1.5 MB in Go's source tree, 1.6-2.4 ms of a
// write's 3 ms of history. It names the index it was made for by its
// sha256, size, inode and ctime once written: an index whose stat says
// otherwise was changed since (every change to a file moves its ctime), and
// is read whole and checked, as is one with no table or a table that does
// not check. It holds the offset and path of every tocEvery-th entry, and
// ends with its own sha256:
//
//	"TKHTOC1\n" indexSum[32] size[8] ino[8] ctime[8] n[8]
//	n × (offset[8] pathLen[2] path)
//	sha256[32]
//
// It is not synced: a table lost or torn by a crash is not used, and the
// index is read whole.
var tocMagic = []byte("TKHTOC1\n")

// tocEvery is how many entries of the index a table's mark stands for.
const tocEvery = 64

func tocPath(index string) string { return index + ".toc" }

// tocMark is an entry of the index the table names: where it starts.
type tocMark struct {
	off  int64
	path string
}

// writeTOC writes the table of the index just written at index, whose
// sha256 is sum, with marks at the entries every tocEvery-th.
func writeTOC(index string, sum [32]byte, marks []tocMark) error {
	var st unix.Stat_t
	if err := unix.Stat(index, &st); err != nil {
		return err
	}
	b := append([]byte(nil), tocMagic...)
	b = append(b, sum[:]...)
	b = binary.LittleEndian.AppendUint64(b, uint64(st.Size))
	b = binary.LittleEndian.AppendUint64(b, st.Ino)
	b = binary.LittleEndian.AppendUint64(b, uint64(st.Ctim.Nano()))
	b = binary.LittleEndian.AppendUint64(b, uint64(len(marks)))
	for _, m := range marks {
		b = binary.LittleEndian.AppendUint64(b, uint64(m.off))
		b = binary.LittleEndian.AppendUint16(b, uint16(len(m.path)))
		b = append(b, m.path...)
	}
	own := sha256.Sum256(b)
	return replace.WriteFile(tocPath(index), append(b, own[:]...), false)
}

// toc is a table as read.
type toc struct {
	sum              [32]byte
	size, ino, ctime uint64
	marks            []tocMark
}

// parseTOC reads a table from its bytes; false where they do not check.
func parseTOC(b []byte) (toc, bool) {
	const head = 32 + 8*4
	if len(b) < len(tocMagic)+head+sha256.Size || !bytes.HasPrefix(b, tocMagic) {
		return toc{}, false
	}
	body, own := b[:len(b)-sha256.Size], b[len(b)-sha256.Size:]
	if got := sha256.Sum256(body); !bytes.Equal(got[:], own) {
		return toc{}, false
	}
	r := body[len(tocMagic):]
	t := toc{sum: [32]byte(r[:32])}
	t.size = binary.LittleEndian.Uint64(r[32:])
	t.ino = binary.LittleEndian.Uint64(r[40:])
	t.ctime = binary.LittleEndian.Uint64(r[48:])
	n := binary.LittleEndian.Uint64(r[56:])
	r = r[head:]
	if n > uint64(len(r))/10 {
		return toc{}, false
	}
	t.marks = make([]tocMark, 0, n)
	for range n {
		if len(r) < 10 {
			return toc{}, false
		}
		off := binary.LittleEndian.Uint64(r)
		pl := int(binary.LittleEndian.Uint16(r[8:]))
		if len(r) < 10+pl || off > t.size {
			return toc{}, false
		}
		m := tocMark{off: int64(off), path: string(r[10 : 10+pl])}
		if k := len(t.marks); k > 0 && (t.marks[k-1].path >= m.path || t.marks[k-1].off >= m.off) {
			return toc{}, false
		}
		t.marks = append(t.marks, m)
		r = r[10+pl:]
	}
	if len(r) != 0 {
		return toc{}, false
	}
	return t, true
}

// findThroughTOC looks up the paths in want in the index at index through
// its table, reading only the blocks that may hold them. It returns the
// entries found and the index's sha256; false where the table is missing,
// does not check or was made for another index (read it whole then).
func findThroughTOC(index string, want map[string]bool) (map[string]Entry, [32]byte, bool) {
	var none [32]byte
	b, err := os.ReadFile(tocPath(index))
	if err != nil {
		return nil, none, false
	}
	t, ok := parseTOC(b)
	if !ok || len(t.marks) == 0 {
		return nil, none, false
	}
	f, err := os.Open(index)
	if err != nil {
		return nil, none, false
	}
	defer f.Close()
	var st unix.Stat_t
	if unix.Fstat(int(f.Fd()), &st) != nil || uint64(st.Size) != t.size || st.Ino != t.ino || uint64(st.Ctim.Nano()) != t.ctime {
		return nil, none, false
	}
	var sum [32]byte
	end := int64(t.size) - sha256.Size
	if end < t.marks[len(t.marks)-1].off {
		return nil, none, false
	}
	if _, err := f.ReadAt(sum[:], end); err != nil || sum != t.sum {
		return nil, none, false
	}
	found := map[string]Entry{}
	blocks := map[int]bool{}
	for p := range want {
		// The last mark at or before p begins the block that would hold it.
		i, at := slices.BinarySearchFunc(t.marks, p, func(m tocMark, p string) int { return strings.Compare(m.path, p) })
		if !at {
			i--
		}
		if i < 0 || blocks[i] {
			continue // before the first entry, or its block read already
		}
		blocks[i] = true
		to := end
		if i+1 < len(t.marks) {
			to = t.marks[i+1].off
		}
		block := make([]byte, to-t.marks[i].off)
		if _, err := f.ReadAt(block, t.marks[i].off); err != nil {
			return nil, none, false
		}
		entries, ok := blockEntries(block, t.marks[i].path)
		if !ok {
			return nil, none, false
		}
		for _, e := range entries {
			if want[e.Path] {
				found[e.Path] = e
			}
		}
	}
	return found, sum, true
}

// blockEntries reads the entries of a block of an index, which must begin
// with the entry of path first and hold them whole and sorted.
func blockEntries(b []byte, first string) ([]Entry, bool) {
	var out []Entry
	for len(b) > 0 {
		path, rec, rest, ok := nextEntry(b)
		if !ok {
			return nil, false
		}
		e := Entry{Path: string(path)}
		decodeRecord(&e, rec)
		switch {
		case len(out) == 0 && e.Path != first:
			return nil, false
		case len(out) > 0 && out[len(out)-1].Path >= e.Path:
			return nil, false
		}
		out = append(out, e)
		b = rest
	}
	return out, true
}
