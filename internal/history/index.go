package history

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"toolkit/internal/tempfile"
)

// Entry is a path of a tree as the index keeps it, git's way: what its
// stat said when it was last looked at, and its content's sha256.
type Entry struct {
	Path         string // from the tree's top, "/" between names
	Mode         uint32 // st_mode: the type and the permissions
	Size         int64
	Mtime, Ctime int64 // in ns
	Ino, Dev     uint64
	Sum          [32]byte // the content's sha256 (a link's: its target's); zero when not known
	Flags        uint8
}

// Flags of an entry.
const (
	// Racy: its times were within a clock tick of the scan that saw it, so
	// a change in the same tick could leave its stat as it was (git's
	// racy-git rule): the next scan hashes it whatever its stat says.
	Racy uint8 = 1 << iota
	// Stored: its content is in the store, under Sum.
	Stored
	// Heavy: a heavy directory (node_modules, .venv, …), kept as itself,
	// its stat standing for all it holds.
	Heavy
)

// Type bits of st_mode.
const (
	typeMask = 0o170000
	typeReg  = 0o100000
	typeDir  = 0o040000
	typeLink = 0o120000
)

func (e *Entry) isDir() bool  { return e.Mode&typeMask == typeDir }
func (e *Entry) isLink() bool { return e.Mode&typeMask == typeLink }
func (e *Entry) isReg() bool  { return e.Mode&typeMask == typeReg }

// sameStat says whether two entries' stats agree: then the content is
// taken to be as it was, unless the entry was racy.
func sameStat(a, b *Entry) bool {
	return a.Mode == b.Mode && a.Size == b.Size && a.Mtime == b.Mtime && a.Ctime == b.Ctime && a.Ino == b.Ino && a.Dev == b.Dev
}

// Index is a tree's entries, sorted by path.
type Index struct {
	Entries []Entry
	none    bool    // there was no index, or none that could be read
	v       version // its files' version, once read or written
}

// version tells one state of a tree's index from another without reading
// it: the sha256 its file ends with, and the size of its said file.
type version struct {
	sum  [32]byte
	said int64
}

// indexVersion is the version of the index at path as its files stand.
func indexVersion(path string) version {
	v := version{sum: indexSum(path)}
	if fi, err := os.Stat(saidPath(path)); err == nil {
		v.said = fi.Size()
	}
	return v
}

// find is the entry of path, or nil.
func (x *Index) find(path string) *Entry {
	i, ok := slices.BinarySearchFunc(x.Entries, path, func(e Entry, p string) int { return strings.Compare(e.Path, p) })
	if !ok {
		return nil
	}
	return &x.Entries[i]
}

// recLen is an entry's record after its path: mode, size, mtime, ctime,
// ino, dev, sum, flags.
const recLen = 4 + 8*5 + 32 + 1

// indexMagic starts an index file; its version is the last byte.
var indexMagic = []byte("TKHIDX1\n")

// errCorrupt is an index or pack that does not read as toolkit wrote it.
var errCorrupt = errors.New("corrupt")

// write writes the index to path whole: a temporary file, synced, then
// renamed over it. The file ends with the sha256 of all before it.
func (x *Index) write(path string) error {
	f, err := tempfile.Create(filepath.Dir(path), ".index-", ".tmp")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name()) // gone once renamed
	h := sha256.New()
	w := bufio.NewWriterSize(io.MultiWriter(f, h), 256<<10)
	w.Write(indexMagic)
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(len(x.Entries)))
	w.Write(b[:])
	var rec []byte
	var marks []tocMark
	off := int64(len(indexMagic) + 8)
	for i := range x.Entries {
		if i%tocEvery == 0 {
			marks = append(marks, tocMark{off: off, path: x.Entries[i].Path})
		}
		rec = appendEntry(rec[:0], &x.Entries[i])
		w.Write(rec)
		off += int64(len(rec))
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	sum := h.Sum(nil)
	if _, err := f.Write(sum); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return err
	}
	// What the said file held is in the index now; a said file left by a
	// kill here names the index before, and is not read.
	_ = os.Remove(saidPath(path))
	x.v, x.none = version{sum: [32]byte(sum)}, false
	if err := writeTOC(path, [32]byte(sum), marks); err != nil {
		_ = os.Remove(tocPath(path)) // the index is read whole
	}
	return nil
}

