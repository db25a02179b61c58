// Package schema prints the tools as hosts register them: each one's name,
// its description for the model and the JSON Schema of its input, in the
// shape an API takes.
//
//	toolkit schema [--format plain|anthropic|openai|openai-responses|mcp] [--strict] [APPLET]
package schema

import (
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/urfave/cli/v2"

	"toolkit/applets"
	"toolkit/internal/cmdline"
	"toolkit/internal/input"
	"toolkit/internal/outcome"
)

// Formats are the shapes the tool list is printed in.
var Formats = []string{"plain", "anthropic", "openai", "openai-responses", "mcp"}

// Describe returns a tool in the shape format asks for; with strict, in
// the form OpenAI's strict mode takes (for the openai formats), or an
// error naming the field that keeps it from that form.
func Describe(t applets.Tool, format string, strict bool) (any, error) {
	schema := input.Schema(t.Args)
	if strict {
		if !strings.HasPrefix(format, "openai") {
			return nil, fmt.Errorf("--strict is for --format openai and openai-responses, not %s", format)
		}
		var err error
		if schema, err = strictSchema(schema, ""); err != nil {
			return nil, fmt.Errorf("%s: %w", t.Name, err)
		}
	}
	switch format {
	case "", "plain":
		return map[string]any{"name": t.Name, "description": t.Description, "input_schema": schema, "output_schema": outcome.Schema(t.Details), "hints": t.Hints}, nil
	case "anthropic": // the Messages API's tools
		return map[string]any{"name": t.Name, "description": t.Description, "input_schema": schema}, nil
	case "openai": // Chat Completions' tools
		return map[string]any{"type": "function", "function": map[string]any{"name": t.Name, "description": t.Description, "parameters": schema, "strict": strict}}, nil
	case "openai-responses": // the Responses API's tools
		return map[string]any{"type": "function", "name": t.Name, "description": t.Description, "parameters": schema, "strict": strict}, nil
	case "mcp": // tools/list's tools
		return map[string]any{"name": t.Name, "description": t.Description, "inputSchema": schema, "outputSchema": outcome.Schema(t.Details), "annotations": map[string]any{
			"readOnlyHint": t.Hints.ReadOnly, "idempotentHint": t.Hints.Idempotent,
			"destructiveHint": t.Hints.Destructive, "openWorldHint": t.Hints.OpenWorld,
		}}, nil
	}
	return nil, fmt.Errorf("no format called %q; the formats are %s", format, strings.Join(Formats, ", "))
}

// strictSchema is s as OpenAI's strict mode takes it: every property
// required (the optional ones already take null, which is leaving them
// out), no object of any names, and none of the keywords strict mode
// refuses (minLength: the decoder still checks it). at is where s is, for
// the error.
func strictSchema(s map[string]any, at string) (map[string]any, error) {
	out := map[string]any{}
	for k, v := range s {
		switch k {
		case "minLength":
			continue
		case "propertyNames":
			return nil, fmt.Errorf("%s is an object of any names, which OpenAI's strict mode cannot take", at)
		case "additionalProperties":
			if v != false {
				return nil, fmt.Errorf("%s is an object of any names, which OpenAI's strict mode cannot take", at)
			}
		case "properties":
			props := map[string]any{}
			var names []string
			for name, p := range v.(map[string]any) {
				sp, err := strictSchema(p.(map[string]any), join(at, name))
				if err != nil {
					return nil, err
				}
				props[name] = sp
				names = append(names, name)
			}
			sort.Strings(names)
			out["required"] = names
			v = props
		case "items":
			sp, err := strictSchema(v.(map[string]any), at+"[]")
			if err != nil {
				return nil, err
			}
			v = sp
		case "required":
			continue // all of them, above
		}
		out[k] = v
	}
	return out, nil
}

func join(at, name string) string {
	if at == "" {
		return name
	}
	return at + "." + name
}

// Usage is schema's usage line.
const Usage = "toolkit schema [--format plain|anthropic|openai|openai-responses|mcp] [--strict] [APPLET]"

// Command prints the tools' schemas: all of them as a JSON list, or the one
// named.
func Command() *cli.Command {
	return &cli.Command{
		Name:      "schema",
		Usage:     "print the tools' names, descriptions and input schemas, as JSON",
		UsageText: Usage,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "format", Value: "plain", Usage: "the shape: " + strings.Join(Formats, ", ")},
			&cli.BoolFlag{Name: "strict", Usage: "for the openai formats: schemas for strict mode; of all the tools, those that cannot be are listed without it (and said on stderr)"},
		},
		OnUsageError: cmdline.UsageError(Usage),
		Action: func(c *cli.Context) error {
			out, err := describe(c.String("format"), c.Bool("strict"), c.Args().Slice())
			if err != nil {
				return cmdline.Misuse(c, err, Usage)
			}
			return cmdline.Exit(c, outcome.Success(string(outcome.Marshal(out))+"\n", nil), outcome.TextMode)
		},
	}
}

func describe(format string, strict bool, names []string) (any, error) {
	switch len(names) {
	case 0:
		var list []any
		for _, t := range applets.All() {
			d, err := Describe(t, format, strict)
			if err != nil && strict && strings.HasPrefix(format, "openai") {
				fmt.Fprintf(os.Stderr, "toolkit schema: %s; listed without strict\n", err)
				d, err = Describe(t, format, false)
			}
			if err != nil {
				return nil, err
			}
			list = append(list, d)
		}
		return list, nil
	case 1:
		t, ok := applets.Find(names[0])
		if !ok {
			return nil, fmt.Errorf("no tool called %q; the tools are %s", names[0], strings.Join(applets.Names(), ", "))
		}
		return Describe(t, format, strict)
	}
	return nil, fmt.Errorf("one APPLET at most, not %d", len(names))
}
