package main

import (
	"reflect"
	"slices"
	"testing"

	"github.com/urfave/cli/v2"

	"toolkit/applets"
)

// TestShellFlags: shellFlags are toolkit shell's flags, in its order, each
// of the same kind and environment variable, so that the floors parse the
// command line toolkit parses.
func TestShellFlags(t *testing.T) {
	tool, ok := applets.Find("shell")
	if !ok {
		t.Fatal("no applet shell")
	}
	var got []string
	for _, f := range tool.Command().Flags {
		var env []string
		if e, ok := f.(interface{ GetEnvVars() []string }); ok {
			env = e.GetEnvVars()
		}
		if len(env) > 1 {
			t.Errorf("--%s has %d environment variables; shellFlags has room for one", f.Names()[0], len(env))
		}
		got = append(got, kindOf(t, f)+" "+f.Names()[0]+" "+slices.Concat(env, []string{""})[0])
	}
	var want []string
	for _, f := range shellFlags {
		want = append(want, f.kind+" "+f.name+" "+f.env)
	}
	if !slices.Equal(got, want) {
		t.Errorf("toolkit shell's flags:\n%q\nshellFlags:\n%q", got, want)
	}
}

// kindOf is f's kind as shellFlags writes it, from the urfave/cli flag it
// is or wraps.
func kindOf(t *testing.T, f cli.Flag) string {
	v := reflect.ValueOf(f).Elem()
	if v.Kind() == reflect.Struct && v.NumField() > 0 && v.Field(0).Kind() == reflect.Pointer && v.Type().Field(0).Anonymous {
		f = v.Field(0).Interface().(cli.Flag)
	}
	switch f := f.(type) {
	case *cli.BoolFlag:
		return "b"
	case *cli.StringFlag:
		return "s"
	case *cli.IntFlag:
		return "i"
	case *cli.DurationFlag:
		return "d"
	case *cli.GenericFlag:
		if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
			return "t"
		}
		if t := reflect.TypeOf(f.Value); t.Kind() == reflect.Pointer && t.Elem().Kind() == reflect.Slice {
			return "l"
		}
	}
	t.Errorf("--%s is a %T, of no kind shellFlags has", f.Names()[0], f)
	return "?"
}
