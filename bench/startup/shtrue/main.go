// Command shtrue execs sh -c true: the floor of a static Go program that
// runs a command, which toolkit shell true is measured against.
package main

import (
	"os"
	"syscall"
)

func main() {
	err := syscall.Exec("/bin/sh", []string{"sh", "-c", "true"}, os.Environ())
	os.Stderr.WriteString(err.Error() + "\n")
	os.Exit(1)
}
