// Package sysinfo gathers the facts of the sandbox a model and a host need
// before planning: the CPUs and the memory a command may use, the disk
// left under the root, what confinement the kernel offers, whether a
// terminal can be opened, and the limits in force. toolkit info prints
// them; toolkit mcp serves them as the resource toolkit://info.
package sysinfo

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/creack/pty"
	"github.com/urfave/cli/v2"
	"golang.org/x/sys/unix"

	"toolkit/internal/confine"
	"toolkit/internal/cut"
	"toolkit/internal/proc"
)

// Facts are the sandbox's facts.
type Facts struct {
	// CPUs this process may run on (its affinity); CPUQuota, when a
	// cgroup sets one, is cpu.max's quota over its period (1.5: one and a
	// half CPUs' time).
	CPUs     int     `json:"cpus"`
	CPUQuota float64 `json:"cpu_quota,omitempty"`
	// MemoryBytes is the memory ceiling: the cgroup's memory.max when it
	// sets one (MemoryFrom "cgroup"), else the machine's MemTotal
	// ("meminfo"). MemoryAvailableBytes is /proc/meminfo's MemAvailable.
	MemoryBytes          int64  `json:"memory_bytes"`
	MemoryFrom           string `json:"memory_from"`
	MemoryAvailableBytes int64  `json:"memory_available_bytes"`
	// DiskFreeBytes is what an unprivileged user may still write on the
	// file system of DiskPath (the root, or the working directory).
	DiskPath      string `json:"disk_path"`
	DiskFreeBytes int64  `json:"disk_free_bytes"`
	// LandlockABI is the kernel's Landlock ABI (0: none): 1 and up confine
	// files, 6 and up signals too.
	LandlockABI int  `json:"landlock_abi"`
	PTY         bool `json:"pty"` // a pseudo-terminal opens (tty jobs work)
	// Limits are the host's settings in force for toolkit mcp and toolkit
	// call, by flag name; CallLimits those of a call run once per process
	// (toolkit APPLET), which the environment (TOOLKIT_…) sets.
	Limits     map[string]string `json:"limits"`
	CallLimits map[string]string `json:"limits_per_call,omitempty"`
	// Spills are the cut shell calls' whole outputs kept in the state
	// directory, and their bound.
	Spills *Spills `json:"spills,omitempty"`
	// Orphans says where toolkit cannot adopt orphans (no subreaper, as
	// under qemu-user): a process that leaves its group may outlive a call.
	Orphans string `json:"orphans,omitempty"`
}

// Spills is what the spills hold, and what bounds them.
type Spills struct {
	Dir   string `json:"dir"`
	Files int    `json:"files"`
	Bytes int64  `json:"bytes"`
	Cap   int64  `json:"cap_bytes"`
}

// Gather reads the facts: dir is where the disk is measured (the working
// directory when empty); limits are the host's settings.
func Gather(dir string, limits map[string]string) Facts {
	if dir == "" {
		if dir, _ = os.Getwd(); dir == "" {
			dir = "/"
		}
	}
	f := Facts{CPUs: runtime.NumCPU(), DiskPath: dir, LandlockABI: confine.ABI(), Limits: limits}
	if err := proc.SubreaperRefused(); err != nil {
		f.Orphans = "toolkit cannot adopt orphans here (PR_SET_CHILD_SUBREAPER: " + err.Error() + "): a process that leaves its group may outlive the call"
	}
	var set unix.CPUSet
	if unix.SchedGetaffinity(0, &set) == nil {
		f.CPUs = set.Count()
	}
	f.CPUQuota = cpuQuota()
	mem := meminfo()
	f.MemoryBytes, f.MemoryFrom, f.MemoryAvailableBytes = mem["MemTotal"], "meminfo", mem["MemAvailable"]
	if n := cgroupMemory(); n > 0 && n < f.MemoryBytes {
		f.MemoryBytes, f.MemoryFrom = n, "cgroup"
	}
	var st unix.Statfs_t
	if unix.Statfs(dir, &st) == nil {
		f.DiskFreeBytes = int64(st.Bavail) * int64(st.Bsize)
	}
	if m, t, err := pty.Open(); err == nil {
		f.PTY = true
		m.Close()
		t.Close()
	}
	return f
}

// cgroupFile is the first of a cgroup's files that can be read: for each
// line of /proc/self/cgroup whose controllers include controller (v1), or
// the unified one (v2, controller ""), the file under the group's path in
// its mount, then in the mount itself (a cgroup namespace shows "/" where
// the mount is the group).
func cgroupFile(controller, name string) ([]byte, bool) {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return nil, false
	}
	for line := range strings.Lines(string(b)) {
		parts := strings.SplitN(strings.TrimSpace(line), ":", 3)
		if len(parts) != 3 {
			continue
		}
		mount := "/sys/fs/cgroup"
		switch {
		case controller == "" && parts[1] == "":
		case controller != "" && slices.Contains(strings.Split(parts[1], ","), controller):
			mount = filepath.Join(mount, parts[1])
			if _, err := os.Stat(mount); err != nil {
				mount = filepath.Join("/sys/fs/cgroup", controller)
			}
		default:
			continue
		}
		for _, dir := range []string{filepath.Join(mount, parts[2]), mount} {
			if b, err := os.ReadFile(filepath.Join(dir, name)); err == nil {
				return b, true
			}
		}
	}
	return nil, false
}

