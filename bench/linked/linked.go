// Package linked links all of toolkit's own code into the program that
// imports it: every package toolkit's main calls into, reached from a
// branch no run takes, so that the linker keeps what toolkit keeps. A
// floor built with it (bench/startup/deps and bench/floor/grep, each with
// the tag linked) is then a binary of toolkit's size and package inits
// that runs none of toolkit's code: toolkit --version, which answers
// before any, is measured against it, toolkit shell true against its run,
// and a search's peak memory against the floor's search.
package linked

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
