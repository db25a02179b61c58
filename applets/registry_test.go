package applets

import (
	"strings"
	"testing"

	"toolkit/internal/cmdline"
)

// TestRegistryRefusesDuplicates: a tool that declares a host setting of
// its own under another's name (job with a max-output of its own, which
// made toolkit mcp and toolkit call panic with "flag redefined"), or a name
// another tool has, is refused where the tools register; a setting two
// tools share is one flag.
func TestRegistryRefusesDuplicates(t *testing.T) {
	own := &cmdline.Setting[int]{Name: "max-output", Person: 10}
	shell, _ := Find("shell")
	job, _ := Find("job")
	if _, err := build(shell, job); err != nil {
		t.Fatalf("shell and job share max-output and raw: %v", err)
	}
	job.Settings = append(job.Settings, own)
	if _, err := build(shell, job); err == nil || !strings.Contains(err.Error(), "--max-output") {
		t.Fatalf("a second max-output: %v", err)
	}
	if _, err := build(shell, shell); err == nil {
		t.Fatal("two tools called shell were taken")
	}
	seen := map[string]bool{}
	for _, f := range ModelFlags() {
		if seen[f.Names()[0]] {
			t.Errorf("--%s is twice in toolkit mcp's flags", f.Names()[0])
		}
		seen[f.Names()[0]] = true
	}
}
