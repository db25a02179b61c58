package deps

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestDepsWhole: deps.go imports what toolkit's packages import from
// outside the standard library, no more and no less.
func TestDepsWhole(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{join .Imports "\n"}}`, "toolkit/...").Output()
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, p := range strings.Fields(string(out)) {
		if first, _, _ := strings.Cut(p, "/"); strings.Contains(first, ".") {
			want = append(want, p)
		}
	}
	slices.Sort(want)
	want = slices.Compact(want)
	src, err := os.ReadFile("deps.go")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, line := range strings.Split(string(src), "\n") {
		if p, ok := strings.CutPrefix(strings.TrimSpace(line), `_ "`); ok {
			got = append(got, strings.TrimSuffix(p, `"`))
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("deps.go imports %q; toolkit's packages import %q", got, want)
	}
}
