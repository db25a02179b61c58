// Package confine keeps a model's commands from hurting the agent that
// runs them, from inside toolkit's one binary, with no privilege: Landlock
// (github.com/landlock-lsm/go-landlock) for what they may write and whom
// they may signal, and a raised oom_score_adj so that the kernel's OOM
// killer takes a command before the agent.
//
// A confined command starts through a re-exec of toolkit (WrapName), which
// sets no_new_privs, restricts itself with one Landlock ruleset at the best
// ABI the kernel offers, and execs /bin/sh: read and execute everywhere;
// write only under Policy.Write; at ABI 6 and later, signals and abstract
// UNIX sockets only within its own domain, which the command's whole tree
// shares. toolkit itself, outside that domain, can still stop it.
package confine

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"

	"toolkit/internal/root"
	"toolkit/internal/state"
)

// Mode is the host's --confine: Off, On (confined where the kernel can),
// or Require (a call is refused where it cannot).
type Mode int

const (
	Off Mode = iota
	On
	Require
)

// ParseMode reads --confine's value: false, true or require.
func ParseMode(s string) (Mode, error) {
	switch strings.ToLower(s) {
	case "", "false", "off", "0", "no":
		return Off, nil
	case "true", "on", "1", "yes":
		return On, nil
	case "require":
		return Require, nil
	}
	return Off, fmt.Errorf("--confine must be true, false or require, not %q", s)
}

// WrapName is the hidden command a confined command starts through:
// toolkit WrapName POLICY /bin/sh -c SCRIPT.
const WrapName = "confined-command"

// Policy is what a confined command may do.
type Policy struct {
	// Write are the directories (and files) it may write under.
	Write []string `json:"write"`
	// OOM raises its oom_score_adj to 1000.
	OOM bool `json:"oom,omitempty"`
	// Land applies the Landlock ruleset; without it, only OOM.
	Land bool `json:"land,omitempty"`
}

// The devices every command may write: the sinks and its terminals.
var devices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/ptmx"}

// noLandlock is the test hook that makes this kernel one without
// Landlock: TOOLKIT_TEST_NO_LANDLOCK=1.
const noLandlock = "TOOLKIT_TEST_NO_LANDLOCK"

// ABI is the Landlock ABI this kernel offers: 0 for none.
func ABI() int {
	if os.Getenv(noLandlock) == "1" {
		return 0
	}
	v, err := ll.LandlockGetABIVersion()
	if err != nil {
		return 0
	}
	return v
}

// Held words what held for a command: "[confined: landlock ABI 7 — files,
// signals]", or why not.
func Held(abi int) string {
	switch {
	case abi <= 0:
		return "[not confined: this kernel has no Landlock]"
	case abi < 6:
		return fmt.Sprintf("[confined: landlock ABI %d — files]", abi)
	}
	return fmt.Sprintf("[confined: landlock ABI %d — files, signals]", abi)
}

// Wrap is the argv that runs argv under p: toolkit's own binary exe,
// WrapName, the policy, then argv.
func (p Policy) Wrap(exe string, argv []string) []string {
	b, _ := json.Marshal(p)
	return append([]string{exe, WrapName, string(b)}, argv...)
}

// RunWrapped is the re-exec's whole work: args are WrapName, the policy
// and the command's argv. It applies the policy and execs the command; it
// returns only if it cannot, with the status to exit with.
func RunWrapped(args []string) int {
	if len(args) < 3 {
		fmt.Fprintf(os.Stderr, "toolkit: %s POLICY COMMAND...\n", WrapName)
		return 2
	}
	var p Policy
	if err := json.Unmarshal([]byte(args[1]), &p); err != nil {
		fmt.Fprintf(os.Stderr, "toolkit: %s: %s\n", WrapName, err)
		return 2
	}
	if err := p.apply(); err != nil {
		fmt.Fprintf(os.Stderr, "toolkit: cannot confine the command: %s\n", err)
		return 126
	}
	argv := args[2:]
	err := syscall.Exec(argv[0], argv, os.Environ())
	fmt.Fprintf(os.Stderr, "toolkit: cannot run %s: %s\n", argv[0], err)
	return 126
}

// apply applies the policy to this process, which then execs the command.
func (p Policy) apply() error {
	if p.OOM {
		// Raising it needs no privilege. Landlock below keeps the command
		// from writing /proc to lower it again.
		if err := os.WriteFile("/proc/self/oom_score_adj", []byte("1000"), 0); err != nil {
			return fmt.Errorf("oom_score_adj: %w", err)
		}
	}
	if !p.Land || ABI() == 0 {
		return nil
	}
	cfg := landlock.Config{HandledAccessFS: landlock.V7.HandledAccessFS, Scoped: landlock.V7.Scoped}
	return cfg.BestEffort().Restrict(rules(p.Write)...)
}

