package wait

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/bmatcuk/doublestar/v4"

	"toolkit/internal/history/watch"
	"toolkit/internal/outcome"
	"toolkit/internal/state"
	"toolkit/internal/text"
	"toolkit/internal/walk"
)

// tree is the directory a wait looks at, walked as grep walks it.
type tree struct {
	dir  string
	o    walk.Options
	skip string // the state directory, where it is inside the tree
}

func newTree(dir string, o walk.Options) *tree {
	return &tree{dir: dir, o: o, skip: skipOf(dir)}
}

// stat is what a file's stat said: a change of any of it is a write.
type stat struct {
	Mode  uint32 `json:"m"`
	Size  int64  `json:"s"`
	Mtime int64  `json:"t"`
	Ctime int64  `json:"c"`
	Ino   uint64 `json:"i"`
}

// snapshot is the tree's files (not directories) by path.
type snapshot map[string]stat

// watch watches the tree's directories, as its walk goes through them,
// and returns its files as that walk saw them: each directory is watched
// before its files are listed, so that nothing made after goes unseen.
func (t *tree) watch(ctx context.Context) (*watch.Watcher, snapshot, error) {
	var files snapshot
	w, err := watch.New(ctx, t.dir, watch.Options{Dirs: func(ctx context.Context, add func(string) bool) error {
		if !add("") {
			return nil
		}
		var err error
		files, err = t.walk(ctx, add)
		return err
	}, Skip: t.skip})
	return w, files, err
}

// skipOf is the state directory, where it is inside dir: what toolkit
// writes there (a wait's own cursor) is no change.
func skipOf(dir string) string {
	st, err := state.Dir()
	if err != nil {
		return ""
	}
	if rel, err := filepath.Rel(dir, st); err == nil && !strings.HasPrefix(rel, "..") && rel != "." {
		return filepath.ToSlash(rel)
	}
	return ""
}

// snapshot walks the tree: its files now.
func (t *tree) snapshot(ctx context.Context) (snapshot, error) { return t.walk(ctx, nil) }

// walk lists the tree's files; dir, when set, is told each directory
// before the walk goes into it, and says whether to go on.
func (t *tree) walk(ctx context.Context, dir func(rel string) bool) (snapshot, error) {
	out := snapshot{}
	var mu sync.Mutex
	_, err := walk.Dir(ctx, nil, t.dir, t.o, func(e walk.Entry) bool {
		if e.Type.IsDir() {
			return e.Path != t.skip && (dir == nil || dir(e.Path))
		}
		st, err := e.Stat()
		if err != nil {
			return true
		}
		mu.Lock()
		out[e.Path] = stat{Mode: st.Mode, Size: st.Size, Mtime: st.Mtim.Nano(), Ctime: st.Ctim.Nano(), Ino: st.Ino}
		mu.Unlock()
		return true
	})
	return out, err
}

// settle waits until the tree has been quiet for quiet (changes that
// close together are one; at most 2 s of them), then walks it.
func (t *tree) settle(ctx context.Context, moved <-chan struct{}, quiet time.Duration) snapshot {
	limit := time.After(2 * time.Second)
	for quiet > 0 {
		q := time.NewTimer(quiet)
		select {
		case <-moved:
			q.Stop()
			continue
		case <-q.C:
		case <-limit:
			q.Stop()
		case <-ctx.Done():
			q.Stop()
		}
		break
	}
	now, _ := t.snapshot(ctx)
	return now
}

