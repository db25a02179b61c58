package shell

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/urfave/cli/v2"

	"toolkit/internal/cmdline"
	"toolkit/internal/proc"
)

// TestSpillStops: past its bound, the spill file says it stops, and the cut
// line says the file holds only the first part.
func TestSpillStops(t *testing.T) {
	dir := t.TempDir()
	o := Run(context.Background(), Args{Command: "seq 1 100000", Host: Options{MaxOutput: 1000, MaxSpill: 5000, SpillDir: dir}})
	d := o.Details.(Details)
	if d.Cut == nil {
		t.Fatalf("no cut: %q", o.Text)
	}
	if !strings.Contains(o.Text, "; the first 4.9 KiB of the output is in "+d.Cut.SpillPath+"]") {
		t.Fatalf("the cut line does not say the file stops: %q", o.Text)
	}
	b, err := os.ReadFile(d.Cut.SpillPath)
	if err != nil {
		t.Fatal(err)
	}
	want := "[toolkit: the output went on; this file keeps its first 5000 bytes]\n"
	if len(b) != 5000+1+len(want) || !strings.HasSuffix(string(b), "\n"+want) {
		t.Fatalf("spill file of %d bytes ends %q", len(b), b[max(0, len(b)-100):])
	}
	if fi, _ := os.Stat(d.Cut.SpillPath); fi.Mode().Perm() != 0o600 {
		t.Fatalf("spill file mode %v", fi.Mode())
	}
}

// TestNoSubreaperSaidOnce: where toolkit cannot become a subreaper (qemu-user),
// a command runs all the same, and the first call says once what is lost.
// Run in a child test process, where the hook stands for the prctl.
func TestNoSubreaperSaidOnce(t *testing.T) {
	if os.Getenv("TOOLKIT_TEST_NO_SUBREAPER") == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestNoSubreaperSaidOnce$", "-test.v")
		cmd.Env = append(os.Environ(), "TOOLKIT_TEST_NO_SUBREAPER=1", "TOOLKIT_STATE="+filepath.Join(t.TempDir(), "state"))
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--- PASS") {
			t.Fatalf("%v\n%s", err, out)
		}
		return
	}
	proc.TestHookSubreaper = func() error { return syscall.EINVAL }
	// The host's settings, as toolkit call gives them.
	var flags []cli.Flag
	for _, st := range Settings {
		flags = append(flags, st.Flag(true))
	}
	var settings cmdline.Settings
	app := &cli.App{Flags: flags, Action: func(c *cli.Context) error { settings = c; return nil }}
	if err := app.Run([]string{"toolkit"}); err != nil {
		t.Fatal(err)
	}
	for i, want := range []bool{true, false} {
		o := Applet.Call(context.Background(), []byte(`{"command":"echo ran","cwd":"/"}`), cmdline.Host{Settings: settings})
		if !strings.HasPrefix(o.Text, "ran\n") || !strings.HasSuffix(o.Text, "[exit 0]\n") {
			t.Fatalf("call %d: %q", i, o.Text)
		}
		if said := strings.Contains(o.Text, "[toolkit cannot adopt orphans here (PR_SET_CHILD_SUBREAPER: invalid argument): a process that leaves its group may outlive the call]\n"); said != want {
			t.Fatalf("call %d said it %v: %q", i, said, o.Text)
		}
	}
}
