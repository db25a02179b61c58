package history

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"

	"toolkit/internal/proc"
)

// BaselineName is the hidden command of the background toolkit that
// captures a tree's baseline: toolkit history-baseline TREE SETTINGS.
const BaselineName = "history-baseline"

// baselineBatch is how many contents a background capture reads between
// two updates of the index.
const baselineBatch = 500

// baseline captures the contents of the tree's entries that are not kept
// yet: in a background toolkit with the keeper (the call goes on at once,
// and what it changes before a file is captured is not restorable yet),
// else here, under the lock the caller holds.
func (c *Call) baseline(ctx context.Context, h *history) {
	if h.store == nil {
		return
	}
	if c.s.Keeper {
		_ = startBaseline(c.tree, c.s)
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
		if _, err := h.store.put(content); err != nil {
			break
		}
		e.Sum, e.Flags = hashOf(content), e.Flags|Stored
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

// startBaseline starts the background toolkit for tree, at the lowest
// priority, in a session of its own; one that is already at work on the
// tree lets it be.
func startBaseline(tree string, s Settings) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	b, _ := json.Marshal(s)
	null, err := proc.Nothing()
	if err != nil {
		return err
	}
	defer null.Close()
	_, err = proc.StartChild(proc.Child{Path: exe, Args: []string{"toolkit", BaselineName, tree, string(b)}, Dir: "/", Stdin: null, Stdout: null, Stderr: null, Session: true, Apart: true})
	return err
}

// RunBaseline is the background toolkit's work: it captures the tree's
// baseline a batch at a time, taking the lock only to keep a batch and mark
// it in the index, and ends when every entry that can be kept is.
func RunBaseline(tree, settings string) int {
	var s Settings
	if err := json.Unmarshal([]byte(settings), &s); err != nil {
		return 2
	}
	_ = unix.Setpriority(unix.PRIO_PROCESS, 0, 19)
	h, err := open(s)
	if err != nil {
		return 1
	}
	// One at a time for a tree: a lock of its own, held to the end.
	one, err := os.OpenFile(filepath.Join(h.dir, "trees", treeID(tree)+".baseline"), os.O_RDWR|os.O_CREATE, 0o600)
	h.close()
	if err != nil {
		return 1
	}
	defer one.Close()
	if unix.Flock(int(one.Fd()), unix.LOCK_EX|unix.LOCK_NB) != nil {
		return 0
	}
	ctx := context.Background()
	for {
		h, err := open(s)
		if err != nil {
			return 1
		}
		idx, err := readIndex(h.indexPath(tree))
		if err != nil || h.store == nil {
			h.close()
			return 1
		}
		n := h.capture(ctx, tree, idx, baselineBatch)
		if n > 0 {
			err = idx.write(h.indexPath(tree))
		}
		h.close()
		if n == 0 || err != nil {
			return 0
		}
	}
}