// look looks at each condition, with the files as base and now: whether
// it holds, and why. It returns the moment a stable condition may hold,
// where one waits for quiet files (zero: none).
func (t *tree) look(conds []*cond, base, now snapshot) time.Time {
	var at time.Time
	for _, c := range conds {
		c.Held.Held, c.Why, c.changed = false, "", nil
		switch c.Kind {
		case "changed":
			c.changed = diff(base, now, c.glob)
			if len(c.changed) > 0 {
				c.Held.Held = true
				c.Why = list(c.changed)
			}
		case "stable":
			n, last := 0, int64(0)
			for p, st := range now {
				if doublestar.MatchUnvalidated(c.glob, p) {
					n++
					last = max(last, st.Mtime, st.Ctime)
				}
			}
			quietSince := time.Unix(0, last)
			switch {
			case n == 0:
			case time.Since(quietSince) >= c.stable:
				c.Held.Held = true
				c.Why = fmt.Sprintf("%s, none written for %s", text.Count(int64(n), "file"), words(time.Since(quietSince)))
			default:
				if m := quietSince.Add(c.stable); at.IsZero() || m.Before(at) {
					at = m
				}
			}
		case "exists", "deleted":
			_, err := os.Lstat(filepath.Join(t.dir, c.path))
			there := err == nil
			c.Held.Held = there == (c.Kind == "exists")
		case "job":
			_ = c.job.Refresh()
			switch {
			case c.until != nil && c.until.Matched():
				c.Held.Held, c.Why = true, "its output matched"
			case c.ends && !c.job.Running():
				c.Held.Held, c.Why = true, "it ended"
			}
		case "port":
			if listening(c.port, c.host) {
				c.Held.Held = true
			}
		}
	}
	return at
}

// diff is what changed from base to now among the files matching glob, in
// history's words: A, M, D, sorted by path.
func diff(base, now snapshot, glob string) []outcome.ChangedFile {
	var out []outcome.ChangedFile
	for p, st := range now {
		if !doublestar.MatchUnvalidated(glob, p) {
			continue
		}
		was, ok := base[p]
		switch {
		case !ok:
			out = append(out, outcome.ChangedFile{Path: p, Status: "A", Bytes: st.Size, Restorable: true})
		case was != st:
			out = append(out, outcome.ChangedFile{Path: p, Status: "M", Bytes: st.Size, Restorable: true})
		}
	}
	for p := range base {
		if _, ok := now[p]; !ok && doublestar.MatchUnvalidated(glob, p) {
			out = append(out, outcome.ChangedFile{Path: p, Status: "D", Restorable: true})
		}
	}
	slices.SortFunc(out, func(a, b outcome.ChangedFile) int { return strings.Compare(a.Path, b.Path) })
	return out
}

// list names changed files as history's lines do, at most 20.
func list(files []outcome.ChangedFile) string {
	var b strings.Builder
	for i, f := range files {
		if i == 20 {
			fmt.Fprintf(&b, " (+%d more)", len(files)-i)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(f.Status + " " + text.Escape(f.Path))
	}
	return b.String()
}

// listening says something listens on TCP port (on host, where given),
// as /proc/net/tcp and tcp6 say: no connection is made.
func listening(port int, host string) bool {
	var want net.IP
	if host != "" {
		if want = net.ParseIP(host); want == nil {
			if host == "localhost" {
				want = net.IPv4(127, 0, 0, 1)
			}
		}
	}
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n")[1:] {
			fields := strings.Fields(line)
			if len(fields) < 4 || fields[3] != "0A" { // LISTEN
				continue
			}
			addr, p, ok := strings.Cut(fields[1], ":")
			n, err := strconv.ParseUint(p, 16, 16)
			if !ok || err != nil || int(n) != port {
				continue
			}
			if want == nil || sameIP(addr, want) {
				return true
			}
		}
	}
	return false
}

// sameIP says /proc/net's hex address is ip, or listens on every address.
func sameIP(hexAddr string, ip net.IP) bool {
	raw := make([]byte, len(hexAddr)/2)
	for i := range raw {
		v, err := strconv.ParseUint(hexAddr[2*i:2*i+2], 16, 8)
		if err != nil {
			return false
		}
		raw[i] = byte(v)
	}
	// Each 4 bytes are a little-endian word.
	for i := 0; i+4 <= len(raw); i += 4 {
		raw[i], raw[i+1], raw[i+2], raw[i+3] = raw[i+3], raw[i+2], raw[i+1], raw[i]
	}
	got := net.IP(raw)
	return got.IsUnspecified() || got.Equal(ip)
}

