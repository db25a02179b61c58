package history

import (
	"context"
	"io"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// baselineBatch is how many contents a background capture reads between
// two updates of the index.
const baselineBatch = 500

// baseline captures the contents of the tree's entries that are not kept
// yet, here, under the lock the caller holds: with a keeper, the keeper
// captures them instead (the call goes on at once, and what it changes
// before a file is captured is not restorable yet).
func (c *Call) baseline(ctx context.Context, h *history) {
	if h.store == nil || c.s.Keeper {
		return
	}
	idx, err := readIndex(h.indexPath(c.tree))
	if err != nil {
		return
	}
	if h.capture(ctx, c.tree, idx, len(idx.Entries)) > 0 {
		_ = idx.write(h.indexPath(c.tree))
	}
}

// capture keeps the contents of up to n entries of idx that are not kept,
// each read only if its stat is still the entry's, and marks them; it
// returns how many it marked.
func (h *history) capture(ctx context.Context, tree string, idx *Index, n int) int {
	r, err := os.OpenRoot(tree)
	if err != nil {
		return 0
	}
	defer r.Close()
	marked := 0
	for i := range idx.Entries {
		e := &idx.Entries[i]
		if n == 0 || ctx.Err() != nil {
			break
		}
		if e.Flags&(Stored|Heavy) != 0 || e.isDir() || e.isReg() && e.Size > h.s.MaxFile {
			continue
		}
		content, ok := readEntry(r, e)
		if !ok {
			continue
		}
		sum := hashOf(content)
		if err := h.store.put(content, sum); err != nil {
			break
		}
		e.Sum, e.Flags = sum, e.Flags|Stored
		marked++
		n--
	}
	return marked
}

// readEntry reads what e holds, if its stat is still e's: a file's bytes,
// a link's target. Nothing is followed out of the tree.
func readEntry(r *os.Root, e *Entry) ([]byte, bool) {
	if e.isLink() {
		t, err := r.Readlink(e.Path)
		return []byte(t), err == nil
	}
	f, err := r.OpenFile(e.Path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	var st unix.Stat_t
	if unix.Fstat(int(f.Fd()), &st) != nil || st.Mode != e.Mode || st.Size != e.Size || st.Mtim.Nano() != e.Mtime || st.Ino != e.Ino {
		return nil, false
	}
	b, err := io.ReadAll(io.LimitReader(f, e.Size+1))
	return b, err == nil && int64(len(b)) == e.Size
}
