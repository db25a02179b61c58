package cmdline

import (
	"flag"
	"fmt"
	"io/fs"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"toolkit/internal/input"
)

// Field is an input field, as the command line sees it.
type Field = input.Field

// A field's flag tag says how person mode gives it:
//
//	flag:"--timeout N"          a flag with a value (N names it in --help)
//	flag:"--stdin-file FILE,file"  a flag that names a file holding the value
//	flag:"--all"                a boolean flag
//	flag:"PATH"                 the one argument
//	flag:"COMMAND..."           all the arguments, joined by spaces (a list field: each one)
//
// Any other tag ("stdin") is left to the applet's Person function.
type flagSpec struct {
	name     string // "timeout", without the dashes; "" for an argument
	arg      string // "N", "PATH", "COMMAND"
	many     bool   // COMMAND...: all the arguments
	file     bool   // the value is a file's content
	argument bool
}

func specOf(f Field) (flagSpec, bool) {
	tag, file := strings.CutSuffix(f.Flag, ",file")
	name, arg, _ := strings.Cut(tag, " ")
	if n, ok := strings.CutPrefix(name, "--"); ok {
		return flagSpec{name: n, arg: arg, file: file}, true
	}
	if name == "" || strings.ToUpper(name) != name {
		return flagSpec{}, false
	}
	arg, many := strings.CutSuffix(name, "...")
	return flagSpec{arg: arg, many: many, argument: true}, true
}

// flagName is the name of the flag that stands for f, if one does.
func flagName(f Field) (string, bool) {
	s, ok := specOf(f)
	return s.name, ok && !s.argument
}

// inputFlags are the flags that stand for input fields.
func inputFlags(fields []Field) []cli.Flag {
	var flags []cli.Flag
	for _, f := range fields {
		s, ok := specOf(f)
		if !ok || s.argument {
			continue
		}
		usage := f.Usage
		if usage == "" {
			usage, _, _ = strings.Cut(f.Desc, ". ")
			usage = strings.ToLower(usage[:1]) + strings.TrimSuffix(usage[1:], ".")
		}
		if s.arg != "" {
			// urfave/cli shows the word in backquotes as the flag's value.
			if strings.Contains(usage, s.arg) {
				usage = strings.Replace(usage, s.arg, "`"+s.arg+"`", 1)
			} else {
				usage = "`" + s.arg + "`: " + usage
			}
		}
		switch {
		case f.Type == input.Boolean:
			flags = append(flags, &cli.BoolFlag{Name: s.name, Usage: usage})
		case f.Type == input.Integer:
			flags = append(flags, &cli.IntFlag{Name: s.name, Usage: usage})
		case f.Type == input.StringMap || f.Type == input.List:
			flags = append(flags, TextsFlag(s.name, usage))
		default:
			flags = append(flags, &cli.StringFlag{Name: s.name, Usage: usage})
		}
	}
	return flags
}

