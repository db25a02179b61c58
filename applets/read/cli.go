package read

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"toolkit/internal/applet"
	"toolkit/internal/input"
	"toolkit/internal/root"
)

// Usage is read's usage line.
const Usage = "toolkit read [flags] PATH"

// Command is the read applet's command line.
func Command() *cli.Command {
	return &cli.Command{
		Name:      "read",
		Usage:     "show a text file as numbered lines (or a directory's entries)",
		UsageText: Usage + "\n   echo '{\"path\":\"main.go\",\"offset\":10,\"limit\":20}' | toolkit read",
		Flags: applet.Flags(
			&cli.IntFlag{Name: "offset", Usage: "first line to show, from 1; `N` < 0 counts from the end"},
			&cli.IntFlag{Name: "limit", Usage: "how many lines to show (default 2000)"},
		),
		OnUsageError: applet.FlagError(Usage),
		Action:       action,
	}
}

func action(c *cli.Context) error {
	in, err := applet.InputMode(c)
	var a Args
	if err == nil {
		if in == applet.Person {
			err = fromFlags(c, &a)
		} else {
			err = applet.DecodeStdin(c, &a, "offset", "limit")
		}
	}
	if err != nil {
		return applet.Return(c, applet.InputError(err, in, Usage))
	}
	if dir := c.String("root"); dir != "" {
		r, err := root.Open(dir)
		if err != nil {
			return applet.Return(c, applet.InputError(fmt.Errorf("--root %s: no such directory", dir), in, Usage))
		}
		defer r.Close()
		a.Host.Root = r
	}
	a.Host.Hash = applet.WantsJSON(c)
	return applet.Return(c, Run(a))
}

func fromFlags(c *cli.Context, a *Args) error {
	if c.NArg() > 1 {
		return fmt.Errorf("one PATH, not %d arguments", c.NArg())
	}
	a.Path = c.Args().First()
	if c.IsSet("offset") {
		n := c.Int("offset")
		a.Offset = &n
	}
	if c.IsSet("limit") {
		n := c.Int("limit")
		a.Limit = &n
	}
	return input.Check(a)
}
