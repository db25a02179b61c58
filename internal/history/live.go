package history

import (
	"path/filepath"
	"slices"

	"toolkit/internal/history/index"
	"toolkit/internal/history/pack"
)

// live is what the store's trim keeps, up to about upTo bytes of it: the
// pre-images of the newest calls, newest first, within half of it (what
// their undo needs); then the contents the trees' indexes keep for the
// next change of each file (the baseline among them), the smallest first
// (what the next change of most files needs).
func (h *history) live(upTo int64) map[[32]byte]bool {
	s := h.store
	out := map[[32]byte]bool{}
	var size int64
	take := func(sum [32]byte, limit int64) bool {
		n, ok := s.Size(sum)
		if !ok || out[sum] {
			return true
		}
		if size+n > limit {
			return false
		}
		out[sum] = true
		size += n
		return true
	}
	if byN, order, err := h.calls(); err == nil {
	calls:
		for _, n := range slices.Backward(order) {
			for _, f := range byN[n].files() {
				if sum, ok := pack.ParseSum(f.Pre); ok && f.PreKept && !take(sum, upTo/2) {
					break calls
				}
			}
		}
	}
	var roots [][32]byte
	names, _ := filepath.Glob(filepath.Join(h.dir, "trees", "*.index"))
	for _, name := range names {
		idx, err := index.Read(name)
		if err != nil {
			continue
		}
		for _, e := range idx.Entries {
			if e.Flags&index.Stored != 0 {
				roots = append(roots, e.Sum)
			}
		}
	}
	sizeOf := func(sum [32]byte) int64 { n, _ := s.Size(sum); return n }
	slices.SortFunc(roots, func(a, b [32]byte) int { return int(sizeOf(a) - sizeOf(b)) })
	for _, sum := range roots {
		if !take(sum, upTo) {
			break
		}
	}
	return out
}
