package shell

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"toolkit/internal/confine"
	"toolkit/internal/outcome"
	"toolkit/internal/proc"
)

// CallLimits are the fences a call asks for its command.
type CallLimits struct {
	MemoryMB *int `json:"memory_mb,omitempty" check:"min=1" desc:"Stop the command when the resident memory of all its processes passes this many MiB."`
	Pids     *int `json:"pids,omitempty" check:"min=1" desc:"Stop the command when it has more than this many processes at once."`
}

// fence is what keeps one call's command from hurting the agent: where it
// may write and whom it may signal (Landlock), and its limits.
type fence struct {
	mode   confine.Mode
	abi    int
	write  []string // what it may write, when confined
	tmp    string   // its TMPDIR, when confined
	limits proc.Limits
}

// fenceFor is a call's fence, and the notes that say what it asked and
// what held.
func fenceFor(a Args, h Options) (fence, []string, error) {
	f := fence{mode: h.Confine}
	var notes []string
	var mem, pids *int
	if a.Limits != nil {
		mem, pids = a.Limits.MemoryMB, a.Limits.Pids
	}
	mb := outcome.AtMost("limits.memory_mb", mem, h.LimitMemoryMB, h.LimitMemoryMB, "the host's ", &notes)
	f.limits = proc.Limits{MemoryBytes: int64(mb) << 20, Pids: outcome.AtMost("limits.pids", pids, h.LimitPids, h.LimitPids, "the host's ", &notes)}
	if f.mode == confine.Off {
		return f, notes, nil
	}
	rootDir := ""
	if h.Root != nil {
		rootDir = h.Root.Dir()
	}
	if err := confine.HostCheck(f.mode, rootDir); err != nil {
		return f, nil, err
	}
	f.abi = confine.ABI()
	name := "calls"
	if a.Session != nil {
		name = "session-" + *a.Session
	}
	f.tmp = filepath.Join(os.TempDir(), "toolkit-"+strconv.Itoa(os.Getuid())+"-tmp", name)
	if err := os.MkdirAll(f.tmp, 0o700); err != nil {
		return f, nil, fmt.Errorf("--confine: the command's TMPDIR %s: %w", f.tmp, err)
	}
	f.write = append([]string{rootDir, f.tmp}, h.Writable...)
	return f, append(notes, confine.Held(f.abi)), nil
}

// prefix is the argv the command starts through (confine.Policy.Wrap), or
// nil when nothing is to be done before /bin/sh: with limits, its
// oom_score_adj is raised; confined, it is restricted too.
func (f fence) prefix() ([]string, error) {
	if f.mode == confine.Off && f.limits == (proc.Limits{}) {
		return nil, nil
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("cannot find toolkit's own binary: %w", err)
	}
	p := confine.Policy{Write: f.write, OOM: true, Land: f.mode != confine.Off && f.abi > 0}
	return p.Wrap(exe, nil), nil
}

// env is the command's environment with its TMPDIR, when confined.
func (f fence) env(env []string) []string {
	if f.tmp == "" {
		return env
	}
	return append(env, "TMPDIR="+f.tmp)
}

// writable is what a command Landlock confines may write, for the notes on
// the paths it was denied (confine.Notes); nil when it is not confined.
func (f fence) writable() []string {
	if f.mode == confine.Off || f.abi == 0 {
		return nil
	}
	return f.write
}
