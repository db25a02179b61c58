package jobs

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"golang.org/x/sys/unix"

	"toolkit/internal/proc"
)

// Job is a job's record, as read from its directory.
type Job struct {
	ID     string
	Dir    string
	Spec   Spec
	Status Status
}

// Log is the path of the job's log.
func (j *Job) Log() string { return filepath.Join(j.Dir, "log") }

// Marker is the environment entry every process of a job starts with, by
// which what is left of a job whose keeper died is found: the job's
// directory, which names its state directory too, so that two state
// directories' jobs of the same id are never taken for each other.
func Marker(dir string) string { return "TOOLKIT_JOB=" + dir }

// Start makes a record for spec and starts its keeper, with env as the
// command's environment, and returns the job once the keeper has started
// the command (or says why it could not). For an adopted job, output is
// the pipe the keeper takes over.
func Start(spec Spec, env []string, output *os.File) (*Job, error) {
	state, err := Dir()
	if err != nil {
		return nil, err
	}
	Sweep(state)
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("cannot find toolkit's own binary: %w", err)
	}
	jobs := filepath.Join(state, "jobs")
	id, err := newID(jobs)
	if err != nil {
		return nil, fmt.Errorf("cannot make a job's record in %s: %w", jobs, err)
	}
	j := &Job{ID: id, Dir: filepath.Join(jobs, id)}
	spec.ID = id
	if spec.Started.IsZero() {
		spec.Started = time.Now()
	}
	j.Spec = spec
	fail := func(err error) (*Job, error) {
		os.RemoveAll(j.Dir)
		return nil, err
	}
	if err := writeJSON(filepath.Join(j.Dir, "job.json"), spec); err != nil {
		return fail(err)
	}
	if !spec.Adopted {
		if err := unix.Mkfifo(filepath.Join(j.Dir, "in"), 0o600); err != nil {
			return fail(fmt.Errorf("cannot make the job's input FIFO: %w", err))
		}
	}
	log, err := os.OpenFile(j.Log(), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fail(err)
	}
	log.Close()

	null, err := proc.Nothing()
	if err != nil {
		return fail(err)
	}
	defer null.Close()
	ready, readyW, err := os.Pipe()
	if err != nil {
		return fail(err)
	}
	defer ready.Close()
	files := []*os.File{readyW}
	if output != nil {
		files = append(files, output)
	}
	// A session of its own: neither a signal to the caller's process group
	// nor the end of its terminal reaches the keeper. Collected if it ends
	// while the caller runs; after that, by whoever inherits it.
	keeper, err := proc.StartChild(proc.Child{
		Path: exe, Args: []string{"toolkit", KeeperName, j.Dir}, Env: append(slices.Clip(env), Marker(j.Dir)), Dir: "/",
		Stdin: null, Stdout: null, Stderr: null, ExtraFiles: files, Session: true, Apart: true,
	})
	readyW.Close()
	if err != nil {
		return fail(fmt.Errorf("cannot start the job's keeper: %w", err))
	}
	// The command may stop its keeper before the keeper says it started
	// (kill -STOP $PPID): the keeper is continued while it is waited for.
	stopped := make(chan struct{})
	go func() {
		for {
			select {
			case <-stopped:
				return
			case <-time.After(100 * time.Millisecond):
				keeper.Signal(syscall.SIGCONT)
			}
		}
	}()
	_ = ready.SetReadDeadline(time.Now().Add(10 * time.Second))
	said, err := io.ReadAll(ready)
	close(stopped)
	switch {
	case err != nil:
		keeper.Signal(syscall.SIGKILL)
		return fail(fmt.Errorf("the job's keeper did not start: %w", err))
	case string(said) != "ok":
		if len(said) == 0 {
			said = []byte("it ended without a word")
		}
		return fail(errors.New(string(said)))
	}
	if err := readJSON(filepath.Join(j.Dir, "status.json"), &j.Status); err != nil {
		return nil, err
	}
	return j, nil
}

// Open reads the record of job id. A job whose keeper died is stopped
// here, and its record says so.
func Open(id string) (*Job, error) {
	if !ValidID(id) {
		return nil, ErrNoJob
	}
	state, err := Dir()
	if err != nil {
		return nil, err
	}
	j := &Job{ID: id, Dir: filepath.Join(state, "jobs", id)}
	if err := readJSON(filepath.Join(j.Dir, "job.json"), &j.Spec); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, ErrNoJob
		}
		return nil, err
	}
	return j, j.Refresh()
}

// Refresh reads the job's status again. A keeper that is gone while its
// job runs died: what is left of the job is stopped and the status written
// as ended.
func (j *Job) Refresh() error {
	if err := readJSON(filepath.Join(j.Dir, "status.json"), &j.Status); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			// The keeper has not written it yet, or never will.
			j.Status = Status{State: Running}
			return nil
		}
		return err
	}
	if j.Status.State != Running || j.keeperAlive() {
		return nil
	}
	// Read once more: the keeper may have ended between the two reads.
	if err := readJSON(filepath.Join(j.Dir, "status.json"), &j.Status); err != nil || j.Status.State != Running {
		return err
	}
	j.stopOrphans()
	j.Status.State, j.Status.Stopped, j.Status.Ended = Ended, &proc.Cause{Kind: proc.KeeperDied}, time.Now()
	return writeJSON(filepath.Join(j.Dir, "status.json"), j.Status)
}

