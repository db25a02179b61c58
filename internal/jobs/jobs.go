// Package jobs keeps commands that outlive the call that started them,
// with no daemon: each job has a keeper, a small detached toolkit in a
// session of its own, the subreaper of the job's process tree, that holds
// the job's output pipe or terminal, appends what comes out to a log
// (MaxLog at most), writes the job's status to a file, takes input and
// signals from a FIFO, and ends the job when its lifetime is over.
//
// A job's record is a directory in the per-user state directory (Dir):
//
//	jobs/ID/job.json     what was started (Spec), written once
//	jobs/ID/status.json  how it goes (Status), replaced whole by the keeper
//	jobs/ID/log          the raw output
//	jobs/ID/in           the FIFO the keeper reads messages from
//	jobs/ID/look.json    how much of the output has been shown (Seen)
//	jobs/ID/lock         taken by whoever looks, so two looks never show the same output
//
// Every toolkit that looks at the jobs (toolkit job, toolkit shell starting
// one, toolkit mcp) sees the same records, whichever process started them.
// A record is removed once its end has been shown and it ended 10 minutes
// ago. A keeper that died (SIGKILL) is found by the next look: the record
// then says so, and what is left of the job is stopped.
package jobs

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"toolkit/internal/state"

	"toolkit/internal/proc"
)

// MaxLog bounds a job's log; the keeper reads on past it, so the job never
// blocks on a full pipe, and the status says the log is full.
const MaxLog = 256 << 20

// Keep is how long a finished job's record stays after its end was shown.
const Keep = 10 * time.Minute

// Spec is what a job runs, as it was started.
type Spec struct {
	ID       string    `json:"id"`
	Command  string    `json:"command"`
	Cwd      string    `json:"cwd,omitempty"`
	TTY      bool      `json:"tty,omitempty"`
	Rows     int       `json:"rows,omitempty"` // the terminal's size; 0 for the default
	Cols     int       `json:"cols,omitempty"`
	Session  string    `json:"session,omitempty"`
	Started  time.Time `json:"started"`
	Lifetime Duration  `json:"lifetime"` // the keeper stops the job after this long
	Grace    Duration  `json:"grace"`    // between SIGTERM and SIGKILL when it stops the job
	// Adopted: the job is what a shell call's command left holding its
	// output; the keeper was handed that pipe and started nothing.
	Adopted bool  `json:"adopted,omitempty"`
	Pids    []int `json:"pids,omitempty"` // adopted: the processes that held the output
	// SessionFile, when set, is where the command's shell saves its
	// directory and exported variables when it ends.
	SessionFile string `json:"session_file,omitempty"`
	// Prefix is the argv the command starts through (confine.Policy.Wrap);
	// Limits fence it, as a shell call's.
	Prefix []string    `json:"prefix,omitempty"`
	Limits proc.Limits `json:"limits,omitzero"`
	// Shell runs Command: "" for /bin/sh.
	Shell string `json:"shell,omitempty"`
	// Writable, for a command Landlock confines, is what it may write: a
	// look notes the paths it was denied outside it, as a shell call does.
	Writable []string `json:"writable,omitempty"`
}

// Duration is a time.Duration written as a number of milliseconds.
type Duration time.Duration

func (d Duration) MarshalJSON() ([]byte, error) {
	return []byte(strconv.FormatInt(time.Duration(d).Milliseconds(), 10)), nil
}

func (d *Duration) UnmarshalJSON(b []byte) error {
	ms, err := strconv.ParseInt(string(b), 10, 64)
	*d = Duration(time.Duration(ms) * time.Millisecond)
	return err
}

// The states of a job.
const (
	Running = "running"
	Ended   = "ended"
)

