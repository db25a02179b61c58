package cmdline

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
	"toolkit/internal/outcome"

	"github.com/urfave/cli/v2"
)

// TestJoinSwitches: --confine and the word after it are one flag when the
// word is one of its values; alone it stands for true; a flag's value and
// the first argument end the reading.
func TestJoinSwitches(t *testing.T) {
	cmd := &cli.Command{Flags: []cli.Flag{Confine.Flag(false), &cli.StringFlag{Name: "cwd"}, &cli.BoolFlag{Name: "raw"}}}
	for _, tc := range []struct{ in, want []string }{
		{[]string{"--confine", "true", "ls"}, []string{"--confine=true", "ls"}},
		{[]string{"--confine", "--root", "x"}, []string{"--confine", "--root", "x"}},
		{[]string{"--confine", "ls"}, []string{"--confine", "ls"}},
		{[]string{"--cwd", "--confine", "--confine", "require"}, []string{"--cwd", "--confine", "--confine=require"}},
		{[]string{"--raw", "ls", "--confine", "true"}, []string{"--raw", "ls", "--confine", "true"}},
		{[]string{"--", "--confine", "true"}, []string{"--", "--confine", "true"}},
		{[]string{"--confine=false", "true"}, []string{"--confine=false", "true"}},
	} {
		if got := JoinSwitches(cmd, tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("JoinSwitches(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestSettings: a setting's flag has the person's or the model's default,
// its environment variable, and Get reads it back typed; a switch alone is
// "true".
func TestSettings(t *testing.T) {
	n := &Setting[int]{Name: "n", Env: "TOOLKIT_TEST_N", Person: 5, Model: 2}
	d := &Setting[time.Duration]{Name: "d", Person: time.Second}
	for _, tc := range []struct {
		model bool
		args  []string
		env   string
		n     int
		d     time.Duration
		conf  string
	}{
		{false, nil, "", 5, time.Second, "false"},
		{true, nil, "", 2, time.Second, "false"},
		{true, []string{"--n=7", "--d=3s", "--confine"}, "", 7, 3 * time.Second, "true"},
		{false, []string{"--confine=require"}, "9", 9, time.Second, "require"},
	} {
		t.Setenv("TOOLKIT_TEST_N", tc.env)
		var got []any
		app := &cli.App{Flags: []cli.Flag{n.Flag(tc.model), d.Flag(tc.model), Confine.Flag(tc.model)}, Action: func(c *cli.Context) error {
			got = []any{n.Get(c), d.Get(c), Confine.Get(c)}
			return nil
		}}
		if err := app.Run(append([]string{"x"}, tc.args...)); err != nil {
			t.Fatal(err)
		}
		if want := []any{tc.n, tc.d, tc.conf}; !slices.Equal(got, want) {
			t.Errorf("%v %q: %v, want %v", tc.model, tc.args, got, want)
		}
	}
	var _ flag.Getter = &switchValue{}
}

// TestAround: an applet's wrappers run around its run, the first
// outermost, each seeing the call (its applet, its directory) before the
// run and its outcome after; a host a wrapper makes is the one the run
// gets; a wrapper that answers itself runs nothing inside it.
func TestAround(t *testing.T) {
	var order []string
	wrap := func(name string) Around {
		return func(ctx context.Context, c Call, next Next) outcome.Outcome {
			order = append(order, name+" in "+c.Applet+" at "+c.Dir())
			h := c.Host
			h.Keeps++
			o := next(ctx, h)
			o.Text += name + "\n"
			return o
		}
	}
	type args struct{ Dir string }
	ap := Applet[args]{
		Name:    "t",
		Around:  []Around{wrap("outer"), wrap("inner")},
		WorkDir: func(a *args, h Host) string { return a.Dir },
		Run: func(ctx context.Context, a *args, h Host) outcome.Outcome {
			order = append(order, fmt.Sprintf("run, keeps %d", h.Keeps))
			return outcome.Outcome{Kind: outcome.Done, Text: "ran\n"}
		},
	}
	o := ap.run(context.Background(), &args{Dir: "/w"}, Host{})
	if want := []string{"outer in t at /w", "inner in t at /w", "run, keeps 2"}; !slices.Equal(order, want) {
		t.Errorf("order %q, want %q", order, want)
	}
	if o.Text != "ran\ninner\nouter\n" {
		t.Errorf("text %q", o.Text)
	}
	order = nil
	ap.Around = []Around{func(ctx context.Context, c Call, next Next) outcome.Outcome { return outcome.Failure("refused") }, wrap("inner")}
	if o := ap.run(context.Background(), &args{}, Host{}); o.Kind != outcome.ToolError || len(order) > 0 {
		t.Errorf("a refusal ran %q: %+v", order, o)
	}
}

// TestNamesWorkedOutOnce: a command's flags give their names without
// working them out again (urfave/cli's FlagNames runs a regexp replace
// each time, for each flag, for each flag it checks), and are otherwise
// the flags they were: the same names, usage and kind.
func TestNamesWorkedOutOnce(t *testing.T) {
	type args struct {
		Path  string `json:"path"`
		Count *int   `json:"count,omitempty"`
		All   bool   `json:"all,omitempty"`
	}
	cmd := Applet[args]{Name: "t"}.Command()
	// Aliases, and urfave/cli v1's "name, alias" form, named as
	// cli.FlagNames names them.
	more := namedOnce([]cli.Flag{
		&cli.BoolFlag{Name: "verbose", Aliases: []string{"v", "loud, noisy"}},
		&cli.StringFlag{Name: "out, o", Aliases: []string{"output  x"}},
	})
	for _, f := range append(cmd.Flags, append(more, cli.HelpFlag, cli.VersionFlag)...) {
		base := kind(f)
		if base == f {
			t.Errorf("%T %q: not given its names once", f, f.Names())
		}
		if !slices.Equal(f.Names(), base.Names()) {
			t.Errorf("%T: names %q, want %q", base, f.Names(), base.Names())
		}
		if d, ok := f.(cli.DocGenerationFlag); !ok || d.GetUsage() != base.(cli.DocGenerationFlag).GetUsage() {
			t.Errorf("%T: usage lost", base)
		}
		if n := testing.AllocsPerRun(10, func() { f.Names() }); n > 0 {
			t.Errorf("%T %q: %.0f allocations for its names", base, f.Names(), n)
		}
	}
}

// TestApplyAsUrfave: a flag applied with its names worked out once parses
// as urfave/cli's own Apply has it parse, from the command line, its
// environment variables and its file, and shows the same help line and
// default after; and its Apply does less (urfave/cli's works the names out
// with a regexp replace).
func TestApplyAsUrfave(t *testing.T) {
	file := filepath.Join(t.TempDir(), "value")
	if err := os.WriteFile(file, []byte("true"), 0o600); err != nil {
		t.Fatal(err)
	}
	makers := []func() cli.Flag{
		func() cli.Flag { return &cli.BoolFlag{Name: "all", Usage: "every one"} },
		func() cli.Flag {
			return &cli.BoolFlag{Name: "verbose", Aliases: []string{"v"}, Value: true, EnvVars: []string{"TK_TEST_BOOL"}}
		},
		func() cli.Flag { return &cli.BoolFlag{Name: "filed", FilePath: file} },
		func() cli.Flag {
			return &cli.StringFlag{Name: "out", Aliases: []string{"o"}, Value: "x", EnvVars: []string{"TK_TEST_STR"}, Usage: "to `FILE`"}
		},
		func() cli.Flag { return &cli.IntFlag{Name: "n", Value: 3, EnvVars: []string{"TK_TEST_INT"}} },
		func() cli.Flag {
			return &cli.DurationFlag{Name: "d", Value: time.Second, EnvVars: []string{"TK_TEST_DUR"}}
		},
		func() cli.Flag { return TextsFlag("env", "add `NAME=VALUE`") },
		func() cli.Flag {
			return &cli.GenericFlag{Name: "texts", Value: &Texts{"a"}, EnvVars: []string{"TK_TEST_TEXTS"}}
		},
	}
	envs := []map[string]string{
		{},
		{"TK_TEST_BOOL": "false", "TK_TEST_STR": "e", "TK_TEST_INT": "7", "TK_TEST_DUR": "3s", "TK_TEST_TEXTS": "q"},
		{"TK_TEST_BOOL": "", "TK_TEST_INT": ""},
	}
	argLists := [][]string{
		nil,
		{"--all", "-v=false", "-o", "y", "--n", "5", "--d", "2s", "--env", "a", "--env", " b ", "--texts", "c"},
		{"--verbose", "--out", "z", "--o", "w", "--filed=false"},
	}
	for i, env := range envs {
		for k, v := range env {
			t.Setenv(k, v)
		}
		for _, args := range argLists {
			var ours, theirs []cli.Flag
			for _, make := range makers {
				ours = append(ours, namedOnce([]cli.Flag{make()})[0])
				theirs = append(theirs, make())
			}
			parse := func(flags []cli.Flag) *flag.FlagSet {
				set := flag.NewFlagSet("t", flag.ContinueOnError)
				for _, f := range flags {
					if err := f.Apply(set); err != nil {
						t.Fatal(err)
					}
				}
				if err := set.Parse(args); err != nil {
					t.Fatal(err)
				}
				return set
			}
			got, want := parse(ours), parse(theirs)
			for j, f := range theirs {
				for _, n := range f.Names() {
					g, w := got.Lookup(n), want.Lookup(n)
					if g.Value.String() != w.Value.String() || g.DefValue != w.DefValue || g.Usage != w.Usage {
						t.Errorf("env %d, %q: --%s is %q (default %q, usage %q), want %q (%q, %q)", i, args, n, g.Value, g.DefValue, g.Usage, w.Value, w.DefValue, w.Usage)
					}
				}
				if g, w := fmt.Sprint(ours[j]), fmt.Sprint(f); g != w {
					t.Errorf("env %d, %q: help line %q, want %q", i, args, g, w)
				}
				if g, w := ours[j].(cli.DocGenerationFlag).GetDefaultText(), f.(cli.DocGenerationFlag).GetDefaultText(); g != w {
					t.Errorf("env %d, %q: --%s default %q, want %q", i, args, f.Names()[0], g, w)
				}
			}
		}
		for k := range env {
			os.Unsetenv(k)
		}
	}
	// With nothing from outside, each of ours applies with fewer
	// allocations; the one read from a file is urfave/cli's own.
	for _, make := range makers {
		ours, theirs := namedOnce([]cli.Flag{make()})[0], make()
		if theirs.Names()[0] == "filed" {
			continue
		}
		apply := func(f cli.Flag) float64 {
			return testing.AllocsPerRun(20, func() { _ = f.Apply(flag.NewFlagSet("t", flag.ContinueOnError)) })
		}
		if a, b := apply(ours), apply(theirs); a >= b {
			t.Errorf("--%s: %.0f allocations to apply, urfave/cli's own %.0f", theirs.Names()[0], a, b)
		}
	}
}
