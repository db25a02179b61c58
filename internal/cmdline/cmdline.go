// Package cmdline is the command line every applet shares: one generic
// Applet that makes an applet's urfave/cli command from its Args type (the
// flags that stand for input fields come from the fields' flag tags, so each
// is named once), tells machine mode (JSON on stdin) from person mode (flags
// and arguments), prints the Outcome and exits with its status.
package cmdline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"
	"golang.org/x/sys/unix"

	"toolkit/internal/confine"
	"toolkit/internal/input"
	"toolkit/internal/outcome"
	"toolkit/internal/proc"
	"toolkit/internal/replace"
	"toolkit/internal/root"
)

// Settings are the host's settings for a call, by flag name: the command
// line's flags for an applet run from it, toolkit mcp's for its calls.
// *cli.Context is one.
type Settings interface {
	Bool(name string) bool
	Int(name string) int
	Int64(name string) int64
	String(name string) string
	Duration(name string) time.Duration
	IsSet(name string) bool
	Value(name string) any
}

// Host is what the host gives a call besides its input.
type Host struct {
	Root     *root.Root // nil: paths are not confined
	Settings Settings
	// Mode is how the Outcome will be printed; Stdout is where, for an
	// applet that shows its work as it goes (shell on a terminal, --stream).
	// Neither is set for a call from toolkit mcp.
	Mode   outcome.Mode
	Stdout io.Writer
	// Signals carries the signals toolkit receives after the first, which
	// cancels the call's context with a proc.Cause.
	Signals <-chan os.Signal
	// Details says the host takes the Outcome's details (--json, or toolkit
	// mcp's structured content): facts that cost work to find, such as a
	// whole file's sha256, are found.
	Details bool
	// Person says the input came from a person's command line, not JSON:
	// history is off unless asked.
	Person bool
	// Keeps, when history follows the call, is the largest file whose
	// content it keeps: write reads a file's old content up to it, which it
	// would not read otherwise.
	Keeps int64
	// Bash says the model was told the tool runs bash (toolkit call's
	// Anthropic bash tool, OpenAI's shell_call): bash runs its commands
	// where the image has one.
	Bash bool
}

// Applet describes an applet for the command line and for in-process calls.
type Applet[A any] struct {
	Name     string     // "read"
	Usage    string     // its line in toolkit's list of applets
	Synopsis string     // its usage line: "toolkit read [flags] PATH"
	Example  string     // a JSON input, for --help
	Flags    []cli.Flag // the host's settings (beside the input's flags, made from A)
	// Person, when set, fills in from the command line what A's flag tags
	// do not say (content from stdin); it runs after the tags are applied.
	Person func(c *cli.Context, a *A) error
	// Stdin, when set, may take machine mode's input when it is not JSON
	// (a patch given as it is), and reports whether it did.
	Stdin func(data []byte, a *A) bool
	// Bare says the applet may be run with neither arguments nor JSON (job
	// lists the jobs): a terminal or an empty stdin is then person mode.
	Bare bool
	// Run carries out one call.
	Run func(ctx context.Context, a *A, h Host) outcome.Outcome

	// What hosts and models are told of it.
	Description string // written for the model
	// Describe, when set, is the description under the host's settings
	// (shell's names the shell --shell chose).
	Describe func(s Settings) string
	Details  any // a zero value of its Details: what --json adds to ok and text
	Hints    Hints
	Aliases  []string // other names its link may have (apply_patch)
	// FlagsAfterArgs says its command line takes flags after its arguments
	// (edit PATH --old TEXT --new TEXT).
	FlagsAfterArgs bool
	// Settings are the host settings it takes: on its command line with
	// their Person defaults, under toolkit mcp and toolkit call with their
	// Model ones (a model's context is smaller than a person's terminal).
	// Flags holds its command line's other flags.
	Settings []AnySetting
	// Child says that toolkit mcp runs each call as a child toolkit: the
	// tools that start processes, so that a call that crashes or leaves
	// processes behind cannot take the server with it.
	Child bool
	// Around wraps each of its calls' runs, the first outermost: history
	// is such a wrapper (internal/history/track), named by the applets it
	// follows. WorkDir, when set, is the directory a call works in, as
	// Call.Dir says it.
	Around  []Around
	WorkDir func(a *A, h Host) string
	// History says the applet shows or takes back what history kept
	// (history, undo): with history off, toolkit mcp does not offer it.
	History bool
}

