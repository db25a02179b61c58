package proc

import (
	"os"
	"sync/atomic"
	"syscall"
	"time"
)

// Tree is the process tree of the command this process runs, started in a
// session of its own with Leader as its first process.
type Tree struct {
	// Leader is the command's first process: its pid is also its session
	// and process group id.
	Leader int
	// Roots, when set, make the tree these processes (each while it is
	// the one that started at its start time) and their descendants, in
	// place of this process's: what a job's keeper adopted. Leader is 0.
	Roots map[int]uint64

	leaderGone atomic.Bool
}

// LeaderReaped says the leader's status was collected: its pid may now be
// reused, so it no longer names the leader.
func (t *Tree) LeaderReaped() { t.leaderGone.Store(true) }

// leaderAlive reports whether the leader is still running.
func (t *Tree) leaderAlive() bool { return !t.leaderGone.Load() && Alive(t.Leader) }

// Members returns the tree's live processes (zombies are not counted: they
// hold nothing and do nothing). Without /proc it returns nil.
func (t *Tree) Members() []int {
	procs, err := Snapshot()
	if err != nil {
		return nil
	}
	return t.members(procs)
}

func (t *Tree) members(procs map[int]Info) []int {
	self := os.Getpid()
	children := make(map[int][]int, len(procs))
	for pid, p := range procs {
		children[p.PPID] = append(children[p.PPID], pid)
	}
	var out []int
	seen := make(map[int]bool)
	reaper.Lock()
	for pid := range reaper.apart {
		seen[pid] = true // a keeper's tree is its job's, not this command's
	}
	reaper.Unlock()
	stack := append([]int(nil), children[self]...)
	if t.Roots != nil {
		stack = stack[:0]
		for pid, start := range t.Roots {
			if procs[pid].Start == start {
				stack = append(stack, pid)
			}
		}
	}
	for len(stack) > 0 {
		pid := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[pid] {
			continue
		}
		seen[pid] = true
		stack = append(stack, children[pid]...)
		if s := procs[pid].State; s != 'Z' && s != 'X' {
			out = append(out, pid)
		}
	}
	return out
}

// Signal sends sig to the tree's process group and to every member.
// It returns the members it found.
func (t *Tree) Signal(sig syscall.Signal) []int {
	_ = syscall.Kill(-t.Leader, sig)
	members := t.Members()
	for _, pid := range members {
		_ = syscall.Kill(pid, sig)
	}
	return members
}

// StopResult says how a Stop went.
type StopResult struct {
	// Killed says SIGKILL was needed: something outlived the grace period.
	Killed bool
	// Left counts processes still alive at the end (in uninterruptible sleep,
	// say); it is 0 unless something is badly wrong.
	Left int
}

// pollEvery is how often Stop looks at the tree while it waits.
const pollEvery = 10 * time.Millisecond

// Stop ends the whole tree: SIGTERM to every member, then, if any is still
// alive after grace, SIGKILL until none is. A process forked while this runs
// is found on the next look and signalled too.
func (t *Tree) Stop(grace time.Duration) StopResult {
	return t.stop(nil, grace)
}

// StopOnly is Stop for the members that pick keeps, and nothing else: not
// the process group, not the other members.
func (t *Tree) StopOnly(pick func(members []int) []int, grace time.Duration) StopResult {
	return t.stop(pick, grace)
}

func (t *Tree) stop(pick func([]int) []int, grace time.Duration) StopResult {
	targets := func() []int {
		if pick == nil {
			return t.Members()
		}
		return pick(t.Members())
	}
	group := t.Leader
	leaderAlive := func() bool { return pick == nil && t.leaderAlive() }
	if pick != nil {
		group = 0
	}
	if !haveProc() {
		// Without /proc, the process group is all that can be found: stop
		// it, and wait for it to be gone.
		group, leaderAlive = t.Leader, t.groupAlive
	}
	return stopFound(targets, group, leaderAlive, grace)
}

// StopFound stops the processes find returns, found again on each look, as
// Stop stops a tree: for processes that are not this one's descendants
// (those a job's keeper, now dead, looked after).
func StopFound(find func() []int, grace time.Duration) StopResult {
	return stopFound(find, 0, func() bool { return false }, grace)
}

// stopFound sends SIGTERM to what targets finds (and to the process group
// group, when not 0), again to each newcomer, and SIGKILL to what is left
// after grace.
func stopFound(targets func() []int, group int, leaderAlive func() bool, grace time.Duration) StopResult {
	signal := func(sig syscall.Signal, seen map[int]bool) []int {
		if group != 0 {
			_ = syscall.Kill(-group, sig)
		}
		now := targets()
		for _, pid := range now {
			if seen == nil || !seen[pid] {
				_ = syscall.Kill(pid, sig)
				if sig == syscall.SIGTERM {
					// A stopped process does not act on SIGTERM until it runs.
					_ = syscall.Kill(pid, syscall.SIGCONT)
				}
			}
			if seen != nil {
				seen[pid] = true
			}
		}
		return now
	}
	termed := make(map[int]bool)
	deadline := time.Now().Add(grace)
	for len(signal(syscall.SIGTERM, termed)) > 0 || leaderAlive() {
		if !time.Now().Before(deadline) {
			return StopResult{Killed: true, Left: killFound(signal, leaderAlive)}
		}
		time.Sleep(min(pollEvery, time.Until(deadline)))
	}
	return StopResult{}
}

// Kill sends SIGKILL to the whole tree until nothing in it is alive, and
// returns how many processes are left (normally 0).
func (t *Tree) Kill() int {
	alive := t.leaderAlive
	if !haveProc() {
		alive = t.groupAlive
	}
	return killFound(func(sig syscall.Signal, _ map[int]bool) []int { return t.Signal(sig) }, alive)
}

// groupAlive reports whether the tree's process group still has a live
// member, for when /proc cannot say. Zombies in it that are toolkit's to
// collect (orphans, with the subreaper) are collected first: once the leader
// is reaped, every waitable child left in its group is one.
func (t *Tree) groupAlive() bool {
	if t.leaderGone.Load() {
		for {
			var ws syscall.WaitStatus
			if pid, err := syscall.Wait4(-t.Leader, &ws, syscall.WNOHANG, nil); pid <= 0 || err != nil {
				break
			}
		}
	}
	return syscall.Kill(-t.Leader, 0) == nil
}

func killFound(signal func(syscall.Signal, map[int]bool) []int, leaderAlive func() bool) int {
	deadline := time.Now().Add(5 * time.Second)
	for {
		left := signal(syscall.SIGKILL, nil)
		if len(left) == 0 && !leaderAlive() {
			return 0
		}
		if time.Now().After(deadline) {
			return len(left)
		}
		time.Sleep(time.Millisecond)
	}
}
