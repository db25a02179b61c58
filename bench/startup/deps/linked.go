//go:build linked

package main

import (
	"os"

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

// Built with the tag linked, deps links all of toolkit's own code besides:
// every package toolkit's main calls into, reached from a branch no run
// takes, so that the linker keeps what toolkit keeps. Its start is then
// that of a binary of toolkit's size and package inits that runs none of
// toolkit's code: toolkit --version, which answers before any, is measured
// against it, and toolkit shell true against its run, to say what of a
// call is toolkit's own work.
func init() {
	if os.Getenv("TOOLKIT_BENCH_LINKED") == "run everything, never set" {
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
}