// Around wraps an applet's run of one call, as mvdan/sh's ExecHandlers
// wrap a command: it sees the call before its run, may give the run a
// host of its own making, and gets its outcome after.
type Around func(ctx context.Context, c Call, next Next) outcome.Outcome

// Next runs the rest of a call, on the host h.
type Next func(ctx context.Context, h Host) outcome.Outcome

// Call is one call of an applet, as what wraps its run sees it.
type Call struct {
	Applet string
	Host   Host
	// Dir is the directory the call works in: the applet's WorkDir ("":
	// none, a job call that names no job, say), else the root, else the
	// caller's.
	Dir func() string
	// Args is the call's input: a pointer to the applet's Args, whose
	// fields a wrapper may read through an interface of its own (diag's
	// Fields, which write, edit, patch and shell embed).
	Args any
}

// Hints say what a tool may do to the world, for hosts that ask before
// running one (MCP's annotations).
type Hints struct {
	ReadOnly    bool `json:"read_only"`
	Idempotent  bool `json:"idempotent"`
	Destructive bool `json:"destructive"`
	OpenWorld   bool `json:"open_world"`
}

// Call decodes data, a call's JSON input, strictly into an A (a usage error
// names what is wrong), and runs it.
func (ap Applet[A]) Call(ctx context.Context, data []byte, h Host) outcome.Outcome {
	var a A
	if err := input.Decode(data, &a); err != nil {
		return ap.misuse(err.Error(), machine)
	}
	return ap.run(ctx, &a, h)
}

// run runs one call of the applet, after recovering the commits whose
// toolkit died in the middle (a patch killed with -9): the tree a call sees
// is never half of one, whichever applet the call is for, and what was done
// is said before its answer. Where there is no journal, that is a read of
// one directory.
func (ap Applet[A]) run(ctx context.Context, a *A, h Host) outcome.Outcome {
	recovered := replace.Recover(h.Root)
	next := func(ctx context.Context, h Host) outcome.Outcome { return ap.Run(ctx, a, h) }
	for _, around := range slices.Backward(ap.Around) {
		inner := next
		next = func(ctx context.Context, h Host) outcome.Outcome {
			return around(ctx, Call{Applet: ap.Name, Host: h, Dir: func() string { return ap.dir(a, h) }, Args: a}, inner)
		}
	}
	return replace.Recovered(recovered, next(ctx, h))
}

// dir is the directory a call works in (Call.Dir).
func (ap Applet[A]) dir(a *A, h Host) string {
	switch {
	case ap.WorkDir != nil:
		return ap.WorkDir(a, h)
	case h.Root != nil:
		return h.Root.Dir()
	}
	dir, _ := os.Getwd()
	return dir
}

func (ap Applet[A]) misuse(msg string, in inputMode) outcome.Outcome {
	o := outcome.Misuse("%s", msg)
	o.Usage = ap.usage(in)
	return o
}

// usage is what a usage error points to: the command line's flags in person
// mode; for a JSON input, its fields, which toolkit schema shows.
func (ap Applet[A]) usage(in inputMode) string {
	if in == person {
		return ap.Synopsis
	}
	return "a JSON object with the fields of toolkit schema " + ap.Name
}

// Command is the applet's command line.
func (ap Applet[A]) Command() *cli.Command {
	fields := input.Fields(reflect.TypeFor[A]())
	flags := append(CommonFlags(), inputFlags(fields)...)
	for _, st := range ap.Settings {
		flags = append(flags, st.Flag(false))
	}
	text := ap.Synopsis
	if ap.Example != "" {
		text += "\n   echo '" + ap.Example + "' | toolkit " + ap.Name
	}
	return &cli.Command{
		Name:            ap.Name,
		Usage:           ap.Usage,
		UsageText:       text,
		Description:     EnvHelp,
		Flags:           namedOnce(append(flags, ap.Flags...)),
		HideHelpCommand: true,
		OnUsageError:    UsageError(ap.Synopsis),
		Action: func(c *cli.Context) error {
			mode := OutputMode(c)
			var a A
			in, err := ap.gather(c, &a, fields)
			var r *root.Root
			if err == nil {
				r, err = OpenRoot(c)
			}
			if err != nil {
				return Exit(c, ap.inputError(err, in), mode)
			}
			defer r.Close()
			ctx, stop, again := SignalContext()
			defer stop()
			o := ap.run(ctx, &a, Host{Root: r, Settings: c, Mode: mode, Stdout: c.App.Writer, Signals: again, Details: mode != outcome.TextMode, Person: in == person})
			if o.Kind == outcome.UsageError && (in == machine || o.Usage == "") {
				o.Usage = ap.usage(in) // for JSON input, its fields, not the flags
			}
			return Exit(c, o, mode)
		},
	}
}

