package write

import (
	"errors"
	"fmt"
	"os"

	"github.com/urfave/cli/v2"

	"toolkit/internal/applet"
	"toolkit/internal/input"
)

// Usage is write's usage line.
const Usage = "toolkit write [flags] PATH < content"

// Command is the write applet's command line.
func Command() *cli.Command {
	return &cli.Command{
		Name:      "write",
		Usage:     "replace a file's whole content, or create it, atomically",
		UsageText: Usage + "\n   echo '{\"path\":\"notes.txt\",\"content\":\"hello\\n\"}' | toolkit write",
		Flags: applet.Flags(
			&cli.StringFlag{Name: "if-match", Usage: "write only if the file's sha256 is `SHA256` (\"absent\": only if there is no file)"},
		),
		OnUsageError: applet.FlagError(Usage),
		Action:       action,
	}
}

func action(c *cli.Context) error {
	var a Args
	in, err := applet.Gather(c, &a, fromFlags, "if-match")
	if err == nil {
		a.Host.Root, err = applet.OpenRoot(c)
	}
	if err != nil {
		return applet.Return(c, applet.InputError(err, in, Usage))
	}
	defer a.Host.Root.Close()
	a.Host.Hash = applet.WantsJSON(c)
	o := Run(a)
	o.Usage = Usage
	return applet.Return(c, o)
}

// errNoContent: person mode with a terminal on stdin has nothing to write.
var errNoContent = errors.New("no content: give it on stdin (toolkit write PATH < file)")

func fromFlags(c *cli.Context, a *Args) error {
	if c.NArg() > 1 {
		return fmt.Errorf("one PATH, not %d arguments", c.NArg())
	}
	a.Path = c.Args().First()
	if c.IsSet("if-match") {
		s := c.String("if-match")
		a.IfMatch = &s
	}
	if f, ok := c.App.Reader.(*os.File); ok && applet.IsTerminal(f) {
		return errNoContent
	}
	a.Host.Content = c.App.Reader
	return input.Check(a)
}
