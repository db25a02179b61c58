package read

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"toolkit/internal/applet"
	"toolkit/internal/input"
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
	var a Args
	in, err := applet.Gather(c, &a, fromFlags, "offset", "limit")
	if err == nil {
		a.Host.Root, err = applet.OpenRoot(c)
	}
	if err != nil {
		return applet.Return(c, applet.InputError(err, in, Usage))
	}
	defer a.Host.Root.Close()
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