// keeperAlive reports whether the job's keeper is still the process it was.
func (j *Job) keeperAlive() bool {
	return proc.StillAlive(j.Status.Keeper, j.Status.KeeperStart)
}

// stopOrphans stops what is left of a job whose keeper died: the
// processes of its session, those that started with its marker, and those
// that hold its output pipe.
func (j *Job) stopOrphans() {
	find := func() []int {
		others := proc.Others()
		var found []int
		if j.Status.Leader != 0 {
			// The session is the job's only while its leader's pid names no
			// other process: a leader that is still there must be the one
			// that started (a pid reused is another's, and so its session).
			leader, there := proc.Lookup(j.Status.Leader)
			if procs, err := proc.Snapshot(); err == nil && (!there || leader.Start == j.Status.LeaderStart) {
				found = append(found, proc.InSession(procs, j.Status.Leader)...)
			}
		}
		found = append(found, proc.Marked(others, Marker(j.Dir))...)
		if j.Status.Pipe != "" {
			found = append(found, proc.HoldersOf(others, j.Status.Pipe)...)
		}
		slices.Sort(found)
		return slices.Compact(found)
	}
	res := proc.StopFound(find, time.Duration(j.Spec.Grace))
	j.Status.Killed, j.Status.Left = res.Killed, res.Left
}

// Running reports whether the job has not ended.
func (j *Job) Running() bool { return j.Status.State == Running }

// Members are the job's live processes: the keeper's descendants.
func (j *Job) Members() []int {
	procs, err := proc.Snapshot()
	if err != nil {
		return nil
	}
	return proc.Descendants(procs, j.Status.Keeper)
}

// WaitingForInput reports whether a process of the job is blocked reading
// its input.
func (j *Job) WaitingForInput() bool {
	if !j.Running() || j.Status.Input == "" {
		return false
	}
	return proc.ReadingInput(j.Members(), j.Status.Input)
}

// ErrEnded is input or a signal for a job that has ended.
var ErrEnded = errors.New("the job has ended")

// Send passes input to the job's stdin, or its terminal, and ends its
// input when closeStdin is set. It waits at most timeout for the keeper
// to take it: a command that does not read its input does not hold the
// caller up. It returns how many bytes of input were taken.
func (j *Job) Send(input string, closeStdin bool, timeout time.Duration) (int, error) {
	if !j.Running() {
		return 0, ErrEnded
	}
	if j.Spec.Adopted {
		return 0, errors.New("the job is what a command left running in the background: it has no input")
	}
	f, err := j.openInput(timeout)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	taken := 0
	const piece = 32 << 10 // in lines of their own: a message is a JSON line
	for len(input) > 0 || closeStdin {
		var m Message
		if len(input) > 0 {
			n := min(len(input), piece)
			for n < len(input) && n > 0 && !utf8.RuneStart(input[n]) {
				n--
			}
			s := input[:n]
			m.Input = &s
			input = input[n:]
		}
		if len(input) == 0 {
			m.CloseStdin, closeStdin = closeStdin, false
		}
		b, _ := json.Marshal(m)
		if _, err := f.Write(append(b, '\n')); err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				return taken, fmt.Errorf("the job is not reading its input: %d bytes of it were passed on", taken)
			}
			return taken, err
		}
		if m.Input != nil {
			taken += len(*m.Input)
		}
	}
	return taken, nil
}

// openInput opens the job's input FIFO for a message, locked so that two
// looks' messages never interleave, with writes bounded by timeout.
func (j *Job) openInput(timeout time.Duration) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(j.Dir, "in"), os.O_WRONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ENXIO) {
			return nil, ErrEnded
		}
		return nil, err
	}
	if err := lockFile(f, timeout); err != nil {
		f.Close()
		return nil, err
	}
	_ = f.SetWriteDeadline(time.Now().Add(timeout))
	return f, nil
}

// Drained asks the keeper to say when the job's log holds everything the
// job has written so far, and waits for that, up to timeout. A process
// seen blocked reading its input wrote what it wrote before it blocked:
// once drained, the log holds all of it.
func (j *Job) Drained(timeout time.Duration) bool {
	if j.Spec.Adopted || !j.Running() {
		return false
	}
	f, err := j.openInput(timeout)
	if err != nil {
		return false
	}
	n := time.Now().UnixNano()
	b, _ := json.Marshal(Message{Drain: n})
	_, err = f.Write(append(b, '\n'))
	f.Close()
	if err != nil {
		return false
	}
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(2 * time.Millisecond) {
		var got int64
		if readJSON(filepath.Join(j.Dir, "drained"), &got) == nil && got == n {
			return true
		}
	}
	return false
}