// The cursors: each answer's files, kept in the state directory's wait/
// (the last maxCursors), by number.
const maxCursors = 8

type kept struct {
	Tree     string   `json:"tree"`
	Hidden   bool     `json:"hidden,omitempty"`
	NoIgnore bool     `json:"no_ignore,omitempty"`
	Files    snapshot `json:"files"`
}

func cursorDir() (string, error) {
	st, err := state.Dir("wait")
	if err != nil {
		return "", err
	}
	return filepath.Join(st, "wait"), nil
}

// loadCursor is the files a cursor kept, for the same tree and rules.
func loadCursor(n int64, t *tree) (snapshot, error) {
	dir, err := cursorDir()
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(filepath.Join(dir, strconv.FormatInt(n, 10)+".json"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, errors.New("no such cursor (a wait keeps its last 8)")
	}
	if err != nil {
		return nil, err
	}
	var k kept
	if err := json.Unmarshal(b, &k); err != nil {
		return nil, errors.New("it does not read back")
	}
	if k.Tree != t.dir || k.Hidden != t.o.Hidden || k.NoIgnore != t.o.NoIgnore {
		return nil, fmt.Errorf("it was given for %s, with other rules", k.Tree)
	}
	return k.Files, nil
}

// saveCursor keeps now as a new cursor, and lets the oldest go.
func saveCursor(t *tree, now snapshot) (int64, error) {
	dir, err := cursorDir()
	if err != nil {
		return 0, err
	}
	lock, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return 0, err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return 0, err
	}
	b, _ := os.ReadFile(filepath.Join(dir, "seq"))
	n, _ := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	n++
	if err := os.WriteFile(filepath.Join(dir, "seq"), []byte(strconv.FormatInt(n, 10)+"\n"), 0o600); err != nil {
		return 0, err
	}
	data, err := json.Marshal(kept{Tree: t.dir, Hidden: t.o.Hidden, NoIgnore: t.o.NoIgnore, Files: now})
	if err != nil {
		return 0, err
	}
	tmp := filepath.Join(dir, strconv.FormatInt(n, 10)+".tmp")
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return 0, err
	}
	if err := os.Rename(tmp, filepath.Join(dir, strconv.FormatInt(n, 10)+".json")); err != nil {
		return 0, err
	}
	os.Remove(filepath.Join(dir, strconv.FormatInt(n-maxCursors, 10)+".json"))
	return n, nil
}

// answer is the text of a wait: what it saw, then one line that says how
// long it waited, what fired, and its cursor.
func answer(d Details, conds []*cond, all bool, notes []string) string {
	var b strings.Builder
	for _, n := range notes {
		b.WriteString(n + "\n")
	}
	var what []string
	for _, c := range conds {
		if !c.Held.Held && !all {
			continue
		}
		s := c.Kind
		switch c.Kind {
		case "changed":
			if c.Why != "" {
				s += " — " + c.Why
			}
		case "job", "port", "exists", "deleted":
			s += " " + text.Escape(c.What)
			if c.Why != "" {
				s += ": " + c.Why
			}
		default:
			s += " " + text.Escape(c.What)
			if c.Why != "" {
				s += " (" + c.Why + ")"
			}
		}
		if all && !c.Held.Held {
			s += " (not yet)"
		}
		what = append(what, s)
	}
	line := strings.Join(what, "; ")
	if !d.Fired {
		line = "nothing fired"
		if all && len(what) > 0 {
			line += " (" + strings.Join(what, "; ") + ")"
		}
	}
	fmt.Fprintf(&b, "[waited %s: %s · cursor %d]\n", words(time.Duration(d.WaitedMS)*time.Millisecond), line, d.Cursor)
	return b.String()
}

// words says a wait's length: "3.2 s", "60 s".
func words(d time.Duration) string {
	if d >= time.Minute {
		return fmt.Sprintf("%d s", int(d.Round(time.Second).Seconds()))
	}
	return strings.TrimSuffix(strconv.FormatFloat(d.Seconds(), 'f', 1, 64), ".0") + " s"
}