// cgroupMemory is the cgroup's memory limit in bytes (v2 memory.max, v1
// memory.limit_in_bytes), or 0 for none.
func cgroupMemory() int64 {
	b, ok := cgroupFile("", "memory.max")
	if !ok {
		b, ok = cgroupFile("memory", "memory.limit_in_bytes")
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if !ok || err != nil || n <= 0 || n >= 1<<62 {
		return 0 // "max", or v1's "no limit" (a page short of 2^63)
	}
	return n
}

// cpuQuota is the cgroup's CPU quota over its period (v2 cpu.max, v1
// cpu.cfs_quota_us and cpu.cfs_period_us), or 0 for none.
func cpuQuota() float64 {
	var quota, period string
	if b, ok := cgroupFile("", "cpu.max"); ok {
		quota, period, _ = strings.Cut(strings.TrimSpace(string(b)), " ")
	} else if q, ok := cgroupFile("cpu", "cpu.cfs_quota_us"); ok {
		p, _ := cgroupFile("cpu", "cpu.cfs_period_us")
		quota, period = strings.TrimSpace(string(q)), strings.TrimSpace(string(p))
	}
	q, err1 := strconv.ParseFloat(quota, 64)
	p, err2 := strconv.ParseFloat(period, 64)
	if err1 != nil || err2 != nil || q <= 0 || p <= 0 {
		return 0
	}
	return q / p
}

// meminfo is /proc/meminfo's values, in bytes.
func meminfo() map[string]int64 {
	out := map[string]int64{}
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return out
	}
	for line := range strings.Lines(string(b)) {
		name, rest, ok := strings.Cut(line, ":")
		fields := strings.Fields(rest)
		if !ok || len(fields) == 0 {
			continue
		}
		n, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil {
			continue
		}
		if len(fields) > 1 && fields[1] == "kB" {
			n <<= 10
		}
		out[name] = n
	}
	return out
}

// Settings are the host's settings by flag name (cmdline.Settings).
type Settings interface{ Value(name string) any }

// Limits are the values of flags in s, by name: the limits in force.
func Limits(s Settings, flags []cli.Flag) map[string]string {
	out := map[string]string{}
	for _, f := range flags {
		name := f.Names()[0]
		if s != nil {
			out[name] = fmt.Sprint(s.Value(name))
		}
	}
	return out
}

// Text is the facts as lines a person or a model reads.
func (f Facts) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "cpus: %d", f.CPUs)
	if f.CPUQuota > 0 {
		fmt.Fprintf(&b, " (a cgroup quota of %.2f CPUs' time)", f.CPUQuota)
	}
	fmt.Fprintf(&b, "\nmemory: %s (%s), %s available\n", gib(f.MemoryBytes), map[string]string{"cgroup": "the cgroup's memory.max", "meminfo": "the machine's; no cgroup limit"}[f.MemoryFrom], gib(f.MemoryAvailableBytes))
	fmt.Fprintf(&b, "disk: %s free under %s\n", gib(f.DiskFreeBytes), f.DiskPath)
	switch {
	case f.LandlockABI == 0:
		b.WriteString("landlock: none (--confine cannot confine commands here)\n")
	case f.LandlockABI < 6:
		fmt.Fprintf(&b, "landlock: ABI %d (files; not signals)\n", f.LandlockABI)
	default:
		fmt.Fprintf(&b, "landlock: ABI %d (files, signals)\n", f.LandlockABI)
	}
	fmt.Fprintf(&b, "pty: %s\n", map[bool]string{true: "works", false: "cannot be opened (tty jobs will fail)"}[f.PTY])
	if f.Orphans != "" {
		b.WriteString("orphans: " + f.Orphans + "\n")
	}
	if s := f.Spills; s != nil {
		fmt.Fprintf(&b, "spills: %d files, %s kept in %s (at most %s all together, the oldest first out)\n", s.Files, cut.Size(s.Bytes), s.Dir, cut.Size(s.Cap))
	}
	for _, l := range []struct {
		what   string
		limits map[string]string
	}{{"toolkit mcp, toolkit call", f.Limits}, {"per call", f.CallLimits}} {
		if l.limits == nil {
			continue
		}
		fmt.Fprintf(&b, "limits (%s):", l.what)
		for _, k := range slices.Sorted(maps.Keys(l.limits)) {
			fmt.Fprintf(&b, " %s=%s", k, l.limits[k])
		}
		b.WriteString("\n")
	}
	return b.String()
}

func gib(n int64) string {
	return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
}
