//go:build !linux

package main

import (
	"fmt"
	"os"
	"runtime"
)

// toolkit runs on Linux only (see main.go): built for another system it
// says so and does nothing.
func main() {
	fmt.Fprintf(os.Stderr, "toolkit runs on Linux only, not %s: it is built for the sandboxes of agent hosts (/proc, prctl, pseudo-terminals)\n", runtime.GOOS)
	os.Exit(2)
}