// fromFlags fills the struct st from the flags and arguments that stand for
// its fields.
func fromFlags(c *cli.Context, st reflect.Value, fields []Field) error {
	args := c.Args().Slice()
	var names []string // the arguments' names, for the message when too many
	for _, f := range fields {
		s, ok := specOf(f)
		if !ok {
			continue
		}
		if s.argument {
			// The arguments fill the argument fields in order; a last one
			// of the form NAME... takes all that are left, joined.
			names = append(names, s.arg)
			switch {
			case s.many && f.Type == input.List:
				// PATH... of a list: each argument one of it.
				if len(args) > 0 {
					set(st, f, reflect.ValueOf(args))
				}
				args = nil
			case s.many:
				set(st, f, reflect.ValueOf(strings.Join(args, " ")))
				args = nil
			case len(args) == 0 && !f.Required:
				// An optional argument left out: the field is absent.
			case len(args) == 0:
				set(st, f, reflect.ValueOf(""))
			default:
				set(st, f, reflect.ValueOf(args[0]))
				args = args[1:]
			}
			continue
		}
		if !c.IsSet(s.name) {
			continue
		}
		switch f.Type {
		case input.Boolean:
			set(st, f, reflect.ValueOf(c.Bool(s.name)))
		case input.Integer:
			set(st, f, reflect.ValueOf(c.Int(s.name)))
		case input.StringMap:
			m := map[string]string{}
			for _, kv := range TextsOf(c, s.name) {
				k, v, ok := strings.Cut(kv, "=")
				if !ok {
					return fmt.Errorf("--%s wants NAME=VALUE, not %q", s.name, kv)
				}
				m[k] = v
			}
			set(st, f, reflect.ValueOf(m))
		case input.List:
			if f.Elem.Type != input.Integer {
				set(st, f, reflect.ValueOf(TextsOf(c, s.name)))
				break
			}
			// Numbers: one or more to a flag, between commas.
			var ns []int
			for _, t := range TextsOf(c, s.name) {
				for w := range strings.SplitSeq(t, ",") {
					n, err := strconv.Atoi(strings.TrimSpace(w))
					if err != nil {
						return fmt.Errorf("--%s wants whole numbers between commas, not %q", s.name, t)
					}
					ns = append(ns, n)
				}
			}
			set(st, f, reflect.ValueOf(ns))
		default:
			v := c.String(s.name)
			if s.file {
				b, err := readFile(v)
				if err != nil {
					return err
				}
				v = string(b)
			}
			set(st, f, reflect.ValueOf(v))
		}
	}
	// (An applet with no argument field reads its arguments itself.)
	if len(args) > 0 && len(names) > 0 {
		if len(names) == 1 {
			return fmt.Errorf("one %s, not %d arguments", names[0], c.NArg())
		}
		return fmt.Errorf("at most %s, not %d arguments", strings.Join(names, " "), c.NArg())
	}
	return nil
}

// set stores v in the field f of st, through a new pointer for a pointer field.
func set(st reflect.Value, f Field, v reflect.Value) {
	dst := st.FieldByIndex(f.Index())
	if dst.Kind() == reflect.Pointer {
		p := reflect.New(dst.Type().Elem())
		p.Elem().Set(v.Convert(dst.Type().Elem()))
		dst.Set(p)
		return
	}
	dst.Set(v.Convert(dst.Type()))
}

// readFile reads a file named on the command line, bounded as an input is.
func readFile(name string) ([]byte, error) {
	f, err := os.Open(name)
	if err == nil {
		defer f.Close()
		var b []byte
		if b, err = input.Read(f); err == nil {
			return b, nil
		}
	}
	if pe, ok := err.(*fs.PathError); ok {
		err = pe.Err
	}
	return nil, ToolError(fmt.Sprintf("%s: cannot read: %s", name, err))
}

// FlagsFirst moves the flags in args before the arguments, so that a
// command line like edit's, toolkit edit PATH --old TEXT --new TEXT, parses:
// urfave/cli stops at the first argument. A flag that takes a value takes
// the next word with it; "--" ends the flags.
func FlagsFirst(cmd *cli.Command, args []string) []string {
	takesValue := map[string]bool{}
	for _, f := range cmd.Flags {
		_, isBool := kind(f).(*cli.BoolFlag)
		for _, n := range f.Names() {
			takesValue[n] = !isBool
		}
	}
	var flags, rest []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return append(append(flags, "--"), append(rest, args[i+1:]...)...)
		case strings.HasPrefix(a, "-") && len(a) > 1:
			flags = append(flags, a)
			name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
			if takesValue[name] && !hasValue && i+1 < len(args) {
				i++
				flags = append(flags, args[i])
			}
		default:
			rest = append(rest, a)
		}
	}
	return append(flags, rest...)
}

// Texts is the value of a flag given once or more, each value kept as it
// is: urfave/cli's StringSliceFlag trims the spaces around each, and an
// edit's --old text begins with its indentation.
type Texts []string

func (t *Texts) Set(s string) error { *t = append(*t, s); return nil }
func (t *Texts) String() string     { return strings.Join(*t, ", ") }

// TextsFlag is a repeatable flag whose values are kept as they are.
func TextsFlag(name, usage string) cli.Flag {
	return &cli.GenericFlag{Name: name, Usage: usage, Value: &Texts{}}
}

// TextsOf is the values of a TextsFlag.
func TextsOf(c *cli.Context, name string) []string {
	if t, ok := c.Generic(name).(*Texts); ok {
		return *t
	}
	return nil
}

