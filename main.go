// Command toolkit carries out a model's tool calls inside a sandbox: shell
// runs a command, read shows a file, write replaces one. One static binary,
// busybox-style: the applet is named by the first argument (toolkit shell …)
// or by the link the binary is called through (toolkit-shell …).
package main

import (
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/urfave/cli/v2"

	"toolkit/applets/read"
	"toolkit/applets/shell"
	"toolkit/applets/write"
	"toolkit/internal/applet"
	"toolkit/internal/mcpserver"
	"toolkit/internal/outcome"
	"toolkit/internal/tools"
)

// version is toolkit's version; install.sh may set it with -ldflags -X.
var version = "0.1.0"

func main() {
	os.Exit(run(os.Args))
}

// applets are the tool applets, the ones a host calls.
func applets() []*cli.Command {
	return []*cli.Command{read.Command(), shell.Command(), write.Command()}
}

// others are the subcommands that are not tools; the drain is hidden.
func others() []*cli.Command {
	return []*cli.Command{tools.SchemaCommand(), mcpserver.Command(version), shell.DrainCommand()}
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

func run(argv []string) int {
	args := dispatch(argv)
	name := ""
	if len(args) > 1 {
		name = args[1]
	}
	if name == "help" {
		// toolkit help [APPLET] is toolkit [APPLET] --help.
		args = append(append([]string{"toolkit"}, args[2:]...), "--help")
		name = ""
		if len(args) > 2 {
			name = args[1]
		}
	}
	app := newApp()
	if name != "" && !strings.HasPrefix(name, "-") && app.Command(name) == nil {
		return unknownApplet(name).Print(os.Stdout, os.Stderr, "", applet.PrescanMode(args))
	}
	if strings.HasPrefix(name, "-") {
		name = ""
	}
	err := app.Run(args)
	if r, ok := applet.Returned(app); ok {
		return r.Outcome.Print(os.Stdout, os.Stderr, name, r.Mode)
	}
	if err != nil {
		return outcome.Misuse("%s", err).Print(os.Stdout, os.Stderr, name, applet.PrescanMode(args))
	}
	return outcome.StatusDone
}

func unknownApplet(name string) outcome.Outcome {
	return outcome.Misuse("no applet called %q; the applets are %s", name, strings.Join(names(), ", "))
}

// dispatch turns the arguments into toolkit's own form, toolkit APPLET …,
// when the binary was called through a link named after an applet.
func dispatch(argv []string) []string {
	if len(argv) == 0 {
		return []string{"toolkit"}
	}
	base := strings.TrimSuffix(filepath.Base(argv[0]), ".exe")
	if rest, ok := strings.CutPrefix(base, "toolkit-"); ok {
		return append([]string{"toolkit", rest}, argv[1:]...)
	}
	for _, n := range names() {
		if base == n {
			return append([]string{"toolkit", n}, argv[1:]...)
		}
	}
	return append([]string{"toolkit"}, argv[1:]...)
}

// names are the applets' names, sorted.
func names() []string {
	var out []string
	for _, c := range applets() {
		out = append(out, c.Name)
	}
	sort.Strings(out)
	return out
}

func newApp() *cli.App {
	cmds := applets()
	for _, c := range cmds {
		c.HideHelpCommand = true
	}
	cmds = append(cmds, others()...)
	return &cli.App{
		Name:                      "toolkit",
		HelpName:                  "toolkit",
		Usage:                     "carries out a model's tool calls in a sandbox",
		Version:                   version,
		Commands:                  cmds,
		Flags:                     []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print errors as JSON"}},
		CustomAppHelpTemplate:     helpTemplate,
		Reader:                    os.Stdin,
		Writer:                    os.Stdout,
		ErrWriter:                 os.Stderr,
		DisableSliceFlagSeparator: true,
		HideHelpCommand:           true,
		Metadata:                  map[string]any{},
		// toolkit alone lists the applets; toolkit --json nothing is still
		// an unknown applet.
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return applet.ReturnIn(c, unknownApplet(c.Args().First()), applet.PrescanMode(os.Args))
			}
			return cli.ShowAppHelp(c)
		},
		// main alone prints and exits.
		ExitErrHandler: func(*cli.Context, error) {},
		OnUsageError:   applet.FlagError("toolkit APPLET [flags] [arguments]"),
	}
}
