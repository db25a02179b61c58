package cmdline

import (
	"flag"
	"fmt"
	"time"

	"github.com/urfave/cli/v2"

	"toolkit/internal/cut"
)

// Setting is a host setting (a flag and an environment variable) of type
// T, declared once where it is defined and read through Get, typed. An
// applet lists the settings it takes (Applet.Settings); two applets that
// take one setting (shell's and job's max-output) list the same *Setting,
// which toolkit mcp and toolkit call then take once. The registry refuses
// two settings of one name.
type Setting[T int | bool | string | time.Duration] struct {
	Name  string // the flag, without dashes
	Env   string // the environment variable, "" for none
	Usage string
	// Person is the command line's default; Model is toolkit mcp's and
	// toolkit call's, whose calls come from a model (a context smaller than
	// a person's terminal): the zero value means Person's.
	Person, Model T
	// Switch, for a string setting, lets the flag stand alone for "true"
	// (--confine), as a boolean flag does; --confine=require still gives
	// a value, and so does the next word when it is one of Switch's
	// (--confine true, as the flag was given before it could stand alone).
	Switch []string
}

// JoinSettings are the settings of lists, each once, in their order: an
// applet's own and those of the wrappers it names, which may share one
// (--limit-memory: shell's fence and the kept language servers).
func JoinSettings(lists ...[]AnySetting) []AnySetting {
	var out []AnySetting
	seen := map[string]bool{}
	for _, l := range lists {
		for _, st := range l {
			if !seen[st.Key()] {
				seen[st.Key()] = true
				out = append(out, st)
			}
		}
	}
	return out
}

// AnySetting is a Setting of any type, as the registry and the presenters
// handle them.
type AnySetting interface {
	// Key is the setting's flag name.
	Key() string
	// Flag is its flag: with the model's default when model is set.
	Flag(model bool) cli.Flag
}

// Key is the setting's flag name.
func (s *Setting[T]) Key() string { return s.Name }

// Flag is the setting's flag, with the model's default when model is set.
func (s *Setting[T]) Flag(model bool) cli.Flag {
	def := s.Person
	var zero T
	if model && s.Model != zero {
		def = s.Model
	}
	var env []string
	if s.Env != "" {
		env = []string{s.Env}
	}
	switch d := any(def).(type) {
	case int:
		return &cli.IntFlag{Name: s.Name, Value: d, EnvVars: env, Usage: s.Usage}
	case bool:
		return &cli.BoolFlag{Name: s.Name, Value: d, EnvVars: env, Usage: s.Usage}
	case time.Duration:
		return &cli.DurationFlag{Name: s.Name, Value: d, EnvVars: env, Usage: s.Usage}
	case string:
		if s.Switch != nil {
			return &cli.GenericFlag{Name: s.Name, Value: &switchValue{d, s.Switch}, EnvVars: env, Usage: s.Usage}
		}
		return &cli.StringFlag{Name: s.Name, Value: d, EnvVars: env, Usage: s.Usage}
	}
	panic(fmt.Sprintf("setting %s: a type toolkit has no flag for", s.Name))
}

// Get is the setting's value in set; its default (the model's, when the
// set is toolkit mcp's) where the host gave none.
func (s *Setting[T]) Get(set Settings) T {
	var v any
	switch any(s.Person).(type) {
	case int:
		v = set.Int(s.Name)
	case bool:
		v = set.Bool(s.Name)
	case time.Duration:
		v = set.Duration(s.Name)
	case string:
		v = set.String(s.Name)
	}
	return v.(T)
}

// switchValue is a string flag's value that a flag alone sets to "true":
// the flag package asks IsBoolFlag, and then passes no value. words are
// the values the next word may give it (JoinSwitches).
type switchValue struct {
	s     string
	words []string
}

var _ flag.Value = (*switchValue)(nil)

func (v *switchValue) Set(s string) error { v.s = s; return nil }
func (v *switchValue) String() string {
	if v == nil {
		return ""
	}
	return v.s
}
func (v *switchValue) IsBoolFlag() bool { return true }
func (v *switchValue) Get() any         { return v.s }

// MCPMaxOutput is toolkit mcp's and toolkit call's default text limit of a
// command's output: about 8k tokens, what a model's context takes from one
// call without crowding out the rest.
const MCPMaxOutput = 32 << 10

// The settings of the text a command's output becomes, which shell and job
// share.
var (
	MaxOutput = &Setting[int]{Name: "max-output", Env: "TOOLKIT_MAX_OUTPUT", Person: cut.DefaultLimit, Model: MCPMaxOutput,
		Usage: "cut the text to about `BYTES`, keeping its start, its end and the failure lines; the most a call's max_output may ask"}
	Raw = &Setting[bool]{Name: "raw", Env: "TOOLKIT_RAW", Usage: "keep terminal escapes and carriage returns"}
	// JobLifetime bounds what outlives a call: a job, a spill, a wait.
	JobLifetime = &Setting[time.Duration]{Name: "job-lifetime", Env: "TOOLKIT_JOB_LIFETIME", Person: DefaultJobLifetime, Usage: "stop a job (yield_secs, background, or what a command left in the background) after this long; the most a job's timeout_secs, and a wait's, may ask"}
	// LimitMemory bounds what a command's processes hold, and a kept
	// language server's.
	LimitMemory = &Setting[int]{Name: "limit-memory", Env: "TOOLKIT_LIMIT_MEMORY", Usage: "stop a command whose processes hold more than `MIB` of resident memory, and a kept language server that does; the most a call's limits.memory_mb may ask (default: none)"}
)

// DefaultJobLifetime is --job-lifetime's default.
const DefaultJobLifetime = time.Hour
