package main

import (
	"flag"
	"os"
	"strings"

	"github.com/urfave/cli/v2"
)

// shellFlags are toolkit shell's flags, as parse_test.go holds them to
// toolkit's: by kind (b a bool, s a string, i an int, d a duration, l a
// list given again for each item, t a switch that also takes a value), name
// and environment variable.
var shellFlags = []struct{ kind, name, env string }{
	{"b", "json", ""}, {"s", "root", "TOOLKIT_ROOT"}, {"s", "cwd", ""}, {"i", "timeout", ""},
	{"l", "env", ""}, {"s", "stdin-file", ""}, {"i", "yield", ""}, {"b", "background", ""},
	{"b", "tty", ""}, {"i", "rows", ""}, {"i", "cols", ""}, {"s", "session", ""},
	{"s", "diagnostics", ""}, {"s", "severity", ""}, {"i", "max-output", "TOOLKIT_MAX_OUTPUT"},
	{"b", "raw", "TOOLKIT_RAW"}, {"b", "kill-background", "TOOLKIT_KILL_BACKGROUND"},
	{"d", "grace", "TOOLKIT_GRACE"}, {"d", "idle", "TOOLKIT_IDLE"}, {"d", "quiet", "TOOLKIT_QUIET"},
	{"d", "linger", "TOOLKIT_LINGER"}, {"d", "job-lifetime", "TOOLKIT_JOB_LIFETIME"},
	{"t", "confine", "TOOLKIT_CONFINE"}, {"s", "writable", "TOOLKIT_WRITABLE"},
	{"i", "limit-memory", "TOOLKIT_LIMIT_MEMORY"}, {"i", "limit-pids", "TOOLKIT_LIMIT_PIDS"},
	{"s", "shell", "TOOLKIT_SHELL"}, {"s", "history", "TOOLKIT_HISTORY"},
	{"b", "history-keeper", "TOOLKIT_HISTORY_KEEPER"}, {"d", "history-lifetime", "TOOLKIT_HISTORY_LIFETIME"},
	{"i", "history-max-file", "TOOLKIT_HISTORY_MAX_FILE"}, {"i", "history-max-call", "TOOLKIT_HISTORY_MAX_CALL"},
	{"i", "history-store", "TOOLKIT_HISTORY_STORE"}, {"d", "diagnostics-wait", "TOOLKIT_DIAGNOSTICS_WAIT"},
	{"d", "diagnostics-lifetime", "TOOLKIT_DIAGNOSTICS_LIFETIME"}, {"s", "lsp", "TOOLKIT_LSP"},
	{"b", "stream", ""}, {"b", "status", ""},
}

// switchValue is a flag's value that, given alone, is true.
type switchValue string

func (v *switchValue) Set(s string) error { *v = switchValue(s); return nil }
func (v *switchValue) String() string     { return string(*v) }
func (v *switchValue) IsBoolFlag() bool   { return true }

// listValue is a flag's value that each use adds to.
type listValue []string

func (v *listValue) Set(s string) error { *v = append(*v, s); return nil }
func (v *listValue) String() string     { return strings.Join(*v, ",") }

// withCli parses args, toolkit shell's command line from its applet's name
// on, with urfave/cli as its documentation shows: an app whose one command
// has those flags, each of urfave/cli's own kinds. Its action is then run.
func withCli(args []string, run func()) {
	var flags []cli.Flag
	for _, f := range shellFlags {
		var env []string
		if f.env != "" {
			env = []string{f.env}
		}
		switch f.kind {
		case "b":
			flags = append(flags, &cli.BoolFlag{Name: f.name, EnvVars: env})
		case "s":
			flags = append(flags, &cli.StringFlag{Name: f.name, EnvVars: env})
		case "i":
			flags = append(flags, &cli.IntFlag{Name: f.name, EnvVars: env})
		case "d":
			flags = append(flags, &cli.DurationFlag{Name: f.name, EnvVars: env})
		case "l":
			flags = append(flags, &cli.GenericFlag{Name: f.name, EnvVars: env, Value: new(listValue)})
		case "t":
			flags = append(flags, &cli.GenericFlag{Name: f.name, EnvVars: env, Value: new(switchValue)})
		}
	}
	app := &cli.App{
		Name:  "toolkit",
		Flags: []cli.Flag{&cli.BoolFlag{Name: "json"}},
		Commands: []*cli.Command{{
			Name: "shell", Flags: flags,
			Action: func(c *cli.Context) error {
				if c.NArg() == 0 {
					os.Exit(2)
				}
				run()
				return nil
			},
		}},
	}
	if err := app.Run(append([]string{"toolkit"}, args...)); err != nil {
		fail(err)
	}
}

// withFlag parses the same command line with the standard library's flag
// package alone: a set of the same flags, each set first from its
// environment variable, as urfave/cli does. It knows the applet is shell.
func withFlag(args []string, run func()) {
	set := flag.NewFlagSet("shell", flag.ContinueOnError)
	for _, f := range shellFlags {
		switch f.kind {
		case "b":
			set.Bool(f.name, false, "")
		case "s":
			set.String(f.name, "", "")
		case "i":
			set.Int(f.name, 0, "")
		case "d":
			set.Duration(f.name, 0, "")
		case "l":
			set.Var(new(listValue), f.name, "")
		case "t":
			set.Var(new(switchValue), f.name, "")
		}
	}
	for _, f := range shellFlags {
		if f.env == "" {
			continue
		}
		if v, ok := os.LookupEnv(f.env); ok && set.Set(f.name, strings.TrimSpace(v)) != nil {
			os.Exit(2)
		}
	}
	if len(args) == 0 || args[0] != "shell" || set.Parse(args[1:]) != nil || set.NArg() == 0 {
		os.Exit(2)
	}
	run()
}
