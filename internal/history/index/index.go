// Package index is a tree's index, as history keeps it, git's way: each
// path's stat and content sha256, sorted, in one file written whole
// (TKHIDX1), with two extensions read by its one reader: the delta
// (trees/ID.index.said, the entries write, edit, patch and undo said since
// the index was written whole) and the table of contents (.toc, where
// every 64th entry begins, for lookups of a few paths).
package index

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
	TypeMask = 0o170000
	TypeReg  = 0o100000
	TypeDir  = 0o040000
	TypeLink = 0o120000
)

func (e *Entry) IsDir() bool  { return e.Mode&TypeMask == TypeDir }
func (e *Entry) IsLink() bool { return e.Mode&TypeMask == TypeLink }
func (e *Entry) IsReg() bool  { return e.Mode&TypeMask == TypeReg }

// SameStat says whether two entries' stats agree: then the content is
// taken to be as it was, unless the entry was racy.
func SameStat(a, b *Entry) bool {
	return a.Mode == b.Mode && a.Size == b.Size && a.Mtime == b.Mtime && a.Ctime == b.Ctime && a.Ino == b.Ino && a.Dev == b.Dev
}

// Index is a tree's entries, sorted by path.
type Index struct {
	Entries []Entry
	None    bool    // there was no index, or none that could be read
	V       Version // its files' version, once read or written
}

// Version tells one state of a tree's index from another without reading
// it: the sha256 its file ends with, and the size of its delta.
type Version struct {
	Sum  [32]byte // the sha256 the index file ends with
	Said int64    // the size of its delta
}

// VersionOf is the Version of the index at path as its files stand.
func VersionOf(path string) Version {
	v := Version{Sum: indexSum(path)}
	if fi, err := os.Stat(DeltaPath(path)); err == nil {
		v.Said = fi.Size()
	}
	return v
}

// find is the entry of path, or nil.
func (x *Index) Find(path string) *Entry {
	i, ok := slices.BinarySearchFunc(x.Entries, path, func(e Entry, p string) int { return strings.Compare(e.Path, p) })
	if !ok {
		return nil
	}
	return &x.Entries[i]
}

// recLen is an entry's record after its path: mode, size, mtime, ctime,
// ino, dev, sum, flags.
const recLen = 4 + 8*5 + 32 + 1

// indexMagic starts an index file; its Version is the last byte.
var indexMagic = []byte("TKHIDX1\n")

// ErrCorrupt is an index or pack that does not read as toolkit wrote it.
var ErrCorrupt = errors.New("corrupt")

// write writes the index to path whole: a temporary file, synced, then
// renamed over it. The file ends with the sha256 of all before it.
func (x *Index) Write(path string) error {
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
	// What the delta held is in the index now; a delta left by a
	// kill here names the index before, and is not read.
	_ = os.Remove(DeltaPath(path))
	x.V, x.None = Version{Sum: [32]byte(sum)}, false
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

// nextEntry splits off the entry b begins with, as appendEntry wrote it:
// its path and its record (recLen bytes), and what follows; false where b
// does not begin with a whole one. Every reader of entries reads them
// through it: the index, a block of it, the delta, a lookup.
func nextEntry(b []byte) (path, rec, rest []byte, ok bool) {
	if len(b) < 2 {
		return nil, nil, nil, false
	}
	pl := int(binary.LittleEndian.Uint16(b))
	if len(b) < 2+pl+recLen {
		return nil, nil, nil, false
	}
	return b[2 : 2+pl], b[2+pl : 2+pl+recLen], b[2+pl+recLen:], true
}

// entryLen is how long the entry b begins with is, where b holds at least
// its path's length: 0 where it does not.
func entryLen(b []byte) int {
	if len(b) < 2 {
		return 0
	}
	return 2 + int(binary.LittleEndian.Uint16(b)) + recLen
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

// Read reads an index file, and the entries its delta holds; a
// missing one is an empty index, one that does not check is ErrCorrupt.
func Read(path string) (*Index, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return &Index{None: true}, nil
	}
	if err != nil {
		return nil, err
	}
	x, err := Parse(b)
	if err != nil {
		return nil, err
	}
	said, size := readDelta(DeltaPath(path), x.V.Sum)
	x.Apply(said)
	x.V.Said = size
	return x, nil
}

// apply sets the entries said, in their order.
func (x *Index) Apply(said []Delta) {
	for _, s := range said {
		x.Set(s.Path, s.Entry, s.There)
	}
}

// Parse reads an index from its bytes.
func Parse(b []byte) (*Index, error) {
	if len(b) < len(indexMagic)+8+32 || !bytes.HasPrefix(b, indexMagic) {
		return nil, ErrCorrupt
	}
	body, sum := b[:len(b)-32], b[len(b)-32:]
	if got := sha256.Sum256(body); !bytes.Equal(got[:], sum) {
		return nil, ErrCorrupt
	}
	r := body[len(indexMagic):]
	n := binary.LittleEndian.Uint64(r)
	r = r[8:]
	if n > uint64(len(r))/(2+recLen) {
		return nil, ErrCorrupt
	}
	x := &Index{Entries: make([]Entry, 0, n), V: Version{Sum: [32]byte(sum)}}
	// One string holds every path: each entry's is a part of it.
	all, base := string(r), len(r)
	for range n {
		path, rec, rest, ok := nextEntry(r)
		if !ok {
			return nil, ErrCorrupt
		}
		at := base - len(r) + 2
		e := Entry{Path: all[at : at+len(path)]}
		decodeRecord(&e, rec)
		if len(x.Entries) > 0 && x.Entries[len(x.Entries)-1].Path >= e.Path {
			return nil, ErrCorrupt // not sorted, or a path twice
		}
		x.Entries = append(x.Entries, e)
		r = rest
	}
	if len(r) != 0 {
		return nil, ErrCorrupt
	}
	return x, nil
}

// Set puts e as the entry of path (there: else the path is gone), keeping
// the entries sorted.
func (x *Index) Set(path string, e Entry, there bool) {
	i, found := slices.BinarySearchFunc(x.Entries, path, func(e Entry, p string) int { return strings.Compare(e.Path, p) })
	switch {
	case found && there:
		x.Entries[i] = e
	case found:
		x.Entries = slices.Delete(x.Entries, i, i+1)
	case there:
		x.Entries = slices.Insert(x.Entries, i, e)
	}
}
