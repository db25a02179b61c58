// Command deps prints a line, or with the argument sh execs sh -c true,
// as hello and shtrue do, or with run runs sh -c true as a child and waits
// for it (os/exec), or with guard runs it as toolkit shell must (guard.go),
// or with state does toolkit shell's work on its state first, then guards,
// or with cli or flag parses the toolkit shell command line that follows
// first (parse.go: with urfave/cli, or the standard library's flag
// package) and then does what state does,
// linking every package outside the standard library that toolkit's own
// packages import (bench/deps): the floor of toolkit's start that its
// dependencies set, which toolkit --version and toolkit shell true are
// measured against. Built with the tag linked, it links toolkit's own code
// too (bench/linked).
package main

import (
	"os"
	"os/exec"
	"syscall"

	_ "toolkit/bench/deps"
)

func main() {
	mode := ""
	if len(os.Args) > 1 {
		mode = os.Args[1]
	}
	switch mode {
	case "run":
		if err := exec.Command("/bin/sh", "-c", "true").Run(); err != nil {
			fail(err)
		}
	case "guard":
		guard()
	case "state":
		state()
		guard()
	case "cli":
		withCli(os.Args[2:], func() { state(); guard() })
	case "flag":
		withFlag(os.Args[2:], func() { state(); guard() })
	case "sh":
		err := syscall.Exec("/bin/sh", []string{"sh", "-c", "true"}, os.Environ())
		fail(err)
	default:
		os.Stdout.WriteString("hello\n")
	}
}