// EnvHelp is what every command's --help says of the environment toolkit
// reads besides its flags' own variables.
const EnvHelp = `TOOLKIT_STATE is the state directory: jobs, sessions, the journals of patches and the history
of calls (default $XDG_RUNTIME_DIR/toolkit, else /tmp/toolkit-UID). Give each agent one of its
own: two agents sharing one share their jobs and their history.
TOOLKIT_ROOT is --root; TOOLKIT_OUTPUT=json is --json.`

// CommonFlags are the flags every applet takes.
func CommonFlags() []cli.Flag {
	return []cli.Flag{
		&cli.BoolFlag{Name: "json", Usage: "print the outcome as one JSON object (also TOOLKIT_OUTPUT=json)"},
		RootFlag("confine paths to `DIR`"),
	}
}

// RootFlag is --root (also TOOLKIT_ROOT), with what it does for a command.
func RootFlag(usage string) cli.Flag {
	return &cli.StringFlag{Name: "root", Usage: usage + " (also TOOLKIT_ROOT)", EnvVars: []string{"TOOLKIT_ROOT"}}
}

// Exit prints o as mode says and ends the command with o's exit status.
func Exit(c *cli.Context, o outcome.Outcome, mode outcome.Mode) error {
	proc.Caught() // a closed output is an error, not the end of toolkit
	applet := ""
	if c.Command != nil && c.Command.Name != c.App.Name {
		applet = c.Command.Name
	}
	return cli.Exit("", o.Print(c.App.Writer, c.App.ErrWriter, applet, mode))
}

// OutputMode is how the outcome is printed: --stream (an applet's own
// flag), --json or TOOLKIT_OUTPUT=json, else text. With flags parsed only up
// to a bad one, it goes by those before it.
func OutputMode(c *cli.Context) outcome.Mode {
	switch {
	case c.Bool("stream"):
		return outcome.StreamMode
	case c.Bool("json") || os.Getenv("TOOLKIT_OUTPUT") == "json":
		return outcome.JSONMode
	}
	return outcome.TextMode
}

// Misuse ends a presenter's command (mcp, call, schema) with a usage
// error, in text, that points to its usage line.
func Misuse(c *cli.Context, err error, usage string) error {
	o := outcome.Misuse("%s", err)
	o.Usage = usage
	return Exit(c, o, outcome.TextMode)
}

