// Package info prints the sandbox's facts (internal/sysinfo) with the
// host's settings in force, before a model or a host plans its work:
//
//	toolkit info [--root DIR] [--json] [host flags]
//
// toolkit mcp serves the same facts as the resource toolkit://info.
package info

import (
	"fmt"
	"io"
	"os"

	"github.com/urfave/cli/v2"

	"toolkit/applets"
	"toolkit/internal/cmdline"
	"toolkit/internal/jobs"
	"toolkit/internal/outcome"
	"toolkit/internal/sysinfo"
)

// Usage is info's usage line.
const Usage = "toolkit info [--root DIR] [--json] [host flags]"

// Command is the info subcommand.
func Command() *cli.Command {
	return &cli.Command{
		Name:         "info",
		Usage:        "print the sandbox's facts: CPUs, memory, disk, Landlock, terminals, and the limits in force",
		UsageText:    Usage,
		Description:  cmdline.EnvHelp,
		Flags:        append([]cli.Flag{cmdline.RootFlag("measure the disk under `DIR`, as toolkit mcp --root would confine the calls"), &cli.BoolFlag{Name: "json", Usage: "print the facts as JSON"}}, applets.ModelFlags()...),
		OnUsageError: cmdline.UsageError(Usage),
		Action: func(c *cli.Context) error {
			mode := outcome.TextMode
			if c.Bool("json") {
				mode = outcome.JSONMode
			}
			f, err := Facts(c.String("root"), c)
			o := outcome.Success(f.Text(), f)
			if err != nil {
				o = outcome.Misuse("%s", err)
				o.Usage = Usage
			}
			return cmdline.Exit(c, o, mode)
		},
	}
}

// Facts are the sandbox's facts under root (the working directory when
// empty), with the host settings s in force.
func Facts(root string, s cmdline.Settings) (sysinfo.Facts, error) {
	if root != "" {
		if fi, err := os.Stat(root); err != nil || !fi.IsDir() {
			return sysinfo.Facts{}, fmt.Errorf("--root %s: not a directory", root)
		}
	}
	f := sysinfo.Gather(root, sysinfo.Limits(s, applets.ModelFlags()))
	// A call run once per process takes the command line's defaults, and
	// what the environment sets.
	flags := applets.PersonFlags()
	app := &cli.App{Flags: flags, Writer: io.Discard, ErrWriter: io.Discard, Action: func(c *cli.Context) error {
		f.CallLimits = sysinfo.Limits(c, flags)
		if f.CallLimits["history"] == "" {
			f.CallLimits["history"] = "json:undo,flags:off" // by where the input came from
		}
		return nil
	}}
	_ = app.Run([]string{"toolkit"})
	if kept := jobs.KeptSpills(); kept.Dir != "" {
		f.Spills = &sysinfo.Spills{Dir: kept.Dir, Files: kept.Files, Bytes: kept.Bytes, Cap: jobs.SpillCap(kept.Dir, kept.Bytes)}
	}
	return f, nil
}
