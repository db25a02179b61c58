package proc

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Limits fence a command's tree without cgroups: its resident memory,
// summed over its processes, and how many processes it has. 0 is no limit.
type Limits struct {
	MemoryBytes int64 `json:"memory_bytes,omitempty"`
	Pids        int   `json:"pids,omitempty"`
}

// Usage is what a tree used, as Watch saw it.
type Usage struct {
	PeakRSS       int64         // the tree's resident memory at its highest, in bytes
	ProcessesPeak int           // the most processes it had at once
	CPU           time.Duration // user and system time of its processes
	OOMKilled     bool          // the kernel's OOM killer killed one of them
}

// Resources are a Usage as toolkit's --json says it, for every command.
type Resources struct {
	PeakRSSBytes  int64 `json:"peak_rss_bytes"`
	CPUMS         int64 `json:"cpu_ms"`
	ProcessesPeak int   `json:"processes_peak"`
	OOMKilled     bool  `json:"oom_killed"`
}

// Resources is u for --json.
func (u Usage) Resources() *Resources {
	return &Resources{PeakRSSBytes: u.PeakRSS, CPUMS: u.CPU.Milliseconds(), ProcessesPeak: u.ProcessesPeak, OOMKilled: u.OOMKilled}
}

// OverLimit is why Watch stopped a tree.
type OverLimit struct {
	What      string // "memory" or "process"
	Limit     int64  // bytes, or processes
	Peak      int64
	Processes int // the tree's processes when it was over
}

func (e *OverLimit) Error() string {
	if e.What == "memory" {
		return fmt.Sprintf("memory limit %d MiB reached (peak %d MiB)", e.Limit>>20, (e.Peak+1<<20-1)>>20)
	}
	return fmt.Sprintf("process limit %d reached (%d at once)", e.Limit, e.Peak)
}

// Said is the stop for a note: "memory limit 64 MiB reached (peak 70 MiB);
// 2 processes stopped", as a shell call and a job's look both say it.
func (e *OverLimit) Said() string {
	if e.Processes == 1 {
		return e.Error() + "; 1 process stopped"
	}
	return fmt.Sprintf("%s; %d processes stopped", e, e.Processes)
}

// How often Watch looks: every WatchEvery at a limit's watch; every
// WatchIdleEvery when it only counts what the tree uses (a job's keeper
// watches for up to an hour, and its memory stays flat).
const (
	WatchEvery     = 100 * time.Millisecond
	WatchIdleEvery = time.Second
)

var pageSize = int64(os.Getpagesize())

// clockTicks is the unit of /proc's times (USER_HZ, 100 on every Linux
// toolkit runs on).
const clockTicks = 100

// A Watch samples a tree's processes from /proc every WatchEvery (or
// WatchIdleEvery, with no limit): their
// resident memory summed, their count and their CPU time. Over a limit,
// it calls over once, with an *OverLimit, and the caller stops the tree.
type Watch struct {
	t       *Tree
	lim     Limits
	over    func(error)
	stop    chan struct{}
	done    chan struct{}
	oom0    int64 // the kernel's OOM kills when the watch began
	mu      sync.Mutex
	usage   Usage
	cpu     map[int]uint64 // each process's last CPU time seen, in ticks
	tripped bool

	// What the last sample saw: every pid /proc listed, and the tree's.
	// A process outside the tree never enters it (only its own children
	// and orphans, reparented to this subreaper, do), so a sample reads
	// the stat of the tree's processes and of new pids only, and all of
	// them every fullEvery samples (a pid reused within one sample's
	// interval is then seen within a second).
	listed, before, members map[int]bool
	samples                 int
	// Kept from sample to sample: a keeper samples for an hour, and
	// should not make garbage ten times a second.
	procs        map[int]Info
	dirent, stat []byte
	names        []string
}

// fullEvery is how often a sample reads every process.
const fullEvery = 10

// StartWatch starts watching t. over may be nil when lim has no limit.
func StartWatch(t *Tree, lim Limits, over func(error)) *Watch {
	w := &Watch{t: t, lim: lim, over: over, stop: make(chan struct{}), done: make(chan struct{}), cpu: map[int]uint64{},
		listed: map[int]bool{}, before: map[int]bool{}, members: map[int]bool{}, procs: map[int]Info{}, dirent: make([]byte, 16<<10), stat: make([]byte, 512)}
	go w.run()
	return w
}

