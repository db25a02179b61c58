package confine

import (
	"slices"
	"testing"
)

// TestNotes: a note for each absolute path a denial names outside the
// writable set; not the program's own name, not a relative path, not a
// path inside the set, not a line that is no denial; at most five.
func TestNotes(t *testing.T) {
	write := []string{"/work/box", "/tmp/toolkit-0-tmp/calls"}
	text := `/bin/sh: 1: cannot create /etc/hosts: Permission denied
touch: cannot touch '/usr/local/x': Permission denied
mkdir: cannot create directory ‘/opt/y’: Permission denied
cp: cannot create regular file '/work/box/z': Permission denied
/bin/sh: 1: cannot create ../rel.txt: Permission denied
kill: (1234) - Operation not permitted
python3: can't open file '/srv/a.py': [Errno 2] No such file or directory
rm: cannot remove '/dev/null': Permission denied
PermissionError: [Errno 13] Permission denied: '/var/lib/q'
/bin/sh: 1: cannot create /etc/hosts: Permission denied
`
	want := []string{
		"[note: /etc/hosts is outside this sandbox's writable roots]",
		"[note: /usr/local/x is outside this sandbox's writable roots]",
		"[note: /opt/y is outside this sandbox's writable roots]",
		"[note: /var/lib/q is outside this sandbox's writable roots]",
	}
	if got := Notes(text, write); !slices.Equal(got, want) {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
	var many string
	for _, p := range []string{"/a", "/b", "/c", "/d", "/e", "/f", "/g"} {
		many += "touch: cannot touch '" + p + "': Permission denied\n"
	}
	if got := Notes(many, write); len(got) != 5 {
		t.Errorf("%d notes, want 5", len(got))
	}
	if got := Notes(many, nil); got != nil {
		t.Errorf("a command not confined: %q, want no notes", got)
	}
}

func TestParseMode(t *testing.T) {
	for in, want := range map[string]Mode{"": Off, "false": Off, "true": On, "on": On, "require": Require, "REQUIRE": Require} {
		if got, err := ParseMode(in); err != nil || got != want {
			t.Errorf("%q: %v, %v", in, got, err)
		}
	}
	if _, err := ParseMode("maybe"); err == nil {
		t.Error("maybe: no error")
	}
	if _, err := ParseWritable("/a:b"); err == nil {
		t.Error("a relative writable directory: no error")
	}
	if got, err := ParseWritable("/a/:/b/c/.."); err != nil || !slices.Equal(got, []string{"/a", "/b"}) {
		t.Errorf("writable: %v, %v", got, err)
	}
}

func TestHeld(t *testing.T) {
	for abi, want := range map[int]string{
		0: "[not confined: this kernel has no Landlock]",
		5: "[confined: landlock ABI 5 — files]",
		7: "[confined: landlock ABI 7 — files, signals]",
	} {
		if got := Held(abi); got != want {
			t.Errorf("%d: %q", abi, got)
		}
	}
}

// TestNoLandlockHook: the test hook hides Landlock, and HostCheck then
// refuses require and lets true run unconfined.
func TestNoLandlockHook(t *testing.T) {
	t.Setenv("TOOLKIT_TEST_NO_LANDLOCK", "1")
	if ABI() != 0 {
		t.Fatal("the hook did not hide Landlock")
	}
	if err := HostCheck(Require, "/work"); err != errNoLandlock {
		t.Errorf("require: %v", err)
	}
	if err := HostCheck(On, "/work"); err != nil {
		t.Errorf("true: %v", err)
	}
	if err := HostCheck(On, ""); err == nil {
		t.Error("no root: no error")
	}
}
