// Package keep is toolkit's one way to keep a helper in the background: a
// toolkit started detached (a session of its own, apart from the call's
// process tree, its standard files /dev/null), one for its lock file, which
// it holds locked while it lives and names itself in ("PID START
// STATE\tWHAT"), so that toolkit job lists them all and --stop-all stops
// them all, whatever they keep: a tree's history, a language server.
package keep

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"toolkit/internal/proc"
)

// Start starts toolkit with args as the helper whose lock file is lock,
// unless one holds it or this process started one a moment ago (one on
// its way may not hold it yet).
func Start(lock string, args ...string) error {
	startedMu.Lock()
	defer startedMu.Unlock()
	if at, ok := started[lock]; ok && time.Since(at) < 10*time.Second {
		return nil
	}
	if Held(lock) {
		return nil
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	null, err := proc.Nothing()
	if err != nil {
		return err
	}
	defer null.Close()
	_, err = proc.StartChild(proc.Child{Path: exe, Args: append([]string{"toolkit"}, args...), Dir: "/", Stdin: null, Stdout: null, Stderr: null, Session: true, Apart: true})
	if err == nil {
		started[lock] = time.Now()
	}
	return err
}

// started are when this process last started each helper, by its lock.
var (
	startedMu sync.Mutex
	started   = map[string]time.Time{}
)

// Held says a process holds the file name locked.
func Held(name string) bool {
	f, err := os.Open(name)
	if err != nil {
		return false
	}
	defer f.Close()
	if unix.Flock(int(f.Fd()), unix.LOCK_SH|unix.LOCK_NB) != nil {
		return true
	}
	_ = unix.Flock(int(f.Fd()), unix.LOCK_UN)
	return false
}

// Lock is a helper's lock file, held.
type Lock struct {
	f     *os.File
	start uint64
}

// Hold takes the lock file name for this process: nil where another
// process holds it (a helper lives already) or it cannot be made.
func Hold(name string) *Lock {
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil
	}
	if unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB) != nil {
		f.Close()
		return nil
	}
	self, _ := proc.Lookup(os.Getpid())
	return &Lock{f: f, start: self.Start}
}

// Say names the helper in its lock file: its state, and what it keeps.
func (l *Lock) Say(state, what string) {
	_ = l.f.Truncate(0)
	_, _ = l.f.WriteAt(fmt.Appendf(nil, "%d %d %s\t%s\n", os.Getpid(), l.start, state, what), 0)
}

// Close lets the lock go.
func (l *Lock) Close() { l.f.Close() }

// Helper is a helper as its lock file names it.
type Helper struct {
	Pid   int
	State string
	What  string
	start uint64
}

// List are the live helpers whose lock files match the glob pattern.
func List(pattern string) []Helper {
	names, _ := filepath.Glob(pattern)
	var out []Helper
	for _, name := range names {
		if !Held(name) {
			continue
		}
		b, _ := os.ReadFile(name)
		head, what, ok := strings.Cut(strings.TrimSuffix(string(b), "\n"), "\t")
		f := strings.SplitN(head, " ", 3)
		if !ok || len(f) != 3 {
			continue
		}
		h := Helper{State: f[2], What: what}
		h.Pid, _ = strconv.Atoi(f[0])
		h.start, _ = strconv.ParseUint(f[1], 10, 64)
		out = append(out, h)
	}
	return out
}

// Stop ends the helper, if it is still the process it was, and waits a
// moment for its end.
func (h Helper) Stop() {
	if !proc.StillAlive(h.Pid, h.start) {
		return
	}
	_ = unix.Kill(h.Pid, unix.SIGTERM)
	for range 100 {
		if !proc.StillAlive(h.Pid, h.start) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// OwnerEnv names the variable through which toolkit mcp tells the calls it
// runs, in it or as child toolkits, that it owns the helpers they start:
// they end with it ("PID START", as Owner says it).
const OwnerEnv = "TOOLKIT_OWNER"

// Owner is this process as a helper's owner: "PID START". A helper owned
// by a toolkit mcp ends with it.
func Owner() string {
	self, _ := proc.Lookup(os.Getpid())
	return fmt.Sprintf("%d %d", os.Getpid(), self.Start)
}

// OwnerGone says the owner ("PID START") no longer runs.
func OwnerGone(owner string) bool {
	var pid int
	var start uint64
	if _, err := fmt.Sscanf(owner, "%d %d", &pid, &start); err != nil {
		return false
	}
	return !proc.StillAlive(pid, start)
}

// SameUser says the peer of c runs as this process's user: a helper
// answers no one else.
func SameUser(c net.Conn) bool {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return false
	}
	rc, err := uc.SyscallConn()
	if err != nil {
		return false
	}
	var cred *unix.Ucred
	_ = rc.Control(func(fd uintptr) { cred, err = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED) })
	return err == nil && cred != nil && int(cred.Uid) == os.Getuid()
}