// JoinSwitches joins a switch flag (a Setting with Switch: --confine) and
// the word after it, when that word is one of the switch's values, as the
// flag took it before it could stand alone: --confine true is
// --confine=true. Only the flags before the first argument are read, as
// urfave/cli reads them.
func JoinSwitches(cmd *cli.Command, args []string) []string {
	takesValue, words := map[string]bool{}, map[string][]string{}
	for _, f := range cmd.Flags {
		_, isBool := kind(f).(*cli.BoolFlag)
		if g, ok := kind(f).(*cli.GenericFlag); ok {
			if sv, ok := g.Value.(*switchValue); ok {
				isBool = true
				for _, n := range f.Names() {
					words[n] = sv.words
				}
			}
		}
		for _, n := range f.Names() {
			takesValue[n] = !isBool
		}
	}
	out := slices.Clone(args)
	for i := 0; i < len(out); i++ {
		a := out[i]
		if a == "--" || !strings.HasPrefix(a, "-") || len(a) == 1 {
			break
		}
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		switch {
		case hasValue:
		case words[name] != nil && i+1 < len(out) && slices.Contains(words[name], out[i+1]):
			out = slices.Replace(out, i, i+2, a+"="+out[i+1])
		case takesValue[name]:
			i++
		}
	}
	return out
}

// urfave/cli adds its own --help to every command and --version to the
// app: they are named once as the applets' own flags are.
func init() {
	cli.HelpFlag = namedOnce([]cli.Flag{cli.HelpFlag})[0]
	cli.VersionFlag = namedOnce([]cli.Flag{cli.VersionFlag})[0]
}

// NamedOnce is namedOnce, for flags made outside an applet's command.
func NamedOnce(flags ...cli.Flag) []cli.Flag { return namedOnce(flags) }

// namedOnce gives each flag its names worked out once. urfave/cli works a
// flag's names out (a regexp replace each) whenever it asks for them, and
// before an applet runs it asks for every flag's names for each flag of
// the command (runFlagActions, IsSet): a toolkit shell true called its
// FlagNames 1,157 times, 111 with this, and none with Apply below and
// urfave/cli's own --help and --version named once too (counted with perf
// probe); the names are worked out without a regexp (flagNames). A flag of
// a kind not listed here is kept as it is.
func namedOnce(flags []cli.Flag) []cli.Flag {
	out := make([]cli.Flag, len(flags))
	for i, f := range flags {
		switch f := f.(type) {
		case *cli.BoolFlag:
			out[i] = &boolFlag{f, flagNames(f.Name, f.Aliases)}
		case *cli.StringFlag:
			out[i] = &stringFlag{f, flagNames(f.Name, f.Aliases)}
		case *cli.IntFlag:
			out[i] = &intFlag{f, flagNames(f.Name, f.Aliases)}
		case *cli.DurationFlag:
			out[i] = &durationFlag{f, flagNames(f.Name, f.Aliases)}
		case *cli.GenericFlag:
			out[i] = &genericFlag{GenericFlag: f, names: flagNames(f.Name, f.Aliases)}
		case *cli.StringSliceFlag:
			out[i] = &stringSliceFlag{f, flagNames(f.Name, f.Aliases)}
		default:
			out[i] = f
		}
	}
	return out
}

// flagNames is cli.FlagNames without its regexp (a replace a name, run cold
// at every start): each name cut at its first comma or space, urfave/cli
// v1's "name, alias" form, which toolkit's names never have.
func flagNames(name string, aliases []string) []string {
	names := make([]string, 0, 1+len(aliases))
	for _, n := range append([]string{name}, aliases...) {
		if i := strings.IndexAny(n, ", "); i >= 0 {
			n = n[:i]
		}
		names = append(names, n)
	}
	return names
}

type (
	boolFlag struct {
		*cli.BoolFlag
		names []string
	}
	stringFlag struct {
		*cli.StringFlag
		names []string
	}
	intFlag struct {
		*cli.IntFlag
		names []string
	}
	durationFlag struct {
		*cli.DurationFlag
		names []string
	}
	genericFlag struct {
		*cli.GenericFlag
		names []string
		was   *string // the value's text when applied: the default help shows
	}
	stringSliceFlag struct {
		*cli.StringSliceFlag
		names []string
	}
)

