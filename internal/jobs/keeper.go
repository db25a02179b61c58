package jobs

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"toolkit/internal/proc"
)

// KeeperName is the hidden command a keeper runs as: toolkit job-keeper DIR.
// It finds what to run in DIR/job.json; fd 3 is where it says it started
// ("ok", or why not), and fd 4, for an adopted job, is the output pipe.
const KeeperName = "job-keeper"

// The terminal a job with tty gets: wide enough that little wraps.
// DefaultRows and DefaultCols are a job's terminal's size when its call
// gives none; MaxRows and MaxCols bound what a call may give.
const (
	DefaultRows, DefaultCols = 40, 160
	MaxRows, MaxCols         = 1000, 1000
)

// keeper is the state of one keeper process.
type keeper struct {
	dir    string
	spec   Spec
	status Status
	log    *os.File
	logged int64 // bytes in the log
	maxLog int64 // MaxLog, but in tests

	// What copyOutput counts, read by the loop for the status.
	total   atomic.Int64 // bytes the job wrote
	logFull atomic.Bool
	// copying is held by copyOutput from a read of the output to the end of
	// its write to the log: with it held and the output empty, the log
	// holds everything the job wrote (drained).
	copying sync.Mutex
	// slowCopy delays each write to the log: a test's stand-in for a
	// keeper starved of CPU (TOOLKIT_TEST_SLOW_KEEPER).
	slowCopy time.Duration

	running *proc.Running // the command; nil for an adopted job
	adopted *proc.Tree    // an adopted job's processes, as they were handed over
	out     *os.File      // the output pipe, or the terminal's master
	input   *os.File      // the command's stdin pipe, or the master; nil for an adopted job
}

// Message is what a look sends a keeper through its FIFO, one JSON line
// each: input for the command, the end of it, and a request to say when
// the log holds all the job has written (Drain: the keeper writes the
// number to the job's "drained" file then).
type Message struct {
	Input      *string `json:"input,omitempty"`
	CloseStdin bool    `json:"close_stdin,omitempty"`
	Drain      int64   `json:"drain,omitempty"`
}

// StopSignal asks a keeper to stop its job, as a timeout does.
const StopSignal = syscall.SIGUSR1

// RunKeeper is the keeper: it starts the job (or takes over an adopted
// one's output), and looks after it until it has ended. It returns the
// keeper's exit status.
func RunKeeper(dir string) int {
	ready := os.NewFile(3, "ready")
	k := &keeper{dir: dir, maxLog: MaxLog}
	k.slowCopy, _ = time.ParseDuration(os.Getenv("TOOLKIT_TEST_SLOW_KEEPER"))
	if err := k.start(); err != nil {
		fmt.Fprintf(ready, "%s", err)
		ready.Close()
		k.status.State, k.status.Error, k.status.Ended = Ended, err.Error(), time.Now()
		_ = writeJSON(filepath.Join(dir, "status.json"), k.status)
		return 1
	}
	_, _ = io.WriteString(ready, "ok")
	ready.Close()
	k.run()
	return 0
}

