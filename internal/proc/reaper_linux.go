package proc

import (
	"bytes"
	"math"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// BecomeSubreaper makes orphaned descendants of this process its children,
// where the kernel lets it. Where it refuses (qemu-user runs an image of
// another architecture, and knows no PR_SET_CHILD_SUBREAPER), commands run
// all the same, their process group stopped as ever: what is lost is an
// orphan that leaves its group, which may outlive the call. SubreaperRefused
// says so.
func BecomeSubreaper() {
	subreaper.once.Do(func() {
		set := func() error { return unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) }
		if TestHookSubreaper != nil {
			set = TestHookSubreaper
		}
		subreaper.err = set()
	})
}

// SubreaperRefused is why this process could not become a subreaper, or
// nil: "[toolkit cannot adopt orphans here (PR_SET_CHILD_SUBREAPER: invalid
// argument): a process that leaves its group may outlive the call]".
func SubreaperRefused() error {
	BecomeSubreaper()
	return subreaper.err
}

// SubreaperNote is the line that says a refused subreaper, "" where none
// was refused.
func SubreaperNote() string {
	if err := SubreaperRefused(); err != nil {
		return "[toolkit cannot adopt orphans here (PR_SET_CHILD_SUBREAPER: " + err.Error() + "): a process that leaves its group may outlive the call]"
	}
	return ""
}

// TestHookSubreaper, when set by a test before the first command starts,
// stands for the prctl that makes this process a subreaper (a refusal, as
// under qemu-user).
var TestHookSubreaper func() error

var subreaper struct {
	once sync.Once
	err  error
}

// The reaper: with the subreaper on, orphans become toolkit's children, and
// their zombies must be collected. os/exec waits for the children it started;
// the reaper waits for every other child, and never for a started one. Start
// holds the lock across cmd.Start, so the reaper never sees a started child
// before it is registered.
var reaper struct {
	sync.Mutex
	started map[int]bool
	apart   map[int]bool // started children whose trees belong to no command of this process
	once    sync.Once
}

// Apart says that cmd, started with Start, heads a tree of its own (a job's
// keeper): a Tree of this process leaves it and its descendants out, so that
// stopping one command, which stops every descendant, never stops a job
// another call started. Done forgets it.
func Apart(cmd *exec.Cmd) {
	reaper.Lock()
	defer reaper.Unlock()
	if reaper.apart == nil {
		reaper.apart = make(map[int]bool)
	}
	reaper.apart[cmd.Process.Pid] = true
}

// Start starts cmd as a child whose status os/exec will collect, and makes
// sure the reaper leaves it alone until Done is called.
func Start(cmd *exec.Cmd) error {
	Caught()
	beginReaping()
	reaper.Lock()
	defer reaper.Unlock()
	if err := cmd.Start(); err != nil {
		return err
	}
	if reaper.started == nil {
		reaper.started = make(map[int]bool)
	}
	reaper.started[cmd.Process.Pid] = true
	return nil
}

// Done says cmd's status has been collected (cmd.Wait returned).
func Done(cmd *exec.Cmd) {
	reaper.Lock()
	delete(reaper.started, cmd.Process.Pid)
	delete(reaper.apart, cmd.Process.Pid)
	reaper.Unlock()
}

// beginReaping starts the reaper, once, in a goroutine of its own: Start
// need not wait for SIGCHLD to be caught (a round trip to the runtime's
// signal thread), since the reaper's first look, once it is, collects the
// orphans that ended before.
func beginReaping() {
	reaper.once.Do(func() {
		go func() {
			ch := make(chan os.Signal, 1)
			signal.Notify(ch, syscall.SIGCHLD)
			reapOrphans()
			for range ch {
				reapOrphans()
			}
		}()
	})
}

// reapOrphans collects every zombie child that os/exec is not waiting for.
// It looks without the lock and takes it only to check and collect one: Start
// registers a child before it lets go of the lock, so a child seen here and
// found unregistered under the lock is not one os/exec waits for. A child
// in this process's own group is left alone: the orphans are the commands'
// descendants, each command in a group of its own, and a child os/exec
// started without Start (a test's git, say) is in this one, its status
// its caller's (taken by the reaper, its caller's Wait failed with "no
// child processes").
func reapOrphans() {
	if !zombieChild() {
		// The common SIGCHLD: a command's shell, collected by os/exec
		// already. No list of children is read (a read of /proc for each
		// of toolkit's threads).
		return
	}
	own := syscall.Getpgrp()
	for _, pid := range children() {
		info, ok := readStat(pid, make([]byte, 512))
		if !ok || info.State != 'Z' || info.PGID == own {
			continue
		}
		reaper.Lock()
		if !reaper.started[pid] {
			var ws syscall.WaitStatus
			_, _ = syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
		}
		reaper.Unlock()
	}
}

// zombieChild says whether a child of this process has ended and waits to
// be collected: waitid with WNOWAIT, which collects none.
func zombieChild() bool {
	var info unix.Siginfo
	err := unix.Waitid(unix.P_ALL, 0, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil)
	// With WNOHANG and none waiting, the kernel leaves si_signo 0.
	return err == nil && info.Signo == int32(unix.SIGCHLD)
}

// children lists this process's children: from /proc/self/task/*/children
// when the kernel has it (cheap), else from a scan of every process.
func children() []int {
	tasks, _ := os.ReadDir("/proc/self/task")
	var out []int
	found := false
	for _, task := range tasks {
		b, err := os.ReadFile("/proc/self/task/" + task.Name() + "/children")
		if err != nil {
			continue
		}
		found = true
		for f := range bytes.FieldsSeq(b) {
			if pid, err := strconv.Atoi(string(f)); err == nil {
				out = append(out, pid)
			}
		}
	}
	if found {
		return out
	}
	procs, err := Snapshot()
	if err != nil {
		return nil
	}
	self := os.Getpid()
	for pid, p := range procs {
		if p.PPID == self {
			out = append(out, pid)
		}
	}
	return out
}

// Harden readies this process for the hosts that start it: descriptors it
// was given above stderr are closed on exec (a host's pipe must not reach the
// command, or a drain that outlives the call); a write to an output that was
// closed returns an error (EPIPE) instead of killing toolkit with SIGPIPE
// (from when Caught returns: the catching goes on beside the start, and
// what writes an outcome or starts a command waits for it: cmdline.Exit,
// toolkit call and mcp, Start; help text written before it may still end
// toolkit by SIGPIPE, as a reader that went away would have it);
// and, as any user but root, the process is not dumpable, so that a command
// cannot open toolkit's own descriptors through /proc/PPID/fd (its stdout,
// to forge an answer). Root may still: it passes every check of /proc.
func Harden() {
	if err := unix.CloseRange(3, math.MaxUint32, unix.CLOSE_RANGE_CLOEXEC); err != nil {
		// Before Linux 5.11: each descriptor /proc lists, or the first 1024.
		fds := []int{}
		if names, err := os.ReadDir("/proc/self/fd"); err == nil {
			for _, n := range names {
				if fd, err := strconv.Atoi(n.Name()); err == nil && fd > 2 {
					fds = append(fds, fd)
				}
			}
		} else {
			for fd := 3; fd < 1024; fd++ {
				fds = append(fds, fd)
			}
		}
		for _, fd := range fds {
			unix.CloseOnExec(fd)
		}
	}
	// Catching SIGPIPE and the stop signals, and the reaper's SIGCHLD,
	// begins beside the rest of the start: Caught and Start wait for it.
	beginCatching()
	beginReaping()
	if os.Geteuid() != 0 {
		_ = unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
	}
}