func (f *boolFlag) Names() []string        { return f.names }
func (f *stringFlag) Names() []string      { return f.names }
func (f *intFlag) Names() []string         { return f.names }
func (f *durationFlag) Names() []string    { return f.names }
func (f *genericFlag) Names() []string     { return f.names }
func (f *stringSliceFlag) Names() []string { return f.names }

// Apply is urfave/cli's Apply for each kind above but the string slice
// (whose value urfave/cli sets up through fields of its own), given the
// names worked out once: urfave/cli's own works them out again, its regexp
// run cold at each start. A flag whose value comes from its environment
// variable or a file, or that counts its uses, is left to urfave/cli's
// own, which parses that value and keeps the default for the help; any
// other has nothing from them to take. TestApplyAsUrfave holds each to
// urfave/cli's.
func (f *boolFlag) Apply(set *flag.FlagSet) error {
	if f.Count != nil || fromOutside(f.EnvVars, f.FilePath) {
		return f.BoolFlag.Apply(set)
	}
	// urfave/cli's names of a bool share one value.
	defineEach(set, (*flag.FlagSet).BoolVar, f.names, orNew(f.Destination), f.Value, f.Usage)
	return nil
}

func (f *stringFlag) Apply(set *flag.FlagSet) error {
	if fromOutside(f.EnvVars, f.FilePath) {
		return f.StringFlag.Apply(set)
	}
	defineEach(set, (*flag.FlagSet).StringVar, f.names, f.Destination, f.Value, f.Usage)
	return nil
}

func (f *intFlag) Apply(set *flag.FlagSet) error {
	if fromOutside(f.EnvVars, f.FilePath) {
		return f.IntFlag.Apply(set)
	}
	defineEach(set, (*flag.FlagSet).IntVar, f.names, f.Destination, f.Value, f.Usage)
	return nil
}

func (f *durationFlag) Apply(set *flag.FlagSet) error {
	if fromOutside(f.EnvVars, f.FilePath) {
		return f.DurationFlag.Apply(set)
	}
	defineEach(set, (*flag.FlagSet).DurationVar, f.names, f.Destination, f.Value, f.Usage)
	return nil
}

func (f *genericFlag) Apply(set *flag.FlagSet) error {
	if f.Value == nil || fromOutside(f.EnvVars, f.FilePath) {
		return f.GenericFlag.Apply(set)
	}
	was := f.Value.String()
	f.was = &was
	v := f.Value
	if f.Destination != nil {
		v = f.Destination
	}
	for _, n := range f.names {
		set.Var(v, n, f.Usage)
	}
	return nil
}

// defineEach defines each of names on set with define (flag.FlagSet's
// StringVar, say), as urfave/cli's Apply does: on dest where the flag has
// one, else on a value of the name's own.
func defineEach[T any](set *flag.FlagSet, define func(*flag.FlagSet, *T, string, T, string), names []string, dest *T, value T, usage string) {
	for _, n := range names {
		define(set, orNew(dest), n, value, usage)
	}
}

// orNew is p, or where p is nil a new value (flag.FlagSet's String is
// StringVar on a new string).
func orNew[T any](p *T) *T {
	if p == nil {
		return new(T)
	}
	return p
}

// GetDefaultText is the value's text when the flag was applied, as
// urfave/cli's keeps it: parsing sets the value itself.
func (f *genericFlag) GetDefaultText() string {
	if f.was == nil || f.DefaultText != "" {
		return f.GenericFlag.GetDefaultText()
	}
	return *f.was
}

// String is the flag in the help, with the default above.
func (f *genericFlag) String() string { return cli.FlagStringer(f) }

// fromOutside says whether urfave/cli would take a flag's value from its
// environment variables or its files.
func fromOutside(vars []string, file string) bool {
	for _, v := range vars {
		if _, ok := os.LookupEnv(strings.TrimSpace(v)); ok {
			return true
		}
	}
	return file != ""
}

// kind is the flag namedOnce was given.
func kind(f cli.Flag) cli.Flag {
	switch f := f.(type) {
	case *boolFlag:
		return f.BoolFlag
	case *stringFlag:
		return f.StringFlag
	case *intFlag:
		return f.IntFlag
	case *durationFlag:
		return f.DurationFlag
	case *genericFlag:
		return f.GenericFlag
	case *stringSliceFlag:
		return f.StringSliceFlag
	}
	return f
}
