package diag

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"toolkit/internal/outcome"
	"toolkit/testsupport/fakelsp"
)

// TestMain runs the test binary as a keeper (keep.Start starts this
// executable with KeeperName) or as the fake server it keeps.
func TestMain(m *testing.M) {
	if len(os.Args) == 3 && os.Args[1] == KeeperName {
		os.Exit(RunKeeper(os.Args[2]))
	}
	if os.Getenv("FAKELSP") == "1" {
		fakelsp.Main()
	}
	os.Exit(m.Run())
}

// TestParallelChecks: calls that check at once, each its own file, share
// one kept server, started once, and each is told its own new error only.
func TestParallelChecks(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	t.Setenv("TOOLKIT_STATE", filepath.Join(dir, "state"))
	root := filepath.Join(dir, "root")
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	wrapper := filepath.Join(dir, "fake")
	if err := os.WriteFile(wrapper, fmt.Appendf(nil, "#!/bin/sh\nFAKELSP=1 exec %q\n", exe), 0o755); err != nil {
		t.Fatal(err)
	}
	ask := Ask{Mode: New, Severity: Error, Wait: 20 * time.Second, Servers: []Spec{{Name: "fake", Commands: [][]string{{wrapper}}, Exts: []string{".fk"}}}}
	defer func() {
		for _, s := range Kept() {
			s.Stop()
		}
	}()
	const calls = 8
	results := make([]*outcome.Diagnostics, calls)
	var wg sync.WaitGroup
	for i := range calls {
		wg.Go(func() {
			path := filepath.Join(root, fmt.Sprintf("f%d.fk", i))
			after := fmt.Sprintf("ok\nERROR %d\n", i)
			results[i] = Check(context.Background(), []Change{{Path: path, Rel: filepath.Base(path), Top: root, Before: []byte("ok\n"), Existed: true, BeforeKnown: true, After: []byte(after)}}, ask)
		})
	}
	wg.Wait()
	for i, d := range results {
		if d == nil || len(d.New) != 1 || d.New[0].Message != fmt.Sprintf("ERROR %d", i) || d.Already != 0 || len(d.Checked) != 1 || d.Checked[0].Tier != "server" {
			t.Fatalf("call %d: %+v", i, d)
		}
	}
	if kept := Kept(); len(kept) != 1 || !strings.HasPrefix(kept[0].State, "ready") {
		t.Fatalf("kept: %+v", kept)
	}
}
