//go:build linux

// Command toolkit carries out a model's tool calls inside a sandbox: shell
// runs a command, read shows a file, write replaces one. One static binary,
// busybox-style: the applet is named by the first argument (toolkit shell …)
// or by the link the binary is called through (toolkit-shell …). It runs on
// Linux only: /proc, prctl, subreapers and pseudo-terminals as Linux
// has them (main_other.go says so elsewhere).
package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"toolkit/applets"
	"toolkit/applets/call"
	"toolkit/applets/info"
	"toolkit/applets/mcp"
	"toolkit/applets/schema"
	"toolkit/internal/cmdline"
	"toolkit/internal/confine"
	"toolkit/internal/diag"
	"toolkit/internal/history"
	"toolkit/internal/jobs"
	"toolkit/internal/outcome"
	"toolkit/internal/proc"
)

// version is toolkit's version; install.sh may set it with -ldflags -X.
var version = "0.1.0"

func main() {
	os.Exit(run(os.Args))
}

const helpTemplate = `toolkit {{.Version}}: carries out a model's tool calls in a sandbox

usage: toolkit APPLET [flags] [arguments]
   or: toolkit-APPLET [flags] [arguments]   (through a link of that name)

applets:{{range .VisibleCommands}}
   {{printf "%-7s" .Name}} {{.Usage}}{{end}}

Each applet takes its input as JSON on stdin (a tool call's input) or as flags
and arguments; --json prints the outcome as JSON. See toolkit APPLET --help.
Exit status: 0 done, 1 the tool could not do it, 2 the input is wrong.
`

const usage = "toolkit APPLET [flags] [arguments]"

func run(argv []string) int {
	if len(argv) > 1 && argv[1] == confine.WrapName {
		// A confined command on its way to /bin/sh: before Harden, which
		// would close the descriptors handed to it.
		return confine.RunWrapped(argv[1:])
	}
	args := dispatch(argv)
	if len(args) == 2 && (args[1] == "--version" || args[1] == "-v") {
		// Asked before anything is set up: it runs nothing.
		fmt.Printf("toolkit version %s\n", version)
		return outcome.StatusDone
	}
	proc.Harden()
	if len(args) == 3 && args[1] == jobs.KeeperName {
		// A job's keeper: not a command a person runs, and it lives long,
		// so it skips the command line's set-up.
		return jobs.RunKeeper(args[2])
	}
	if len(args) == 4 && args[1] == history.KeeperName {
		// A tree's history keeper: the same, a process of its own that no
		// person starts.
		return history.RunKeeper(args[2], args[3])
	}
	if len(args) == 3 && args[1] == diag.KeeperName {
		// A kept language server's keeper: the same.
		return diag.RunKeeper(args[2])
	}
	if len(args) > 1 && args[1] == "help" {
		// toolkit help [APPLET] is toolkit [APPLET] --help.
		args = append(append([]string{"toolkit"}, args[2:]...), "--help")
	}
	name := ""
	if len(args) > 1 {
		name = args[1]
	}
	app := newApp(name)
	if cmd := app.Command(name); cmd != nil {
		if t, ok := applets.Find(name); ok && t.FlagsAfterArgs {
			args = append(args[:2:2], cmdline.FlagsFirst(cmd, args[2:])...)
		}
		args = append(args[:2:2], cmdline.JoinSwitches(cmd, args[2:])...)
	}
	err := app.Run(args)
	if exit, ok := errors.AsType[cli.ExitCoder](err); ok {
		return exit.ExitCode()
	}
	if err != nil {
		return outcome.Misuse("%s", err).Print(os.Stdout, os.Stderr, "", outcome.TextMode)
	}
	return outcome.StatusDone
}

// dispatch turns the arguments into toolkit's own form, toolkit APPLET …,
// when the binary was called through a link named after an applet.
func dispatch(argv []string) []string {
	if len(argv) == 0 {
		return []string{"toolkit"}
	}
	base := strings.TrimSuffix(filepath.Base(argv[0]), ".exe")
	if rest, ok := strings.CutPrefix(base, "toolkit-"); ok {
		if t, ok := applets.Find(rest); ok {
			rest = t.Name
		}
		return append([]string{"toolkit", rest}, argv[1:]...)
	}
	if t, ok := applets.Find(base); ok {
		return append([]string{"toolkit", t.Name}, argv[1:]...)
	}
	return append([]string{"toolkit"}, argv[1:]...)
}

// links are the names a link to toolkit may have to run an applet:
// toolkit-NAME for each, and each alias.
func links() []string {
	var names []string
	for _, t := range applets.All() {
		names = append(names, "toolkit-"+t.Name)
		names = append(names, t.Aliases...)
	}
	return names
}

// others are toolkit's commands that are not applets, by name.
var others = []struct {
	name string
	make func() *cli.Command
}{
	{"call", call.Command},
	{"info", info.Command},
	{"schema", schema.Command},
	{"mcp", func() *cli.Command { return mcp.Command(version) }},
	{"links", func() *cli.Command {
		return &cli.Command{
			Name: "links", Hidden: true, Usage: "list the names of toolkit's links, one a line (install.sh makes them)",
			Action: func(c *cli.Context) error {
				_, err := fmt.Fprintln(c.App.Writer, strings.Join(links(), "\n"))
				return err
			},
		}
	}},
}

// newApp is toolkit's command line. Only the command named is built, when
// name is one: a call pays for its own flags, not every applet's. Any
// other name (none, --help, a name that is no command's) gets them all.
func newApp(name string) *cli.App {
	var cmds []*cli.Command
	if t, ok := applets.Find(name); ok {
		cmds = append(cmds, t.Command())
	}
	for _, o := range others {
		if o.name == name {
			cmds = append(cmds, o.make())
		}
	}
	if cmds == nil {
		for _, t := range applets.All() {
			cmds = append(cmds, t.Command())
		}
		slices.SortFunc(cmds, func(a, b *cli.Command) int { return strings.Compare(a.Name, b.Name) })
		for _, o := range others {
			cmds = append(cmds, o.make())
		}
	}
	return &cli.App{
		Name:                      "toolkit",
		HelpName:                  "toolkit",
		Usage:                     "carries out a model's tool calls in a sandbox",
		Version:                   version,
		Commands:                  cmds,
		Flags:                     cmdline.NamedOnce(&cli.BoolFlag{Name: "json", Usage: "print errors as JSON"}),
		CustomAppHelpTemplate:     helpTemplate,
		Reader:                    os.Stdin,
		Writer:                    os.Stdout,
		ErrWriter:                 os.Stderr,
		DisableSliceFlagSeparator: true,
		HideHelpCommand:           true,
		// toolkit alone lists the applets; anything else that is not an
		// applet is an unknown one.
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				names := applets.Names()
				slices.Sort(names)
				o := outcome.Misuse("no applet called %q; the applets are %s", c.Args().First(), strings.Join(names, ", "))
				return cli.Exit("", o.Print(c.App.Writer, c.App.ErrWriter, "", cmdline.OutputMode(c)))
			}
			return cli.ShowAppHelp(c)
		},
		// main alone exits.
		ExitErrHandler: func(*cli.Context, error) {},
		OnUsageError:   cmdline.UsageError(usage),
	}
}
