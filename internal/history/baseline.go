package history

import (
	"context"
	"crypto/sha256"
	"io"
	"math"
	"os"
	"syscall"

	"golang.org/x/sys/unix"

	"toolkit/internal/history/index"
)

// baselineBatch is how many contents a background capture reads between
// two updates of the index, and baselineBytes how many bytes at most: the
// lock is held meanwhile, and files hashed, not kept, weigh up to 64 MiB.
const (
	baselineBatch = 500
	baselineBytes = 64 << 20
)

// baseline captures the contents of the tree's entries that are not kept
// yet, here, under the lock the caller holds: with a keeper, the keeper
// captures them instead (the call goes on at once, and what it changes
// before a file is captured is not restorable yet).
func (c *Call) baseline(ctx context.Context, h *history) {
	if c.s.Keeper {
		return
	}
	idx, err := index.Read(h.indexPath(c.tree))
	if err != nil {
		return
	}
	if h.capture(ctx, c.tree, idx, len(idx.Entries), math.MaxInt64) > 0 {
		_ = idx.Write(h.indexPath(c.tree))
	}
}

// capture keeps the contents of up to n entries of idx that are not kept,
// and hashes those it does not keep (with --history report, or larger than
// --history-max-file) whose sha256 is not known: a changed stat is then
// confirmed by hash, as for the others, where such a file was said
// changed by a touch. Each is read only if its stat is still the entry's.
// It stops once it has read upTo bytes; it returns how many entries it
// marked.
func (h *history) capture(ctx context.Context, tree string, idx *index.Index, n int, upTo int64) int {
	r, err := os.OpenRoot(tree)
	if err != nil {
		return 0
	}
	defer r.Close()
	marked := 0
	for i := range idx.Entries {
		e := &idx.Entries[i]
		if n == 0 || upTo <= 0 || ctx.Err() != nil {
			break
		}
		keep := h.store != nil && (e.IsLink() || e.IsReg() && e.Size <= h.s.MaxFile)
		switch {
		case e.Flags&(index.Stored|index.Heavy) != 0 || e.IsDir():
			continue
		case keep:
			content, ok := readEntry(r, e)
			if !ok {
				continue
			}
			sum := hashOf(content)
			if err := h.store.Put(content, sum); err != nil {
				return marked
			}
			e.Sum, e.Flags = sum, e.Flags|index.Stored
		case e.Sum == [32]byte{} && (e.IsLink() || e.IsReg() && e.Size <= maxHash):
			sum, ok := sumEntry(r, e)
			if !ok {
				continue
			}
			e.Sum = sum
		default:
			continue
		}
		marked++
		n--
		upTo -= e.Size
	}
	return marked
}

// sumEntry is the sha256 of what e holds, if its stat is still e's, read a
// block at a time.
func sumEntry(r *os.Root, e *index.Entry) ([32]byte, bool) {
	if e.IsLink() {
		b, ok := readEntry(r, e)
		return hashOf(b), ok
	}
	f, ok := openEntry(r, e)
	if !ok {
		return [32]byte{}, false
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, io.LimitReader(f, e.Size+1))
	if err != nil || n != e.Size {
		return [32]byte{}, false
	}
	return [32]byte(h.Sum(nil)), true
}

// readEntry reads what e holds, if its stat is still e's: a file's bytes,
// a link's target. Nothing is followed out of the tree.
func readEntry(r *os.Root, e *index.Entry) ([]byte, bool) {
	if e.IsLink() {
		t, err := r.Readlink(e.Path)
		return []byte(t), err == nil
	}
	f, ok := openEntry(r, e)
	if !ok {
		return nil, false
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, e.Size+1))
	return b, err == nil && int64(len(b)) == e.Size
}

// openEntry opens the file of e, if its stat is still e's.
func openEntry(r *os.Root, e *index.Entry) (*os.File, bool) {
	f, err := r.OpenFile(e.Path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, false
	}
	var st unix.Stat_t
	if unix.Fstat(int(f.Fd()), &st) != nil || st.Mode != e.Mode || st.Size != e.Size || st.Mtim.Nano() != e.Mtime || st.Ino != e.Ino {
		f.Close()
		return nil, false
	}
	return f, true
}
