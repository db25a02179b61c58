// Package applet is the command-line glue every applet shares: the flags all
// of them take, telling machine mode (JSON on stdin) from person mode (flags
// and arguments), and handing the Outcome back to main, which alone prints it.
package applet

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/urfave/cli/v2"
	"golang.org/x/sys/unix"

	"toolkit/internal/input"
	"toolkit/internal/outcome"
	"toolkit/internal/root"
)

// Flags returns the flags every applet takes, followed by an applet's own.
// Each call makes new flags: urfave/cli keeps state in them.
func Flags(own ...cli.Flag) []cli.Flag {
	return append([]cli.Flag{
		&cli.BoolFlag{Name: "json", Usage: "print the outcome as one JSON object (also TOOLKIT_OUTPUT=json)"},
		&cli.StringFlag{Name: "root", Usage: "confine paths to `DIR` (also TOOLKIT_ROOT)", EnvVars: []string{"TOOLKIT_ROOT"}},
	}, own...)
}

const resultKey = "toolkit.outcome"

// Result is what an applet's Action hands back to main.
type Result struct {
	Outcome outcome.Outcome
	Mode    outcome.Mode
}

// Return stores o as the applet's result, to be printed by main in the mode
// the flags chose. It always returns nil: errors travel in the Outcome.
func Return(c *cli.Context, o outcome.Outcome) error {
	mode := outcome.TextMode
	if WantsJSON(c) {
		mode = outcome.JSONMode
	}
	return ReturnIn(c, o, mode)
}

// ReturnIn is Return with the output mode given.
func ReturnIn(c *cli.Context, o outcome.Outcome, mode outcome.Mode) error {
	c.App.Metadata[resultKey] = Result{Outcome: o, Mode: mode}
	return nil
}

// Returned is the result an applet stored, if it stored one.
func Returned(app *cli.App) (Result, bool) {
	r, ok := app.Metadata[resultKey].(Result)
	return r, ok
}

// WantsJSON reports whether the outcome should be printed as JSON.
func WantsJSON(c *cli.Context) bool {
	return c.Bool("json") || os.Getenv("TOOLKIT_OUTPUT") == "json"
}

// IsTerminal reports whether f is a terminal.
func IsTerminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

// Mode says where an applet's input comes from.
type Mode int

const (
	// Machine mode: a JSON object on stdin.
	Machine Mode = iota
	// Person mode: flags and arguments.
	Person
)

// ErrNoInput is returned when there are neither arguments nor JSON to read.
var ErrNoInput = errors.New("no input: give the arguments, or a JSON object on stdin")

// InputMode tells the two ways of giving input apart: arguments mean person
// mode; none, with stdin not a terminal, means JSON on stdin.
func InputMode(c *cli.Context) (Mode, error) {
	if c.NArg() > 0 {
		return Person, nil
	}
	if f, ok := c.App.Reader.(*os.File); ok && IsTerminal(f) {
		return Machine, ErrNoInput
	}
	return Machine, nil
}

// Gather fills a in from the command line: from the JSON on stdin in
// machine mode (inputFlags, the flags that stand for input fields, may not
// be given then), or with fromFlags in person mode. It returns the mode, for
// wording an error.
func Gather[A any](c *cli.Context, a *A, fromFlags func(*cli.Context, *A) error, inputFlags ...string) (Mode, error) {
	in, err := InputMode(c)
	if err != nil {
		return in, err
	}
	if in == Person {
		return in, fromFlags(c, a)
	}
	return in, DecodeStdin(c, a, inputFlags...)
}

// OpenRoot opens the --root directory, if one is given: nil without one.
func OpenRoot(c *cli.Context) (*root.Root, error) {
	dir := c.String("root")
	if dir == "" {
		return nil, nil
	}
	r, err := root.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("--root %s: no such directory", dir)
	}
	return r, nil
}

// DecodeStdin reads the JSON input from stdin into dst. inputFlags names the
// applet's flags that stand for input fields: they may not be mixed with JSON.
func DecodeStdin(c *cli.Context, dst any, inputFlags ...string) error {
	for _, name := range inputFlags {
		if c.IsSet(name) {
			return fmt.Errorf("--%s is an input field: with JSON on stdin, give it in the JSON", name)
		}
	}
	data, err := input.Read(c.App.Reader)
	if err != nil {
		return err
	}
	return input.Decode(data, dst)
}

// ToolError is an error found while gathering the input that is not the
// input's fault (a file named by a flag cannot be read): a tool error.
type ToolError string

func (e ToolError) Error() string { return string(e) }

// InputError turns an error found while gathering the input into its
// outcome: a tool error for a ToolError, else a usage error with the applet's
// usage line, where a *input.FieldError found in person mode is worded with the
// flag's name.
func InputError(err error, mode Mode, usage string) outcome.Outcome {
	var te ToolError
	if errors.As(err, &te) {
		return outcome.Failure("%s", te)
	}
	msg := err.Error()
	var fe *input.FieldError
	if mode == Person && errors.As(err, &fe) {
		msg = fe.PersonError()
	}
	o := outcome.Misuse("%s", msg)
	o.Usage = usage
	return o
}

// FlagError is urfave/cli's OnUsageError for every applet: a bad flag becomes
// a usage error outcome instead of help text on stdout.
func FlagError(usage string) cli.OnUsageErrorFunc {
	return func(c *cli.Context, err error, _ bool) error {
		msg := err.Error()
		if name, ok := strings.CutPrefix(msg, "flag provided but not defined: "); ok {
			msg = "unknown flag " + name
		}
		o := outcome.Misuse("%s", msg)
		o.Usage = usage
		return ReturnIn(c, o, PrescanMode(os.Args))
	}
}

// PrescanMode guesses the output mode from raw arguments, for errors found
// before the flags could be parsed.
func PrescanMode(args []string) outcome.Mode {
	mode := outcome.TextMode
	if os.Getenv("TOOLKIT_OUTPUT") == "json" {
		mode = outcome.JSONMode
	}
	for _, a := range args {
		switch a {
		case "--":
			return mode
		case "--json", "-json", "--json=true", "-json=true":
			mode = outcome.JSONMode
		case "--stream", "-stream", "--stream=true", "-stream=true":
			return outcome.StreamMode
		}
	}
	return mode
}
