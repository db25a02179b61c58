package walk

import (
	"strings"
	"testing"
)

// TestCheckGlob: brace groups that spell out too many paths are refused
// before any matching (30 groups of two: 2^30 tries of one name); the
// globs models write pass.
func TestCheckGlob(t *testing.T) {
	for _, p := range []string{"*.go", "**/*_test.go", "*.{ts,tsx,js,jsx}", "src/{a,b}/**/*.{c,h}", `\{x,y\}*`, "{a,{b,c}}"} {
		if err := CheckGlob(p); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
	for _, p := range []string{strings.Repeat("{a,aa}", 30) + "b", strings.Repeat("{a,b,c,d}", 6), "[a"} {
		if err := CheckGlob(p); err == nil {
			t.Errorf("%s: taken", p)
		}
	}
}

// TestTypeGlobs: every glob of the type table is one doublestar takes.
func TestTypeGlobs(t *testing.T) {
	for name, globs := range Types() {
		for _, g := range globs {
			if err := CheckGlob(g); err != nil {
				t.Errorf("%s: %s %v", name, g, err)
			}
		}
	}
	if !OfType("c", "x.H") || !OfType("make", "GNUmakefile") || OfType("go", "x.gox") {
		t.Error("OfType")
	}
}
