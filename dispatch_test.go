package main

import (
	"reflect"
	"testing"
)

func TestDispatch(t *testing.T) {
	for _, tc := range []struct{ argv, want []string }{
		{[]string{"toolkit", "shell", "ls"}, []string{"toolkit", "shell", "ls"}},
		{[]string{"/usr/local/bin/toolkit", "shell"}, []string{"toolkit", "shell"}},
		{[]string{"toolkit-shell", "--json", "ls"}, []string{"toolkit", "shell", "--json", "ls"}},
		{[]string{"/opt/x/toolkit-shell", "ls"}, []string{"toolkit", "shell", "ls"}},
		{[]string{"toolkit-shell.exe", "ls"}, []string{"toolkit", "shell", "ls"}},
		{[]string{"/bin/shell", "ls"}, []string{"toolkit", "shell", "ls"}},
		{[]string{"toolkit-nope", "x"}, []string{"toolkit", "nope", "x"}},
		{[]string{"tk", "shell"}, []string{"toolkit", "shell"}},
		{nil, []string{"toolkit"}},
	} {
		if got := dispatch(tc.argv); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("dispatch(%q) = %q, want %q", tc.argv, got, tc.want)
		}
	}
}

// TestNewAppBuildsOne: a call builds the command it names and no other,
// under that command's own name; any other name gets every command.
func TestNewAppBuildsOne(t *testing.T) {
	all := newApp("")
	if len(all.Commands) < 15 {
		t.Fatalf("toolkit alone: %d commands", len(all.Commands))
	}
	for _, c := range all.Commands {
		app := newApp(c.Name)
		if len(app.Commands) != 1 || app.Commands[0].Name != c.Name {
			t.Errorf("newApp(%q) built %d commands", c.Name, len(app.Commands))
		}
		for _, alias := range c.Aliases {
			if app := newApp(alias); app.Command(alias) == nil || len(app.Commands) != 1 {
				t.Errorf("newApp(%q), an alias of %s, built %d commands", alias, c.Name, len(app.Commands))
			}
		}
	}
	if got := len(newApp("nope").Commands); got != len(all.Commands) {
		t.Errorf("newApp(\"nope\") built %d commands, want all %d", got, len(all.Commands))
	}
}
