package replace

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWriteLine: a line is written in place, padded to its width, over a
// longer or a shorter one, and reads back trimmed; one too long is refused.
func TestWriteLine(t *testing.T) {
	p := filepath.Join(t.TempDir(), "seq")
	for _, line := range []string{"12345678901234567890 42 7", "8", "99"} {
		if err := WriteLine(p, line); err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(p)
		if len(b) != lineWidth || strings.TrimSpace(string(b)) != line {
			t.Fatalf("wrote %q: %q", line, b)
		}
	}
	if err := WriteLine(p, strings.Repeat("x", lineWidth)); err == nil {
		t.Fatal("a line over the width was written")
	}
}
