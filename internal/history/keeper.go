package history

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"toolkit/internal/history/index"
	"toolkit/internal/history/watch"
	"toolkit/internal/keep"
	"toolkit/internal/replace"
	"toolkit/internal/state"
	"toolkit/internal/walk"
)

// KeeperName is the hidden command of a tree's history keeper: toolkit
// history-keeper TREE SETTINGS.
//
// A keeper is a process of its own for one tree and state directory,
// started by a call as a job's keeper is, in a session of its own. It
// watches the tree's directories with inotify and answers each call's ask
// with the directories that changed since the call's index, so that a call
// walks those instead of the whole tree; and it captures the contents the
// index does not keep yet (the tree's baseline), at the lowest priority. It
// ends after Settings.KeeperIdle without a call, at SIGTERM (toolkit job
// --stop-all), or once it cannot watch (too many directories: a call scans
// the whole tree then).
const KeeperName = "history-keeper"

// keeperFile is the file a tree's keeper holds locked while it lives, and
// names itself in: "PID START".
func (h *history) keeperFile(tree string) string {
	return filepath.Join(h.dir, "trees", treeID(tree)+".keeper")
}

// socketName is the abstract socket a tree's keeper listens on, one for
// each state directory and tree: it goes when the keeper does.
func socketName(dir, tree string) string {
	sum := sha256.Sum256([]byte(dir + "\x00" + tree))
	return "@toolkit-history-" + hex.EncodeToString(sum[:12])
}

// startKeeper starts tree's keeper, unless one lives or this process
// started one a moment ago; a keeper that could not watch the tree an
// hour ago is not tried again before then.
func (h *history) startKeeper(tree string) error {
	if fi, err := os.Stat(h.keeperFile(tree) + ".unwatched"); err == nil && time.Since(fi.ModTime()) < time.Hour {
		return nil
	}
	b, _ := json.Marshal(h.s)
	return keep.Start(h.keeperFile(tree), KeeperName, tree, string(b))
}

// RunKeeper is a tree's keeper: it returns its exit status.
func RunKeeper(tree, settings string) int {
	var s Settings
	if err := json.Unmarshal([]byte(settings), &s); err != nil {
		return 2
	}
	h, err := open(s)
	if err != nil {
		return 1
	}
	k := &keeper{tree: tree, s: s, dir: h.dir, skip: h.skip(tree), asked: make(chan struct{}, 1)}
	name := h.keeperFile(tree)
	h.close()
	// One for a tree: the file is held locked to the end.
	one := keep.Hold(name)
	if one == nil {
		return 0
	}
	defer one.Close()
	say := func(state string) { one.Say(state, tree) }
	say("starting")

	w, err := watch.New(context.Background(), tree, watch.Options{
		Dirs: func(ctx context.Context, add func(string) bool) error {
			return track(ctx, tree, k.skip, nil, func(e walk.Entry, _ uint8) bool { return e.Type.IsDir() && add(e.Path) })
		},
		Skip: k.skip, Heavy: isHeavy, Max: s.MaxWatches,
	})
	if err != nil {
		_ = os.WriteFile(name+".unwatched", []byte(err.Error()+"\n"), 0o600)
		say("capturing")
	} else {
		defer w.Close()
		ln, err := net.Listen("unix", socketName(k.dir, tree))
		if err != nil {
			return 0 // another keeper listens
		}
		defer ln.Close()
		k.w = w
		go w.Run()
		go k.serve(ln)
	}
	if k.w != nil {
		say("capturing, watching")
	}
	// The baseline: captured once the first call has made the index (this
	// keeper may start before it has), then the calls keep what they find.
	captured := k.capture()
	if k.w == nil {
		return 0
	}
	if captured {
		say("watching")
	}
	idle := time.NewTimer(s.KeeperIdle)
	// Owned by a toolkit mcp, it ends with it; a tree deleted, with its
	// watch.
	var owned <-chan time.Time
	if s.Owner != "" {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		owned = t.C
	}
	for {
		select {
		case <-idle.C:
			if s.Owner == "" {
				return 0
			}
		case <-owned:
			if keep.OwnerGone(s.Owner) {
				return 0
			}
		case <-k.w.Gone():
			return 0
		case <-k.asked:
			idle.Reset(s.KeeperIdle)
			if !captured {
				if captured = k.capture(); captured {
					say("watching")
				}
			}
		}
	}
}

// Keeper is a tree's keeper as toolkit job lists it.
type Keeper struct {
	Tree  string `json:"tree"`
	Pid   int    `json:"pid"`
	State string `json:"state"` // "capturing", "capturing, watching", "watching"
	h     keep.Helper
}

// Keepers are the keepers that live for the state directory's trees.
func Keepers() []Keeper {
	st, err := state.Dir("history")
	if err != nil {
		return nil
	}
	var out []Keeper
	for _, h := range keep.List(filepath.Join(st, "history", "trees", "*.keeper")) {
		out = append(out, Keeper{Tree: h.What, Pid: h.Pid, State: h.State, h: h})
	}
	return out
}

// Stop ends the keeper, if it is still the process it was, and waits a
// moment for its end.
func (k Keeper) Stop() { k.h.Stop() }

