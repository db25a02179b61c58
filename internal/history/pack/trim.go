package pack

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
)

// trim keeps the store within its cap, as restic prune does: the oldest
// packs go first, but what is live in one (s.Live: the contents the
// trees' indexes keep for the next change of each file, the pre-images
// of the newest calls) is copied to the pack being appended to before it
// goes, so that only old calls lose their undo. The one being appended to
// stays.
func (s *Store) trim() error {
	if err := s.ensure(); err != nil {
		return err
	}
	var live map[[32]byte]bool
	if s.Live != nil {
		live = s.Live(s.cap * 3 / 4)
	}
	for _, n := range s.packs() {
		if s.total <= s.cap {
			break
		}
		if n == s.curNum {
			continue
		}
		for sum, l := range s.locs {
			if l.pack != n || !live[sum] {
				continue
			}
			if err := s.copyFrame(sum, l); err != nil {
				return err // the pack stays, and its contents with it
			}
		}
		// The copies durable before their first place goes.
		if s.dirty {
			if err := s.syncAppended(); err != nil {
				return err
			}
		}
		os.Remove(s.idxPath(n)) // first: records without their pack are never read
		os.Remove(s.sidxPath(n))
		os.Remove(s.packPath(n))
		for sum, l := range s.locs {
			if l.pack == n {
				delete(s.locs, sum)
			}
		}
		if f := s.readers[n]; f != nil {
			f.Close()
			delete(s.readers, n)
		}
		s.total -= s.sizes[n]
		delete(s.sizes, n)
	}
	return nil
}

// copyFrame appends the frame of sum at l, checked, to the pack being
// appended to: its new place.
func (s *Store) copyFrame(sum [32]byte, l loc) error {
	f, _, err := s.locate(sum)
	if err != nil {
		return err
	}
	frame := make([]byte, frameHeader+int(l.n))
	if _, err := f.ReadAt(frame, l.off); err != nil {
		return err
	}
	if !bytes.Equal(frame[:4], frameMagic) || !bytes.Equal(frame[4:36], sum[:]) || binary.LittleEndian.Uint32(frame[40:]) != l.n {
		return fmt.Errorf("pack %d at %d: %w", l.pack, l.off, ErrCorrupt)
	}
	return s.appendFrame(frame, sum)
}