// ParseWritable reads --writable: absolute directories, colon-separated.
func ParseWritable(s string) ([]string, error) {
	var dirs []string
	for _, d := range filepath.SplitList(s) {
		if !filepath.IsAbs(d) {
			return nil, fmt.Errorf("--writable wants absolute directories, not %q", d)
		}
		dirs = append(dirs, filepath.Clean(d))
	}
	return dirs, nil
}

// HostFlags reads the host's --confine and --writable, as shell and the
// presenters take them.
func HostFlags(confine, writable string) (Mode, []string, error) {
	mode, err := ParseMode(confine)
	if err != nil {
		return Off, nil, err
	}
	dirs, err := ParseWritable(writable)
	return mode, dirs, err
}

// HostCheck checks the host's --confine before any command runs under it:
// it needs a root; with require, a kernel without Landlock is an error;
// and the state directory must lie outside the root, where a command
// could forge its jobs' records.
//
// toolkit's own process is not restricted: Landlock (to ABI 7) restricts a
// process a thread at a time, and go-landlock restricts each of a Go
// process's threads in a domain of its own. A command started from one
// thread is then in a domain no other thread's is above, and those threads
// may not read its /proc: toolkit lost the background processes of
// confined commands (8 of 16 calls under load) and could not tell a
// confined job waiting for input. The commands are confined; the file
// tools are held to the root by os.Root.
func HostCheck(mode Mode, rootDir string) error {
	if mode == Off {
		return nil
	}
	if rootDir == "" {
		return ErrNoRoot
	}
	if abi := ABI(); abi == 0 && mode == Require {
		return errNoLandlock
	} else if abi == 0 {
		return nil
	}
	st, err := state.Dir()
	if err != nil {
		return err
	}
	if root.Within(st, rootDir) {
		return fmt.Errorf("--confine: the state directory %s is inside the root, where a command could write its jobs' records; set TOOLKIT_STATE outside it", st)
	}
	return nil
}

// ErrNoRoot is --confine without --root.
var ErrNoRoot = errors.New("--confine needs --root: a confined command may write only under it")

var errNoLandlock = errors.New("not confined: this kernel has no Landlock, and --confine=require refuses to run the command")

// rules are read and execute everywhere, and write under write.
func rules(write []string) []landlock.Rule {
	return []landlock.Rule{
		landlock.RODirs("/"),
		landlock.RWDirs(write...).WithRefer().IgnoreIfMissing(),
		landlock.RWDirs("/dev/pts", "/dev/shm").WithIoctlDev().IgnoreIfMissing(),
		landlock.RWFiles(devices...).WithIoctlDev().IgnoreIfMissing(),
	}
}

// writable is the whole set a command may write, for the notes: write and
// the devices.
func writable(write []string) []string {
	return append(slices.Clone(write), append([]string{"/dev/pts", "/dev/shm"}, devices...)...)
}

// absPath is an absolute path in an error line, without the quotes and
// colons around it.
var absPath = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?:^|[\s'"‘(])(/[^\s'"‘’:,()]+)`) })

// Notes are the notes for a confined command's text: for each line that
// says "Permission denied" or "Operation not permitted", one for each
// absolute path in it outside the writable set (at most five in all); none
// for a command not confined (write nil).
func Notes(text string, write []string) []string {
	if write == nil {
		return nil // not confined: nothing was denied for it
	}
	all := writable(write)
	var notes []string
	seen := map[string]bool{}
	for line := range strings.Lines(text) {
		if !strings.Contains(line, "Permission denied") && !strings.Contains(line, "Operation not permitted") {
			continue
		}
		for _, m := range absPath().FindAllStringSubmatchIndex(line, -1) {
			at := m[2:4]
			if at[0] == 0 && strings.HasPrefix(line[at[1]:], ":") {
				continue // the program that says it: "/bin/sh: 1: cannot create …"
			}
			path := filepath.Clean(line[at[0]:at[1]])
			if seen[path] || slices.ContainsFunc(all, func(d string) bool { return root.Within(path, d) }) {
				continue
			}
			seen[path] = true
			notes = append(notes, fmt.Sprintf("[note: %s is outside this sandbox's writable roots]", path))
			if len(notes) == 5 {
				return notes
			}
		}
	}
	return notes
}
