package proc

import (
	"os/exec"
	"strings"
	"testing"
)

// TestQuote: an argv joined with quote is the same argv to sh.
func TestQuote(t *testing.T) {
	args := []string{"plain", "", "two words", "it's", `"$HOME"`, "a\nb", "*", "-x=1"}
	var q []string
	for _, a := range args {
		q = append(q, Quote(a))
	}
	out, err := shWords(strings.Join(q, " "))
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.Join(args, "\x00") + "\x00"; out != want {
		t.Fatalf("got %q, want %q", out, want)
	}
}

// shWords runs printf '%s\0' with the words of command, as sh splits them.
func shWords(command string) (string, error) {
	out, err := exec.Command("sh", "-c", `printf '%s\0' `+command).Output()
	return string(out), err
}
