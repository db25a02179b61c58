// Package pack is history's store: whole contents by their sha256, each
// once, compressed with flate at level 1, in append-only packs with their
// records; bounded by a cap past which the oldest packs go, what is live in
// them copied out first.
package pack

import (
	"bytes"
	"compress/flate"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// Store keeps whole contents by their sha256, each once, compressed with
// flate at level 1, in append-only packs: packs/N.pack holds frames
//
//	"TKB1" sha256[32] rawLen[4] compLen[4] deflated[compLen]
//
// and packs/N.idx a record of 48 bytes for each, written after its frame:
//
//	sha256[32] pack[4] offset[8] compLen[4]
//
// until the pack is sealed: then its records are sorted, in N.sidx
// (sealed.go).
// A pack is at most MaxPack bytes; the oldest pack goes first when the
// store is over its cap, and what was in it is no longer undoable. A torn
// tail (toolkit killed mid-append) is cut when the store is opened: an idx
// record whose frame is not whole in its pack, and the pack's bytes after
// its last whole frame. Nothing is read back without its sha256 checking.
type Store struct {
	dir   string
	cap   int64
	locs  map[[32]byte]loc
	sizes map[int]int64 // each pack's bytes
	total int64

	cur, curIdx *os.File // the pack being appended, opened when first needed
	curNum      int
	dirty       bool
	readers     map[int]*os.File
	zw          *flate.Writer // one, reset for each content: a new one costs a megabyte
	zr          io.ReadCloser // one, reset for each content read back
	comp        bytes.Buffer

	// The packs' records are read when first needed, in two steps: the
	// last pack's (its torn tail cut, so that it can be appended to) and
	// the others' sizes, for a call that keeps or looks up a few contents
	// (write, edit, patch), looked up in the other packs' records without
	// keeping them; every record, for a call that looks up more (a scan
	// that found many changes, an undo). A call that finds nothing changed
	// needs neither.
	tail    bool
	loaded  bool
	looks   int // lookups since tail, before every record is read
	loadErr error
	buf     []byte // records read a block at a time by holds

	// live, when set, is what trim keeps: the contents still needed, up
	// to about the bytes given.
	Live     func(upTo int64) map[[32]byte]bool
	trimming bool
}

// fewLooks is how many contents a call looks up through the packs'
// records on disk before it reads them all into memory.
const fewLooks = 8

type loc struct {
	pack int
	off  int64
	n    uint32
}

const (
	frameHeader = 4 + 32 + 4 + 4
	idxRecord   = 48
)

// MaxPack bounds a pack; a test makes it smaller.
var MaxPack int64 = 64 << 20

var frameMagic = []byte("TKB1")

// openStore opens the store in dir, capped at cap bytes; the torn tails
// are cut when its records are first read.
func Open(dir string, cap int64) (*Store, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	return &Store{dir: dir, cap: cap, locs: map[[32]byte]loc{}, sizes: map[int]int64{}, readers: map[int]*os.File{}}, nil
}

// ensure reads every pack's records, once (anew, where ensureTail read
// some: what was appended since is in the records on disk).
func (s *Store) ensure() error {
	if !s.loaded {
		s.loaded = true
		clear(s.locs)
		clear(s.sizes)
		s.total, s.loadErr = 0, nil
		for _, n := range s.packs() {
			if s.loadErr = s.load(n); s.loadErr != nil {
				break
			}
			s.curNum = max(s.curNum, n)
		}
	}
	return s.loadErr
}

// ensureTail reads the last pack's records, cutting its torn tail, and
// the other packs' sizes, once: enough to append to the store.
func (s *Store) ensureTail() error {
	if s.tail || s.loaded {
		return s.loadErr
	}
	s.tail = true
	packs := s.packs()
	for i, n := range packs {
		s.curNum = max(s.curNum, n)
		if i == len(packs)-1 {
			s.loadErr = s.load(n)
			break
		}
		// One the store moved on from, its sealing cut short (or made
		// before packs were sealed): sealed now, once.
		if err := s.seal(n); err != nil {
			s.loadErr = err
			return err
		}
		if fi, err := os.Stat(s.packPath(n)); err == nil {
			s.sizes[n] = fi.Size()
			s.total += fi.Size()
		}
	}
	return s.loadErr
}

// packs are the numbers of the packs there are, by their records (sealed
// or not), oldest first.
func (s *Store) packs() []int {
	names, _ := filepath.Glob(filepath.Join(s.dir, "*.idx"))
	sealed, _ := filepath.Glob(filepath.Join(s.dir, "*.sidx"))
	var out []int
	for _, name := range append(names, sealed...) {
		num, _, _ := strings.Cut(filepath.Base(name), ".")
		if n, err := strconv.Atoi(num); err == nil {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func (s *Store) packPath(n int) string { return filepath.Join(s.dir, fmt.Sprintf("%06d.pack", n)) }
func (s *Store) idxPath(n int) string  { return filepath.Join(s.dir, fmt.Sprintf("%06d.idx", n)) }

// load reads pack n's records, cutting a torn tail from both files.
func (s *Store) load(n int) error {
	fi, err := os.Stat(s.packPath(n))
	if err != nil {
		// A pack gone (removed by hand, or its removal cut short): its
		// records go with it.
		os.Remove(s.idxPath(n))
		os.Remove(s.sidxPath(n))
		return nil
	}
	size := fi.Size()
	if s.sealed(n) {
		os.Remove(s.idxPath(n)) // its sealing's last step, cut short
		s.sizes[n] = size
		s.total += size
		s.loadSealed(n, size) // one that does not check holds nothing the store gives
		return nil
	}
	f, err := os.Open(s.idxPath(n))
	if err != nil {
		return err
	}
	defer f.Close()
	good, end, err := s.records(f, n, size, func(sum [32]byte, l loc) bool {
		s.locs[sum] = l
		return true
	})
	if err != nil {
		return err
	}
	if ifi, err := f.Stat(); err == nil && ifi.Size() != good {
		if err := os.Truncate(s.idxPath(n), good); err != nil {
			return err
		}
	}
	if end != size {
		if err := os.Truncate(s.packPath(n), end); err != nil {
			return err
		}
	}
	s.sizes[n] = end
	s.total += end
	return nil
}

// records reads pack n's records from r, a block at a time, passing each
// whole one (its frame within the pack's size bytes, right after the one
// before) to each until each says stop. It returns how many bytes of
// records and of the pack are whole.
func (s *Store) records(r io.Reader, n int, size int64, each func(sum [32]byte, l loc) bool) (good, end int64, err error) {
	if s.buf == nil {
		s.buf = make([]byte, 1024*idxRecord)
	}
	for {
		k, rerr := io.ReadFull(r, s.buf)
		for b := s.buf[:k-k%idxRecord]; len(b) >= idxRecord; b = b[idxRecord:] {
			off := int64(binary.LittleEndian.Uint64(b[36:]))
			cn := binary.LittleEndian.Uint32(b[44:])
			if off != end || off+frameHeader+int64(cn) > size {
				return good, end, nil
			}
			if !each([32]byte(b[:32]), loc{n, off, cn}) {
				return good, end, nil
			}
			end = off + frameHeader + int64(cn)
			good += idxRecord
		}
		switch {
		case rerr == io.EOF || rerr == io.ErrUnexpectedEOF:
			return good, end, nil
		case rerr != nil:
			return good, end, rerr
		}
	}
}

// holds looks through pack n's records on disk for sum, keeping none: a
// binary search of a sealed pack's.
func (s *Store) holds(n int, sum [32]byte) bool {
	if s.sealed(n) {
		return s.findSealed(n, sum)
	}
	f, err := os.Open(s.idxPath(n))
	if err != nil {
		return false
	}
	defer f.Close()
	found := false
	_, _, _ = s.records(f, n, s.sizes[n], func(got [32]byte, _ loc) bool {
		found = got == sum
		return !found
	})
	return found
}

// has says whether the content of sum is in the store: for the first few
// contents a call looks up, through the packs' records on disk, where a
// call that writes one file of a large tree would read them all into
// memory (4-15 ms in Go's source tree, its baseline kept).
func (s *Store) Has(sum [32]byte) bool {
	if !s.loaded && s.looks < fewLooks {
		s.looks++
		if s.ensureTail() != nil {
			return false
		}
		if _, ok := s.locs[sum]; ok {
			return true
		}
		for n := range s.sizes {
			if n != s.curNum && s.holds(n, sum) {
				return true
			}
		}
		return false
	}
	if s.ensure() != nil {
		return false
	}
	_, ok := s.locs[sum]
	return ok
}

// hasHex is has for a sha256 in hex; false for one that is not.
func (s *Store) HasHex(sum string) bool {
	k, ok := ParseSum(sum)
	return ok && s.Has(k)
}

// ParseSum is a sha256 written in hex, as the log holds it.
func ParseSum(sum string) ([32]byte, bool) {
	b, err := hex.DecodeString(sum)
	if err != nil || len(b) != 32 {
		return [32]byte{}, false
	}
	return [32]byte(b), true
}

// put keeps data, whose sha256 is sum, if it is not kept already.
func (s *Store) Put(data []byte, sum [32]byte) error {
	if err := s.ensureTail(); err != nil {
		return err
	}
	if s.Has(sum) {
		return nil
	}
	s.comp.Reset()
	if s.zw == nil {
		s.zw, _ = flate.NewWriter(&s.comp, flate.BestSpeed)
	} else {
		s.zw.Reset(&s.comp)
	}
	s.zw.Write(data)
	if err := s.zw.Close(); err != nil {
		return err
	}
	comp := &s.comp
	frame := make([]byte, frameHeader, frameHeader+comp.Len())
	copy(frame, frameMagic)
	copy(frame[4:], sum[:])
	binary.LittleEndian.PutUint32(frame[36:], uint32(len(data)))
	binary.LittleEndian.PutUint32(frame[40:], uint32(comp.Len()))
	return s.appendFrame(append(frame, comp.Bytes()...), sum)
}

// appendFrame appends a whole frame, the content of sum, to the pack being
// appended to, and its record after it.
func (s *Store) appendFrame(frame []byte, sum [32]byte) error {
	if s.cur == nil || s.sizes[s.curNum]+int64(len(frame)) > MaxPack {
		if err := s.next(); err != nil {
			return err
		}
	}
	off := s.sizes[s.curNum]
	if _, err := s.cur.Write(frame); err != nil {
		return err
	}
	n := uint32(len(frame) - frameHeader)
	var rec [idxRecord]byte
	copy(rec[:], sum[:])
	binary.LittleEndian.PutUint32(rec[32:], uint32(s.curNum))
	binary.LittleEndian.PutUint64(rec[36:], uint64(off))
	binary.LittleEndian.PutUint32(rec[44:], n)
	if _, err := s.curIdx.Write(rec[:]); err != nil {
		return err
	}
	s.locs[sum] = loc{s.curNum, off, n}
	s.sizes[s.curNum] += int64(len(frame))
	s.total += int64(len(frame))
	s.dirty = true
	return nil
}

// syncAppended makes what was appended durable: the pack first, then its
// records.
func (s *Store) syncAppended() error {
	if err := unix.Fdatasync(int(s.cur.Fd())); err != nil {
		return err
	}
	if err := unix.Fdatasync(int(s.curIdx.Fd())); err != nil {
		return err
	}
	s.dirty = false
	return nil
}

// next opens a new pack to append to: the last one while it has room, else
// one after it.
func (s *Store) next() error {
	if s.cur != nil {
		if err := s.Sync(); err != nil {
			return err
		}
		s.cur.Close()
		s.curIdx.Close()
		s.cur, s.curIdx = nil, nil
	}
	if s.curNum == 0 || s.sizes[s.curNum] >= MaxPack/2 || s.sealed(s.curNum) {
		if s.curNum > 0 {
			if err := s.seal(s.curNum); err != nil {
				return err
			}
		}
		s.curNum++
	}
	p, err := os.OpenFile(s.packPath(s.curNum), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	x, err := os.OpenFile(s.idxPath(s.curNum), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		p.Close()
		return err
	}
	s.cur, s.curIdx = p, x
	return nil
}

// sync makes what was appended durable: the packs first, then their
// records. It then keeps the store within its cap.
func (s *Store) Sync() error {
	if !s.dirty {
		return nil
	}
	if err := s.syncAppended(); err != nil {
		return err
	}
	s.dirty = false
	if s.total > s.cap && !s.trimming {
		s.trimming = true
		defer func() { s.trimming = false }()
		return s.trim()
	}
	return nil
}

// get reads back the content of sum, checking its sha256.
func (s *Store) Get(sum [32]byte) ([]byte, error) {
	f, l, err := s.locate(sum)
	if err != nil {
		return nil, err
	}
	if s.zr == nil {
		s.zr = flate.NewReader(bytes.NewReader(nil))
	}
	return inflate(f, l, sum, s.zr)
}

// getAll is the contents of sums, as get reads them, read side by side:
// an undo of many files inflates and checks each. A content that cannot
// be read back is nil, with its error.
func (s *Store) GetAll(sums [][32]byte) ([][]byte, []error) {
	out, errs := make([][]byte, len(sums)), make([]error, len(sums))
	files, locs := make([]*os.File, len(sums)), make([]loc, len(sums))
	for i, sum := range sums {
		files[i], locs[i], errs[i] = s.locate(sum)
	}
	SideBySide(len(sums), func() func(int) {
		zr := flate.NewReader(bytes.NewReader(nil))
		return func(i int) {
			if errs[i] == nil {
				out[i], errs[i] = inflate(files[i], locs[i], sums[i], zr)
			}
		}
	})
	return out, errs
}

// SideBySide runs each(i) for every i below n, on as many goroutines as
// there are CPUs to run them; worker makes each goroutine's each (with an
// inflater of its own, say).
func SideBySide(n int, worker func() func(i int)) {
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), n) {
		each := worker()
		wg.Go(func() {
			for i := range next {
				each(i)
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
}

// locate is the pack that holds sum's frame, open, and where in it.
func (s *Store) locate(sum [32]byte) (*os.File, loc, error) {
	if err := s.ensure(); err != nil {
		return nil, loc{}, err
	}
	l, ok := s.locs[sum]
	if !ok {
		return nil, loc{}, ErrNotStored
	}
	f := s.readers[l.pack]
	if f == nil {
		var err error
		if f, err = os.Open(s.packPath(l.pack)); err != nil {
			return nil, loc{}, err
		}
		s.readers[l.pack] = f
	}
	return f, l, nil
}

// inflate reads the frame at l in f back, through zr, and checks it is the
// content of sum.
func inflate(f *os.File, l loc, sum [32]byte, zr io.ReadCloser) ([]byte, error) {
	frame := make([]byte, frameHeader+int(l.n))
	if _, err := f.ReadAt(frame, l.off); err != nil {
		return nil, fmt.Errorf("pack %d: %w", l.pack, err)
	}
	if !bytes.Equal(frame[:4], frameMagic) || !bytes.Equal(frame[4:36], sum[:]) || binary.LittleEndian.Uint32(frame[40:]) != l.n {
		return nil, fmt.Errorf("pack %d at %d: %w", l.pack, l.off, ErrCorrupt)
	}
	raw := int64(binary.LittleEndian.Uint32(frame[36:]))
	// One inflater for many contents (a new one costs its 32 KiB window),
	// into a buffer of the size the frame says, up to 64 MiB (a corrupt
	// frame's size is not trusted further: the buffer grows as it reads).
	if err := zr.(flate.Resetter).Reset(bytes.NewReader(frame[frameHeader:]), nil); err != nil {
		return nil, err
	}
	buf := bytes.NewBuffer(make([]byte, 0, min(raw, 64<<20)+bytes.MinRead))
	_, err := buf.ReadFrom(io.LimitReader(zr, raw+1))
	out := buf.Bytes()
	if err != nil || int64(len(out)) != raw || sha256.Sum256(out) != sum {
		return nil, fmt.Errorf("pack %d at %d: %w", l.pack, l.off, ErrCorrupt)
	}
	return out, nil
}

var ErrNotStored = errors.New("not in the store")

// ErrCorrupt is a frame that does not read back as toolkit wrote it.
var ErrCorrupt = errors.New("corrupt")

// close syncs and closes the store.
func (s *Store) Close() error {
	err := s.Sync()
	if s.cur != nil {
		s.cur.Close()
		s.curIdx.Close()
	}
	for _, f := range s.readers {
		f.Close()
	}
	return err
}

// Size is how many bytes the content of sum takes in the store, its frame
// whole; false where it is not there.
func (s *Store) Size(sum [32]byte) (int64, bool) {
	if s.ensure() != nil {
		return 0, false
	}
	l, ok := s.locs[sum]
	return frameHeader + int64(l.n), ok
}