// lockFile takes an exclusive flock of f, trying until timeout.
func lockFile(f *os.File, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		err := syscall.Flock(int(fdOf(f)), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) || time.Now().After(deadline) {
			return fmt.Errorf("the job is busy with another call: %w", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// fdOf is f's descriptor, without os.File.Fd, which would make f blocking
// and stop its deadlines from working.
func fdOf(f *os.File) uintptr {
	var fd uintptr
	if rc, err := f.SyscallConn(); err == nil {
		_ = rc.Control(func(d uintptr) { fd = d })
	}
	return fd
}

// Signal sends sig to the job's process group, as a terminal's ^C does.
func (j *Job) Signal(sig syscall.Signal) error {
	if !j.Running() {
		return ErrEnded
	}
	if j.Status.Leader == 0 {
		return errors.New("the job is what a command left running in the background: it takes only stop")
	}
	// The leader's pid names the group only while the leader's session is
	// still the one it began.
	if info, ok := proc.Lookup(j.Status.Leader); !ok || info.SID != j.Status.Leader {
		if j.Status.Wait != nil {
			return errors.New("the job's command has ended; only stop reaches what it left")
		}
		return ErrEnded
	}
	return syscall.Kill(-j.Status.Leader, sig)
}

// Stop asks the keeper to stop the whole job, as a timeout does, and waits
// until it has (the grace and a little more at most). why is what the
// job's end will say stopped it (toolkit received SIGTERM); nil: asked.
func (j *Job) Stop(why *proc.Cause) error {
	if !j.Running() {
		return ErrEnded
	}
	if why != nil {
		_ = writeJSON(filepath.Join(j.Dir, "stop"), why)
	}
	if !j.keeperAlive() {
		return j.Refresh()
	}
	// A stop must not need the keeper's good will: a command may have
	// stopped its keeper (kill -STOP $PPID), so it is continued first, and
	// again while the stop runs; a keeper that still has not ended the job
	// in time is killed, and what is left of the job is stopped from here,
	// as for a keeper that died.
	_ = syscall.Kill(j.Status.Keeper, syscall.SIGCONT)
	if err := syscall.Kill(j.Status.Keeper, StopSignal); err != nil {
		return j.Refresh()
	}
	deadline := time.Now().Add(time.Duration(j.Spec.Grace) + 8*time.Second)
	for time.Now().Before(deadline) {
		if err := j.Refresh(); err != nil || !j.Running() {
			return err
		}
		_ = syscall.Kill(j.Status.Keeper, syscall.SIGCONT)
		time.Sleep(20 * time.Millisecond)
	}
	if j.keeperAlive() {
		_ = syscall.Kill(j.Status.Keeper, syscall.SIGKILL)
		for end := time.Now().Add(2 * time.Second); j.keeperAlive() && time.Now().Before(end); {
			time.Sleep(10 * time.Millisecond)
		}
	}
	if err := j.Refresh(); err != nil || !j.Running() {
		return err
	}
	return fmt.Errorf("job %s did not stop within %s", j.ID, time.Duration(j.Spec.Grace)+10*time.Second)
}

// List reads every job's record, oldest first.
func List() ([]*Job, error) {
	state, err := Dir()
	if err != nil {
		return nil, err
	}
	Sweep(state)
	entries, err := os.ReadDir(filepath.Join(state, "jobs"))
	if err != nil {
		return nil, err
	}
	var out []*Job
	for _, e := range entries {
		if j, err := Open(e.Name()); err == nil {
			out = append(out, j)
		}
	}
	slices.SortFunc(out, func(a, b *Job) int { return a.Spec.Started.Compare(b.Spec.Started) })
	return out, nil
}

// Sweep removes the records of jobs that ended more than Keep ago and whose
// end has been shown, and of those that never started.
func Sweep(state string) {
	jobs := filepath.Join(state, "jobs")
	entries, err := os.ReadDir(jobs)
	if err != nil {
		return
	}
	for _, e := range entries {
		dir := filepath.Join(jobs, e.Name())
		var st Status
		var seen Seen
		if err := readJSON(filepath.Join(dir, "status.json"), &st); err != nil {
			if fi, err := os.Stat(dir); err == nil && time.Since(fi.ModTime()) > Keep {
				os.RemoveAll(dir) // a keeper that never wrote its status
			}
			continue
		}
		_ = readJSON(filepath.Join(dir, "look.json"), &seen)
		if st.State == Ended && !seen.EndShown.IsZero() && time.Since(st.Ended) > Keep {
			os.RemoveAll(dir)
		}
	}
}

// OutputSize is how much the job has written: all of it once it ended
// (its log keeps MaxLog at most), else what its log holds.
func (j *Job) OutputSize() int64 {
	if j.Status.OutputBytes > 0 {
		return j.Status.OutputBytes
	}
	return logSize(j)
}

// Summary is a line of the list of jobs.
func (j *Job) Summary() string {
	state := "running"
	if !j.Running() {
		state = "ended"
	}
	size := j.OutputSize()
	cmd := strings.Join(strings.Fields(j.Spec.Command), " ")
	if len(cmd) > 60 {
		cmd = cmd[:57] + "..."
	}
	age := time.Since(j.Spec.Started).Round(time.Second)
	return fmt.Sprintf("%s  %-7s  %8s  %9d bytes  %s", j.ID, state, age, size, cmd)
}