// start reads the spec, opens the log and the FIFO, and starts the command.
func (k *keeper) start() error {
	if err := readJSON(filepath.Join(k.dir, "job.json"), &k.spec); err != nil {
		return fmt.Errorf("the job's record: %w", err)
	}
	proc.BecomeSubreaper() // where refused, the job runs all the same
	self, _ := proc.Lookup(os.Getpid())
	k.status = Status{State: Running, Keeper: os.Getpid(), KeeperStart: self.Start}
	var err error
	if k.log, err = os.OpenFile(filepath.Join(k.dir, "log"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600); err != nil {
		return err
	}
	if k.spec.Adopted {
		// Non-blocking, so that the poller reads it and a deadline ends
		// the reading (os/exec handed it over blocking).
		_ = unix.SetNonblock(4, true)
		k.out = os.NewFile(4, "output")
		k.status.Pipe, _ = proc.PipeID(k.out)
		k.adopted = &proc.Tree{Roots: map[int]uint64{}}
		for _, pid := range k.spec.Pids {
			if info, ok := proc.Lookup(pid); ok {
				k.adopted.Roots[pid] = info.Start
			}
		}
	} else if err := k.startCommand(); err != nil {
		return err
	}
	return writeJSON(filepath.Join(k.dir, "status.json"), k.status)
}

// startCommand starts the command in a session of its own, on a pipe or a
// terminal. Its environment is the keeper's own: the one the job was
// started with.
func (k *keeper) startCommand() error {
	spec := proc.Spec{Script: k.spec.Command, Shell: k.spec.Shell, Dir: k.spec.Cwd, Input: true, TTY: k.spec.TTY, Rows: DefaultRows, Cols: DefaultCols, Prefix: k.spec.Prefix}
	if k.spec.Rows > 0 {
		spec.Rows = uint16(min(k.spec.Rows, MaxRows))
	}
	if k.spec.Cols > 0 {
		spec.Cols = uint16(min(k.spec.Cols, MaxCols))
	}
	r, err := proc.Launch(spec)
	if err != nil {
		return fmt.Errorf("cannot start %s: %w", cmp.Or(k.spec.Shell, proc.DefaultShell), err)
	}
	k.running, k.out, k.input = r, r.Out, r.In
	if k.spec.TTY {
		k.status.Input = r.Terminal
	} else {
		k.status.Input, _ = proc.PipeID(r.In)
		k.status.Pipe, _ = proc.PipeID(r.Out)
	}
	k.status.Leader = r.Cmd.Process.Pid
	if info, ok := proc.Lookup(r.Cmd.Process.Pid); ok {
		k.status.LeaderStart = info.Start
	}
	return nil
}

// run looks after the job until it has ended: its output to the log,
// messages from the FIFO, its end, its lifetime, and signals to the keeper.
func (k *keeper) run() {
	outDone := make(chan struct{})
	go k.copyOutput(outDone)

	var exited <-chan *os.ProcessState // nil, never ready, for an adopted job
	tree := k.adopted
	if k.running != nil {
		exited, tree = k.running.Exited, k.running.Tree
	}
	// What the job uses, and its limits, as for a shell call: an adopted
	// job's are those of the call that left it.
	sv := proc.Supervise(context.Background(), proc.Supervision{Tree: tree, Exited: exited, Limits: k.spec.Limits,
		Lifetime: time.Duration(k.spec.Lifetime), Started: k.spec.Started})

	if k.input != nil {
		// Opened for writing too, the FIFO never reads as ended when a look
		// that wrote to it closes it. A command that does not read its
		// input holds up only the writer, and the looks that write.
		if fifo, err := os.OpenFile(filepath.Join(k.dir, "in"), os.O_RDWR, 0); err == nil {
			defer fifo.Close()
			msgs := make(chan Message)
			go readMessages(fifo, msgs)
			go k.writeInput(msgs)
		}
	}

	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, StopSignal)
	defer proc.Listen(sigs)()

	stop := func(why *proc.Cause) {
		if !sv.Stopping() {
			k.status.Stopped = why
			sv.Begin(k.stopAll)
		}
	}
	var leaderEnd *os.ProcessState
	stopped := sv.Stopped()
	leaderDone := k.running == nil
	outputDone := false
	for !(leaderDone && outputDone) {
		select {
		case why := <-sv.Causes():
			stop(why)
		case st := <-sv.Exited():
			leaderDone, leaderEnd = true, st
			ws, _ := st.Sys().(syscall.WaitStatus)
			w := uint32(ws)
			k.status.Wait, k.status.Exited = &w, time.Now()
			if k.spec.SessionFile != "" {
				_, _ = FinishSession(k.spec.SessionFile)
			}
			k.writeStatus()
		case <-outDone:
			outputDone, outDone = true, nil
		case s := <-sigs:
			if s == StopSignal {
				why := &proc.Cause{Kind: proc.Asked}
				_ = readJSON(filepath.Join(k.dir, "stop"), why)
				stop(why)
			} else {
				stop(&proc.Cause{Kind: proc.Signalled, By: unix.SignalName(s.(syscall.Signal)), Whom: "its keeper"})
			}
		case <-stopped:
			stopped = nil
			if !outputDone {
				// Nothing of the job is left to write: what it wrote is
				// read to the end, or for a moment where something outside
				// it holds the pipe.
				_ = k.out.SetReadDeadline(time.Now().Add(time.Second))
			}
		}
	}
	res, usage := sv.End(leaderEnd)
	if sv.Stopping() {
		k.status.Killed, k.status.Left = res.Killed, res.Left
	}
	k.status.Resources = usage.Resources()
	if k.running != nil {
		k.running.Close()
	} else {
		k.out.Close()
	}
	k.log.Close()
	os.Remove(filepath.Join(k.dir, "in"))
	k.status.State, k.status.Ended, k.status.OutputBytes = Ended, time.Now(), k.total.Load()
	k.writeStatus()
}