func (w *Watch) run() {
	defer close(w.done)
	// Here, not in StartWatch: a read of /proc/vmstat (50 µs) beside the
	// command's start, not before the call goes on. Stop reads it after
	// done.
	w.oom0 = oomKills()
	every := WatchIdleEvery
	if w.lim != (Limits{}) {
		every = WatchEvery
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-w.stop:
			return
		case <-tick.C:
			w.sample()
		}
	}
}

// sample looks at the tree once.
func (w *Watch) sample() {
	var err error
	if w.names, err = listProc(w.dirent, w.names[:0]); err != nil {
		return
	}
	full := w.samples%fullEvery == 0
	w.samples++
	w.before, w.listed = w.listed, w.before
	clear(w.listed)
	clear(w.procs)
	for _, name := range w.names {
		pid, err := strconv.Atoi(name)
		if err != nil {
			continue
		}
		w.listed[pid] = true
		if full || w.members[pid] || !w.before[pid] {
			if info, ok := readStat(pid, w.stat); ok {
				w.procs[pid] = info
			}
		}
	}
	members := w.t.members(w.procs)
	clear(w.members)
	for _, pid := range members {
		w.members[pid] = true
	}
	var rss int64
	w.mu.Lock()
	for _, pid := range members {
		p := w.procs[pid]
		rss += p.RSS * pageSize
		w.cpu[pid] = max(w.cpu[pid], p.CPU)
	}
	w.usage.PeakRSS = max(w.usage.PeakRSS, rss)
	w.usage.ProcessesPeak = max(w.usage.ProcessesPeak, len(members))
	var over *OverLimit
	switch {
	case w.tripped:
	case w.lim.MemoryBytes > 0 && rss > w.lim.MemoryBytes:
		over = &OverLimit{What: "memory", Limit: w.lim.MemoryBytes, Peak: rss, Processes: len(members)}
	case w.lim.Pids > 0 && len(members) > w.lim.Pids:
		over = &OverLimit{What: "process", Limit: int64(w.lim.Pids), Peak: int64(len(members)), Processes: len(members)}
	}
	if over != nil {
		w.tripped = true
	}
	w.mu.Unlock()
	if over != nil && w.over != nil {
		w.over(over)
	}
}

// Stop ends the watch and returns what the tree used. st, the leader's
// end, adds what the samples could not see: the leader's and its waited
// children's CPU time and peak memory (getrusage), which is all of a
// command shorter than WatchEvery.
func (w *Watch) Stop(st *os.ProcessState) Usage {
	close(w.stop)
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	u := w.usage
	var ticks uint64
	for _, t := range w.cpu {
		ticks += t
	}
	u.CPU = time.Duration(ticks) * time.Second / clockTicks
	if st != nil {
		if ru, ok := st.SysUsage().(*syscall.Rusage); ok {
			u.PeakRSS = max(u.PeakRSS, ru.Maxrss<<10)
			u.CPU = max(u.CPU, st.UserTime()+st.SystemTime())
		}
		// Killed by SIGKILL that toolkit did not send (or sh saying a
		// child was, 128+9), while the kernel's count of OOM kills rose.
		if ws, ok := st.Sys().(syscall.WaitStatus); ok && !w.tripped && (ws.Signaled() && ws.Signal() == syscall.SIGKILL || ws.Exited() && ws.ExitStatus() == 137) {
			u.OOMKilled = oomKills() > w.oom0
		}
	}
	u.ProcessesPeak = max(u.ProcessesPeak, 1)
	return u
}

// oomKills is the kernel's count of OOM kills since boot (/proc/vmstat's
// oom_kill), or 0 where it does not say. The file is read into a buffer
// that holds it whole, with plain system calls as readStat reads: the
// kernel works every counter out afresh for each read, and os.ReadFile
// reads a file of /proc 512 bytes at a time (4 KB here: 30 µs against 21,
// and the sum of each event's count over every CPU each time).
func oomKills() int64 {
	b, err := readProc("/proc/vmstat", make([]byte, 16<<10))
	if err != nil {
		return 0
	}
	_, rest, ok := bytes.Cut(b, []byte("\noom_kill "))
	if !ok {
		return 0
	}
	line, _, _ := bytes.Cut(rest, []byte("\n"))
	n, _ := strconv.ParseInt(string(line), 10, 64)
	return n
}

// readProc reads a file of /proc into buf, up to its end or as much as buf
// holds.
func readProc(path string, buf []byte) ([]byte, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	n := 0
	for n < len(buf) {
		m, err := unix.Read(fd, buf[n:])
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return nil, err
		case m == 0:
			return buf[:n], nil
		}
		n += m
	}
	return buf[:n], nil
}
