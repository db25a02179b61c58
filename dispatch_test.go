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