// UsageError is urfave/cli's OnUsageError for a command: a bad flag is a
// usage error outcome, not help text on stdout.
func UsageError(usage string) cli.OnUsageErrorFunc {
	return func(c *cli.Context, err error, _ bool) error {
		msg := err.Error()
		if name, ok := strings.CutPrefix(msg, "flag provided but not defined: "); ok {
			msg = "unknown flag " + name
		}
		o := outcome.Misuse("%s", msg)
		o.Usage = usage
		return Exit(c, o, OutputMode(c))
	}
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

// SignalContext is a context that the first SIGTERM, SIGINT or SIGHUP
// cancels with a proc.Cause, and a channel that carries the ones after it.
func SignalContext() (context.Context, func(), <-chan os.Signal) {
	ctx, cancel := context.WithCancelCause(context.Background())
	sigs := make(chan os.Signal, 4)
	again := make(chan os.Signal, 4)
	listening := proc.Listen(sigs)
	done := make(chan struct{})
	go func() {
		first := true
		for {
			select {
			case s := <-sigs:
				if first {
					first = false
					cancel(Signalled(unix.SignalName(s.(syscall.Signal))))
					continue
				}
				select {
				case again <- s:
				default:
				}
			case <-done:
				return
			}
		}
	}()
	return ctx, func() { listening(); close(done); cancel(nil) }, again
}

// Signalled is the cause of a call's stop that a signal to toolkit (its
// name: SIGTERM) is.
func Signalled(name string) *proc.Cause {
	return &proc.Cause{Kind: proc.Signalled, By: name, Whom: "toolkit"}
}

// IsTerminal reports whether f is a terminal.
func IsTerminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

// inputMode says where an applet's input comes from.
type inputMode int

const (
	machine inputMode = iota // a JSON object on stdin
	person                   // flags and arguments
)

// ErrNoInput is returned when there are neither arguments nor JSON to read.
var ErrNoInput = errors.New("no input: give the arguments, or a JSON object on stdin")

// gather fills a in from the command line: from the JSON on stdin in
// machine mode (the flags that stand for input fields may not be given
// then), or from the flags and arguments in person mode.
func (ap Applet[A]) gather(c *cli.Context, a *A, fields []Field) (inputMode, error) {
	if c.NArg() == 0 {
		if f, ok := c.App.Reader.(*os.File); ok && IsTerminal(f) {
			if ap.Bare {
				return ap.fromPerson(c, a, fields)
			}
			return machine, ErrNoInput
		}
		data, err := input.Read(c.App.Reader)
		if err != nil {
			return machine, err
		}
		if ap.Bare && len(bytes.TrimSpace(data)) == 0 {
			return ap.fromPerson(c, a, fields)
		}
		if ap.Stdin != nil && ap.Stdin(data, a) {
			// Not JSON: the flags say the rest, as in person mode.
			if err := fromFlags(c, reflect.ValueOf(a).Elem(), fields); err != nil {
				return person, err
			}
			return person, input.Check(a)
		}
		for _, f := range fields {
			if name, ok := flagName(f); ok && c.IsSet(name) {
				return machine, fmt.Errorf("--%s is an input field: with JSON on stdin, give it in the JSON", name)
			}
		}
		return machine, input.Decode(data, a)
	}
	return ap.fromPerson(c, a, fields)
}

// fromPerson fills a in from the flags and arguments.
func (ap Applet[A]) fromPerson(c *cli.Context, a *A, fields []Field) (inputMode, error) {
	if err := fromFlags(c, reflect.ValueOf(a).Elem(), fields); err != nil {
		return person, err
	}
	if ap.Person != nil {
		if err := ap.Person(c, a); err != nil {
			return person, err
		}
	}
	return person, input.Check(a)
}

// ToolError is an error found while gathering the input that is not the
// input's fault (a file named by a flag cannot be read): a tool error.
type ToolError string

func (e ToolError) Error() string { return string(e) }

// inputError turns an error found while gathering the input into its
// outcome: a tool error for a ToolError, else a usage error with the applet's
// usage line, where a *input.FieldError found in person mode is worded with
// the flag's name.
func (ap Applet[A]) inputError(err error, in inputMode) outcome.Outcome {
	if te, ok := errors.AsType[ToolError](err); ok {
		return outcome.Failure("%s", te)
	}
	msg := err.Error()
	var fe *input.FieldError
	if in == person && errors.As(err, &fe) {
		msg = fe.PersonError()
	}
	return ap.misuse(msg, in)
}

// Confine and Writable are the host's confinement of commands, which shell
// takes and the presenters check as they start (CheckConfine).
var (
	Confine = &Setting[string]{Name: "confine", Env: "TOOLKIT_CONFINE", Person: "false", Switch: []string{"true", "false", "require"},
		Usage: "confine commands with Landlock: true (where the kernel can; --confine alone), require (refuse where it cannot) or false; needs --root"}
	Writable = &Setting[string]{Name: "writable", Env: "TOOLKIT_WRITABLE",
		Usage: "with --confine, `DIRS` (colon-separated) a command may write besides the root and its TMPDIR"}
)

// HostConfine reads the host's --confine and --writable.
func HostConfine(s Settings) (confine.Mode, []string, error) {
	return confine.HostFlags(Confine.Get(s), Writable.Get(s))
}

// CheckConfine checks the host's --confine and --writable (settings s) for
// toolkit mcp and toolkit call as they start, as confine.HostCheck says.
func CheckConfine(s Settings, r *root.Root) error {
	mode, _, err := HostConfine(s)
	if err != nil {
		return err
	}
	dir := ""
	if r != nil {
		dir = r.Dir()
	}
	return confine.HostCheck(mode, dir)
}