// stopAll stops the job: its whole tree, or for an adopted job, every
// process that still holds its output, and the processes handed over and
// their descendants.
func (k *keeper) stopAll() proc.StopResult {
	grace := time.Duration(k.spec.Grace)
	if k.running != nil {
		return k.running.Tree.Stop(grace)
	}
	return proc.StopFound(func() []int {
		found := append(proc.HoldersOf(proc.Others(), k.status.Pipe), k.adopted.Members()...)
		slices.Sort(found)
		return slices.Compact(found)
	}, grace)
}

// copyOutput appends the job's output to the log, up to MaxLog, and reads
// on past it so that the job never blocks on a full pipe. Each read and its
// write to the log happen under k.copying, so that drained can tell that
// nothing read is still on its way to the log.
func (k *keeper) copyOutput(done chan<- struct{}) {
	defer close(done)
	rc, err := k.out.SyscallConn()
	if err != nil {
		return
	}
	// Non-blocking, so that a read never waits holding k.copying (a
	// terminal's master is left blocking by the ioctls that size it); the
	// poller waits instead.
	_ = rc.Control(func(fd uintptr) { _ = unix.SetNonblock(int(fd), true) })
	buf := make([]byte, 64<<10)
	for {
		var n int
		var rerr error
		err := rc.Read(func(fd uintptr) bool {
			k.copying.Lock()
			defer k.copying.Unlock()
			n, rerr = unix.Read(int(fd), buf)
			if rerr == unix.EAGAIN {
				return false // wait until it is readable
			}
			if n > 0 {
				time.Sleep(k.slowCopy)
				k.append(buf[:n])
			}
			return true
		})
		switch {
		case err != nil: // the read deadline, or the output closed
			return
		case rerr == unix.EINTR:
		case rerr != nil || n == 0:
			// EOF, or EIO from a terminal whose every user has gone.
			return
		}
	}
}

// append writes what the job wrote to the log, up to MaxLog.
func (k *keeper) append(b []byte) {
	k.total.Add(int64(len(b)))
	if k.logged >= k.maxLog {
		return
	}
	m := min(int64(len(b)), k.maxLog-k.logged)
	w, _ := k.log.Write(b[:m])
	k.logged += int64(w)
	if k.logged >= k.maxLog {
		_, _ = fmt.Fprintf(k.log, "\n[toolkit: the output went on; this log keeps its first %d bytes]\n", k.maxLog)
		k.logFull.Store(true)
	}
}

// drained waits, up to a second, until the log holds everything the job
// has written: no byte waits in its output, and none read is on its way to
// the log. It reports whether that came.
func (k *keeper) drained() bool {
	deadline := time.Now().Add(time.Second)
	for {
		pending := -1 // a copy in flight
		if k.copying.TryLock() {
			pending = 0
			if rc, err := k.out.SyscallConn(); err == nil {
				_ = rc.Control(func(fd uintptr) { pending = proc.Unread(int(fd)) })
			}
			k.copying.Unlock()
		}
		if pending == 0 {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// writeInput passes the looks' input to the command, in the order it came,
// and ends it when asked.
func (k *keeper) writeInput(msgs <-chan Message) {
	for m := range msgs {
		if m.Drain != 0 {
			if k.drained() {
				_ = writeJSON(filepath.Join(k.dir, "drained"), m.Drain)
			}
			continue
		}
		if m.Input != nil && k.input != nil {
			_, _ = io.WriteString(k.input, *m.Input)
		}
		if m.CloseStdin && k.input != nil {
			if k.spec.TTY {
				// A terminal's end of input is its EOF character.
				_, _ = k.input.Write([]byte{4})
			} else {
				k.input.Close()
				k.input = nil
			}
		}
	}
}

func (k *keeper) writeStatus() {
	k.status.LogFull = k.logFull.Load()
	_ = writeJSON(filepath.Join(k.dir, "status.json"), k.status)
}

// readMessages reads JSON lines from the FIFO.
func readMessages(f io.Reader, out chan<- Message) {
	r := bufio.NewReaderSize(f, 64<<10)
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 {
			var m Message
			if json.Unmarshal(line, &m) == nil {
				out <- m
			}
		}
		if err != nil {
			return
		}
	}
}
