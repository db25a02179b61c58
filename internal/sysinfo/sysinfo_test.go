package sysinfo

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"toolkit/internal/confine"
)

// TestGather: the facts against /proc, read here another way.
func TestGather(t *testing.T) {
	dir := t.TempDir()
	f := Gather(dir, map[string]string{"max-output": "32768"})

	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skip("no /proc")
	}
	for line := range strings.Lines(string(status)) {
		if rest, ok := strings.CutPrefix(line, "Cpus_allowed_list:"); ok {
			n := 0
			for part := range strings.SplitSeq(strings.TrimSpace(rest), ",") {
				a, b, isRange := strings.Cut(part, "-")
				lo, _ := strconv.Atoi(a)
				hi := lo
				if isRange {
					hi, _ = strconv.Atoi(b)
				}
				n += hi - lo + 1
			}
			if f.CPUs != n {
				t.Errorf("cpus %d, /proc/self/status allows %d", f.CPUs, n)
			}
		}
	}
	meminfo, _ := os.ReadFile("/proc/meminfo")
	var total int64
	for line := range strings.Lines(string(meminfo)) {
		if rest, ok := strings.CutPrefix(line, "MemTotal:"); ok {
			kb, _ := strconv.ParseInt(strings.Fields(rest)[0], 10, 64)
			total = kb * 1024
		}
	}
	switch f.MemoryFrom {
	case "meminfo":
		if f.MemoryBytes != total {
			t.Errorf("memory %d, MemTotal %d", f.MemoryBytes, total)
		}
	case "cgroup":
		if f.MemoryBytes <= 0 || f.MemoryBytes >= total {
			t.Errorf("a cgroup's memory %d, MemTotal %d", f.MemoryBytes, total)
		}
	default:
		t.Errorf("memory from %q", f.MemoryFrom)
	}
	if f.MemoryAvailableBytes <= 0 || f.MemoryAvailableBytes > total {
		t.Errorf("available %d of %d", f.MemoryAvailableBytes, total)
	}
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	free := int64(st.Bavail) * st.Bsize
	if d := f.DiskFreeBytes - free; d > 64<<20 || d < -64<<20 {
		t.Errorf("disk free %d, statfs says %d", f.DiskFreeBytes, free)
	}
	if f.LandlockABI != confine.ABI() {
		t.Errorf("landlock %d, the kernel says %d", f.LandlockABI, confine.ABI())
	}
	if _, err := os.Stat("/dev/ptmx"); err == nil && !f.PTY {
		t.Error("/dev/ptmx is there, and no terminal opened")
	}
	text := f.Text()
	for _, want := range []string{"cpus: " + strconv.Itoa(f.CPUs), "landlock: ", "limits (toolkit mcp, toolkit call): max-output=32768"} {
		if !strings.Contains(text, want) {
			t.Errorf("text %q lacks %q", text, want)
		}
	}
}