// Status is how a job goes, as its keeper last wrote it.
type Status struct {
	State       string `json:"state"`
	Keeper      int    `json:"keeper"`
	KeeperStart uint64 `json:"keeper_start"` // its start time, in clock ticks since boot
	Leader      int    `json:"leader,omitempty"`
	LeaderStart uint64 `json:"leader_start,omitempty"` // its start time: a pid reused names another process
	// Input is what the command's stdin is, as /proc/PID/fd shows it
	// ("pipe:[123]", "/dev/pts/4"); Pipe is the output pipe's.
	Input string `json:"input,omitempty"`
	Pipe  string `json:"pipe,omitempty"`
	// Wait is the leader's wait status once it has ended.
	Wait   *uint32   `json:"wait_status,omitempty"`
	Exited time.Time `json:"exited,omitzero"`
	Ended  time.Time `json:"ended,omitzero"`
	// Stopped says why the job was stopped, if it was; Killed that
	// SIGKILL was needed; Left how many processes outlived even that.
	Stopped *proc.Cause `json:"stopped,omitempty"`
	Killed  bool        `json:"killed,omitempty"`
	Left    int         `json:"left,omitempty"`
	// OutputBytes is how much the job wrote, known at its end; LogFull
	// says the log stopped at MaxLog.
	OutputBytes int64 `json:"output_bytes,omitempty"`
	LogFull     bool  `json:"log_full,omitempty"`
	// Resources are what the command used, once it has ended.
	Resources *proc.Resources `json:"resources,omitempty"`
	// Error says what went wrong when the keeper could not start the command.
	Error string `json:"error,omitempty"`
}

// Seen is what the looks at a job have shown.
type Seen struct {
	Offset   int64     `json:"offset"`             // bytes of the log shown
	Matched  int64     `json:"matched,omitempty"`  // bytes of the log an until matched in
	EndShown time.Time `json:"end_shown,omitzero"` // when the job's end was shown
}

// ErrNoJob is a job id with no record.
var ErrNoJob = errors.New("no such job")

// Dir is the per-user state directory (internal/state), with the jobs'
// and sessions' directories in it.
func Dir() (string, error) { return state.Dir("jobs", "sessions") }

// newID makes a new job's directory under jobs and returns its id: four
// hex digits, as a model can retype them, more where four are taken.
func newID(jobs string) (string, error) {
	for i := 0; ; i++ {
		n := 2
		if i >= 64 {
			n = 4
		}
		b := make([]byte, n)
		_, _ = rand.Read(b)
		id := hex.EncodeToString(b)
		err := os.Mkdir(filepath.Join(jobs, id), 0o700)
		if err == nil {
			return id, nil
		}
		if !errors.Is(err, os.ErrExist) || i > 128 {
			return "", err
		}
	}
}

// ValidID reports whether id could name a job: a guard before it is
// joined to a path.
func ValidID(id string) bool {
	if id == "" || len(id) > 16 {
		return false
	}
	for _, c := range []byte(id) {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// writeJSON replaces path with v's JSON through a rename, so that a reader
// sees the old file or the new one, never half of one. The state is
// rewritten often and is worth nothing after a crash, so it is not synced.
func writeJSON(path string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	tmp := path + ".tmp" + strconv.Itoa(os.Getpid())
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

// The name of a cut shell call's whole output in the temporary directory:
// SpillPrefix, 32 random hex digits (tempfile's), SpillSuffix. shell makes
// it; Named knows it.
const (
	SpillPrefix = "toolkit-shell-"
	SpillSuffix = ".log"
)

// Named reports whether path is a file toolkit names in its text for a
// model to read, and returns its directory: the whole output of a cut shell
// call (SpillPrefix HEX32 SpillSuffix in the state directory's spill/, 128
// random bits in its name) or a job's log (jobs/ID/log in the state
// directory). read lets a model confined to a root read these.
func Named(path string) (string, bool) {
	dir, name := filepath.Dir(path), filepath.Base(path)
	if spills, err := SpillDir(); err == nil && dir == spills {
		rest, ok := strings.CutPrefix(name, SpillPrefix)
		hex, log := strings.CutSuffix(rest, SpillSuffix)
		return dir, ok && log && len(hex) == 32 && strings.Trim(hex, "0123456789abcdef") == ""
	}
	id := filepath.Base(dir)
	if name != "log" || !ValidID(id) {
		return "", false
	}
	state, err := Dir()
	if err != nil || filepath.Dir(dir) != filepath.Join(state, "jobs") {
		return "", false
	}
	return dir, true
}
