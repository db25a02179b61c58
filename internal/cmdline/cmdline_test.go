package cmdline

import (
	"flag"
	"slices"
	"testing"
	"time"

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
