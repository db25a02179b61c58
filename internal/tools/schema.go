package tools

import (
	"fmt"
	"reflect"

	"github.com/urfave/cli/v2"

	"toolkit/internal/applet"
	"toolkit/internal/input"
	"toolkit/internal/outcome"
)

// InputSchema is the JSON Schema of an Args type's input, made from the
// fields the strict decoder reads: the same names, types, required fields and
// bounds, and no other property allowed.
func InputSchema(args reflect.Type) map[string]any {
	props := map[string]any{}
	var required []string
	for _, f := range input.Fields(args) {
		p := map[string]any{}
		switch f.Type {
		case input.String:
			p["type"] = "string"
			if f.NonEmpty {
				p["minLength"] = 1
			}
		case input.Integer:
			p["type"] = "integer"
			if f.Min != nil {
				p["minimum"] = *f.Min
			}
		case input.Boolean:
			p["type"] = "boolean"
		case input.StringMap:
			p["type"] = "object"
			p["additionalProperties"] = map[string]any{"type": "string"}
		}
		if f.Desc != "" {
			p["description"] = f.Desc
		}
		props[f.Name] = p
		if f.Required {
			required = append(required, f.Name)
		}
	}
	s := map[string]any{
		"type":                 "object",
		"properties":           props,
		"additionalProperties": false,
	}
	if len(required) > 0 {
		s["required"] = required
	}
	return s
}

// Formats are the shapes the tool list is printed in.
var Formats = []string{"plain", "anthropic", "openai", "mcp"}

// Describe returns a tool in the shape format asks for.
func Describe(t Tool, format string) (any, error) {
	schema := InputSchema(t.Args)
	switch format {
	case "", "plain":
		return map[string]any{"name": t.Name, "description": t.Description, "input_schema": schema, "hints": t.Hints}, nil
	case "anthropic": // the Messages API's tools
		return map[string]any{"name": t.Name, "description": t.Description, "input_schema": schema}, nil
	case "openai": // Chat Completions' tools
		return map[string]any{"type": "function", "function": map[string]any{"name": t.Name, "description": t.Description, "parameters": schema}}, nil
	case "mcp": // tools/list's tools
		return map[string]any{"name": t.Name, "description": t.Description, "inputSchema": schema, "annotations": map[string]any{
			"readOnlyHint": t.Hints.ReadOnly, "idempotentHint": t.Hints.Idempotent,
			"destructiveHint": t.Hints.Destructive, "openWorldHint": t.Hints.OpenWorld,
		}}, nil
	}
	return nil, fmt.Errorf("no format called %q; the formats are plain, anthropic, openai, mcp", format)
}

// SchemaUsage is schema's usage line.
const SchemaUsage = "toolkit schema [--format plain|anthropic|openai|mcp] [APPLET]"

// SchemaCommand prints the tools' schemas: all of them as a JSON list, or
// the one named.
func SchemaCommand() *cli.Command {
	return &cli.Command{
		Name:      "schema",
		Usage:     "print the tools' names, descriptions and input schemas, as JSON",
		UsageText: SchemaUsage,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "format", Value: "plain", Usage: "the shape: plain, anthropic, openai or mcp"},
		},
		OnUsageError: applet.FlagError(SchemaUsage),
		Action: func(c *cli.Context) error {
			misuse := func(err error) error {
				o := outcome.Misuse("%s", err)
				o.Usage = SchemaUsage
				return applet.ReturnIn(c, o, outcome.TextMode)
			}
			format := c.String("format")
			var out any
			switch c.NArg() {
			case 0:
				var list []any
				for _, t := range All() {
					d, err := Describe(t, format)
					if err != nil {
						return misuse(err)
					}
					list = append(list, d)
				}
				out = list
			case 1:
				t, ok := Find(c.Args().First())
				if !ok {
					return misuse(fmt.Errorf("no tool called %q; the tools are read, shell, write", c.Args().First()))
				}
				d, err := Describe(t, format)
				if err != nil {
					return misuse(err)
				}
				out = d
			default:
				return misuse(fmt.Errorf("one APPLET at most, not %d", c.NArg()))
			}
			o := outcome.Success(string(outcome.Marshal(out))+"\n", nil)
			return applet.ReturnIn(c, o, outcome.TextMode)
		},
	}
}