// appendEntry appends e as the index keeps it: its path's length and
// path, then its record (recLen bytes).
func appendEntry(b []byte, e *Entry) []byte {
	b = binary.LittleEndian.AppendUint16(b, uint16(len(e.Path)))
	b = append(b, e.Path...)
	b = binary.LittleEndian.AppendUint32(b, e.Mode)
	b = binary.LittleEndian.AppendUint64(b, uint64(e.Size))
	b = binary.LittleEndian.AppendUint64(b, uint64(e.Mtime))
	b = binary.LittleEndian.AppendUint64(b, uint64(e.Ctime))
	b = binary.LittleEndian.AppendUint64(b, e.Ino)
	b = binary.LittleEndian.AppendUint64(b, e.Dev)
	b = append(b, e.Sum[:]...)
	return append(b, e.Flags)
}

// decodeRecord fills e's fields but its path from rec, recLen bytes.
func decodeRecord(e *Entry, rec []byte) {
	e.Mode = binary.LittleEndian.Uint32(rec[0:])
	e.Size = int64(binary.LittleEndian.Uint64(rec[4:]))
	e.Mtime = int64(binary.LittleEndian.Uint64(rec[12:]))
	e.Ctime = int64(binary.LittleEndian.Uint64(rec[20:]))
	e.Ino = binary.LittleEndian.Uint64(rec[28:])
	e.Dev = binary.LittleEndian.Uint64(rec[36:])
	copy(e.Sum[:], rec[44:76])
	e.Flags = rec[76]
}

// indexSum is the sha256 an index file ends with: what tells one index
// from another without reading it. Zero where there is none.
func indexSum(path string) [32]byte {
	var sum [32]byte
	f, err := os.Open(path)
	if err != nil {
		return sum
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || fi.Size() < int64(len(indexMagic))+8+32 {
		return sum
	}
	if _, err := f.ReadAt(sum[:], fi.Size()-32); err != nil {
		return [32]byte{}
	}
	return sum
}

// readIndex reads an index file, and the entries its said file holds; a
// missing one is an empty index, one that does not check is errCorrupt.
func readIndex(path string) (*Index, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return &Index{none: true}, nil
	}
	if err != nil {
		return nil, err
	}
	x, err := parseIndex(b)
	if err != nil {
		return nil, err
	}
	said, size := readSaid(saidPath(path), x.v.sum)
	x.apply(said)
	x.v.said = size
	return x, nil
}

// apply sets the entries said, in their order.
func (x *Index) apply(said []saidEntry) {
	for _, s := range said {
		x.set(s.Path, s.Entry, s.There)
	}
}

// parseIndex reads an index from its bytes.
func parseIndex(b []byte) (*Index, error) {
	if len(b) < len(indexMagic)+8+32 || !bytes.HasPrefix(b, indexMagic) {
		return nil, errCorrupt
	}
	body, sum := b[:len(b)-32], b[len(b)-32:]
	if got := sha256.Sum256(body); !bytes.Equal(got[:], sum) {
		return nil, errCorrupt
	}
	r := body[len(indexMagic):]
	n := binary.LittleEndian.Uint64(r)
	r = r[8:]
	if n > uint64(len(r))/(2+recLen) {
		return nil, errCorrupt
	}
	x := &Index{Entries: make([]Entry, 0, n), v: version{sum: [32]byte(sum)}}
	// One string holds every path: each entry's is a part of it.
	all, base := string(r), len(r)
	for range n {
		if len(r) < 2 {
			return nil, errCorrupt
		}
		pl := int(binary.LittleEndian.Uint16(r))
		if len(r) < 2+pl+recLen {
			return nil, errCorrupt
		}
		at := base - len(r) + 2
		e := Entry{Path: all[at : at+pl]}
		rec := r[2+pl:]
		decodeRecord(&e, rec)
		if len(x.Entries) > 0 && x.Entries[len(x.Entries)-1].Path >= e.Path {
			return nil, errCorrupt // not sorted, or a path twice
		}
		x.Entries = append(x.Entries, e)
		r = rec[recLen:]
	}
	if len(r) != 0 {
		return nil, errCorrupt
	}
	return x, nil
}
