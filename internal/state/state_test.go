package state

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestDefaultFollowsNotTMPDIR: with neither TOOLKIT_STATE nor
// XDG_RUNTIME_DIR, the state directory is /tmp/toolkit-UID whatever TMPDIR
// says: a host that changes TMPDIR between calls keeps its jobs and
// history.
func TestDefaultFollowsNotTMPDIR(t *testing.T) {
	t.Setenv("TOOLKIT_STATE", "")
	t.Setenv("XDG_RUNTIME_DIR", "")
	t.Setenv("TMPDIR", t.TempDir())
	want := "/tmp/toolkit-" + strconv.Itoa(os.Getuid())
	dir, err := Dir()
	if err != nil && !strings.Contains(err.Error(), want+" ") || err == nil && dir != want {
		t.Fatalf("Dir() = %s, %v; want %s", dir, err, want)
	}
}
