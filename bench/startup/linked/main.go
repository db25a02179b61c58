// Command linked prints a line, or with the argument run runs sh -c true
// as a child and waits for it (os/exec), as deps does, linking all of
// toolkit's own code besides: every package toolkit's main calls into,
// reached from a branch no run takes, so that the linker keeps what toolkit
// keeps. Its start is that of a binary of toolkit's size and package
// inits that runs none of toolkit's code: toolkit --version, which answers
// before any, is measured against it, and toolkit shell true against its
// run, to say what of a call is toolkit's own work.
package main

import (
	"os"
	"os/exec"

	"toolkit/applets"
	"toolkit/applets/call"
	"toolkit/applets/info"
	"toolkit/applets/mcp"
	"toolkit/applets/schema"
	"toolkit/internal/confine"
	"toolkit/internal/diag"
	"toolkit/internal/history"
	"toolkit/internal/jobs"
)

func main() {
	if os.Getenv("LINKED_RUN_EVERYTHING") == "yes, never set" {
		for _, t := range applets.All() {
			t.Command()
		}
		call.Command()
		info.Command()
		schema.Command()
		mcp.Command("")
		confine.RunWrapped(os.Args)
		jobs.RunKeeper("")
		history.RunKeeper("", "")
		diag.RunKeeper("")
	}
	if len(os.Args) > 1 && os.Args[1] == "run" {
		if err := exec.Command("/bin/sh", "-c", "true").Run(); err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(1)
		}
		return
	}
	os.Stdout.WriteString("hello\n")
}