// keeper is a tree's keeper's state.
type keeper struct {
	tree, dir, skip string
	s               Settings
	w               *watch.Watcher
	asked           chan struct{} // a call asked
}

// capture keeps the contents the tree's index does not keep yet, a batch
// at a time, holding the history's lock only to keep a batch and mark it,
// on a thread at the lowest priority. It says whether it is done: false
// while there is no index to capture from.
func (k *keeper) capture() bool {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	_ = unix.Setpriority(unix.PRIO_PROCESS, unix.Gettid(), 19)
	defer unix.Setpriority(unix.PRIO_PROCESS, unix.Gettid(), 0)
	for {
		h, err := open(k.s)
		if err != nil {
			return false
		}
		idx, err := index.Read(h.indexPath(k.tree))
		if err != nil || idx.None {
			h.close()
			return false
		}
		n := h.capture(context.Background(), k.tree, idx, baselineBatch, baselineBytes)
		if n > 0 {
			err = idx.Write(h.indexPath(k.tree))
		}
		h.close()
		if err != nil {
			return false
		}
		if n == 0 {
			return true
		}
	}
}

// serve answers the calls' asks, one at a time: only from this user.
func (k *keeper) serve(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		if keep.SameUser(c) {
			k.answer(c)
		}
		c.Close()
		select {
		case k.asked <- struct{}{}:
		default:
		}
	}
}

// A call's ask is one line, "ask GEN SEQ\n": the keeper and the point the
// call's index is at (from the keeper's last answer to a call). The answer
// is "GEN SEQ WHOLE\n", then for each changed directory its kind ('d': its
// entries; 't': its whole tree) and its path, each ended by a NUL. WHOLE is
// 1 where the index's point is not one the keeper can answer from (another
// keeper's, or before an overflow): the call walks the whole tree then.
const askTimeout = 2 * time.Second

// answer answers one ask.
func (k *keeper) answer(c net.Conn) {
	_ = c.SetDeadline(time.Now().Add(askTimeout))
	line, err := bufio.NewReader(io.LimitReader(c, 100)).ReadString('\n')
	f := strings.Fields(line)
	if err != nil || len(f) != 3 || f[0] != "ask" {
		return
	}
	gen, err1 := strconv.ParseUint(f[1], 10, 64)
	since, err2 := strconv.ParseUint(f[2], 10, 64)
	if err1 != nil || err2 != nil {
		return
	}
	bw := bufio.NewWriter(c)
	k.w.ChangedSince(gen, since, bw)
	_ = bw.Flush()
}

// watchPoint is where a tree's index is in its keeper's changes: the
// keeper (Gen) and its answer (Seq), and when the tree was last walked
// whole.
type watchPoint struct {
	Gen, Seq uint64
	Whole    time.Time
}

func (h *history) watchFile(tree string) string {
	return filepath.Join(h.dir, "trees", treeID(tree)+".watch")
}

// readWatchPoint is tree's watch point; the zero one where there is none.
func (h *history) readWatchPoint(tree string) watchPoint {
	var p watchPoint
	b, err := os.ReadFile(h.watchFile(tree))
	if err == nil {
		var whole int64
		if _, err := fmt.Sscanf(string(b), "%d %d %d", &p.Gen, &p.Seq, &whole); err == nil {
			p.Whole = time.Unix(0, whole)
		}
	}
	return p
}

// writeWatchPoint writes tree's watch point in place, unsynced: one lost
// or torn is older than the index, or unreadable, and a point older than
// the index only makes the next call walk more.
func (h *history) writeWatchPoint(tree string, p watchPoint) error {
	return replace.WriteLine(h.watchFile(tree), fmt.Sprintf("%d %d %d", p.Gen, p.Seq, p.Whole.UnixNano()))
}

// maxAnswer bounds an answer a call reads: more, and it walks the whole
// tree.
const maxAnswer = 64 << 20

// ask asks tree's keeper what changed since p: the directories, and the
// point the index is at once they are walked. whole is true where the
// keeper says the whole tree must be walked; ok is false where there is no
// keeper to ask.
func (h *history) ask(tree string, p watchPoint) (d *dirty, next watchPoint, ok bool) {
	c, err := net.DialTimeout("unix", socketName(h.dir, tree), askTimeout)
	if err != nil {
		return nil, p, false
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(askTimeout))
	if _, err := fmt.Fprintf(c, "ask %d %d\n", p.Gen, p.Seq); err != nil {
		return nil, p, false
	}
	r := bufio.NewReader(io.LimitReader(c, maxAnswer+1))
	line, err := r.ReadString('\n')
	if err != nil {
		return nil, p, false
	}
	var whole int
	next = p
	if _, err := fmt.Sscanf(line, "%d %d %d", &next.Gen, &next.Seq, &whole); err != nil {
		return nil, p, false
	}
	rest, err := io.ReadAll(r)
	if err != nil || len(rest) > maxAnswer {
		return nil, p, false
	}
	if whole == 1 {
		return nil, next, true
	}
	d = newDirty()
	for len(rest) > 0 {
		end := bytes.IndexByte(rest, 0)
		if end < 1 {
			return nil, p, false
		}
		d.add(string(rest[1:end]), rest[0] == 't')
		rest = rest[end+1:]
	}
	return d, next, true
}
