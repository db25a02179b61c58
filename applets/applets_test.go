package applets

import (
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/urfave/cli/v2"

	"toolkit/internal/input"
)

// resolved is a tool's input schema, ready to validate with.
func resolved(t *testing.T, tool Tool) (*jsonschema.Resolved, map[string]any) {
	t.Helper()
	m := input.Schema(tool.Args)
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		t.Fatalf("the schema does not resolve: %v\n%s", err, b)
	}
	return rs, m
}

// edges are values to try in every property: of every JSON type, and the
// strings and objects at the edges of the decoder's checks.
var edges = []string{
	`null`, `""`, `"x"`, `"\u0000"`, `"a\u0000b"`, `"absent"`, `"0123456789ab"`, `"0123456789a"`,
	`"0123456789ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef"`, `"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0"`,
	`"zzzzzzzzzzzz"`, `0`, `-1`, `1`, `2`, `1.5`, `30.0`, `true`, `false`, `"true"`, `"5"`,
	`{}`, `{"A":"1"}`, `{"A=B":"1"}`, `{"":"1"}`, `{"A":"\u0000"}`, `{"\u0000":"1"}`, `{"A":1}`, `{"A":null}`, `{"a.txt":"absent"}`,
	`[]`, `["x"]`, `[null]`, `[{}]`, `[{"old_text":"a","new_text":"b"}]`,
}

// TestSchemaAgreesWithDecoder: for every tool, an input with each edge value
// in each property (the others valid), or a property the tool does not
// have, is accepted by the input schema exactly when the decoder accepts it.
func TestSchemaAgreesWithDecoder(t *testing.T) {
	for _, tool := range All() {
		t.Run(tool.Name, func(t *testing.T) {
			if len(tool.Description) < 200 {
				t.Errorf("description too short for a model: %q", tool.Description)
			}
			rs, schema := resolved(t, tool)
			props := schema["properties"].(map[string]any)
			base := map[string]json.RawMessage{}
			for _, name := range requiredOf(schema) {
				base[name] = validFor(t, props, name)
			}
			check := func(in map[string]json.RawMessage) {
				t.Helper()
				data, _ := json.Marshal(in)
				var instance any
				if err := json.Unmarshal(data, &instance); err != nil {
					t.Fatal(err)
				}
				schemaErr := rs.Validate(instance)
				decodeErr := input.Decode(data, reflect.New(tool.Args).Interface())
				if (schemaErr == nil) != (decodeErr == nil) {
					t.Errorf("%s: the schema says %v, the decoder %v", data, schemaErr, decodeErr)
				}
			}
			check(base)
			names := make([]string, 0, len(props))
			for name := range props {
				names = append(names, name)
			}
			sort.Strings(names)
			for _, name := range names {
				for _, v := range edges {
					in := maps.Clone(base)
					in[name] = json.RawMessage(v)
					check(in)
				}
				in := maps.Clone(base)
				delete(in, name)
				check(in)
			}
			in := maps.Clone(base)
			in["not_in_schema"] = json.RawMessage(`1`)
			check(in)
		})
	}
}

// TestSchemaListsTheFields: the schema's properties are the decoder's
// fields, and their required lists agree.
func TestSchemaListsTheFields(t *testing.T) {
	for _, tool := range All() {
		_, s := resolved(t, tool)
		var names, required, listed []string
		for _, f := range input.Fields(tool.Args) {
			names = append(names, f.Name)
			if f.Required {
				required = append(required, f.Name)
			}
		}
		for name := range s["properties"].(map[string]any) {
			listed = append(listed, name)
		}
		sort.Strings(names)
		sort.Strings(listed)
		if !slices.Equal(names, listed) || !slices.Equal(requiredOf(s), required) || s["additionalProperties"] != false {
			t.Errorf("%s: schema properties %v (required %v), decoder fields %v (required %v)", tool.Name, listed, requiredOf(s), names, required)
		}
	}
}

func requiredOf(s map[string]any) []string {
	r, _ := s["required"].([]string)
	return r
}

// validFor is an edge value that the property's own schema takes.
func validFor(t *testing.T, props map[string]any, name string) json.RawMessage {
	t.Helper()
	b, _ := json.Marshal(props[name])
	var s jsonschema.Schema
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range edges {
		var instance any
		_ = json.Unmarshal([]byte(v), &instance)
		if v != "null" && rs.Validate(instance) == nil {
			return json.RawMessage(v)
		}
	}
	t.Fatalf("no edge value fits %q", name)
	return nil
}

// TestFlagUsagesWhole: a flag's usage is the first sentence of its field's
// description, cut at its first ". "; a description whose first sentence
// goes on past a "." of its own (grep's multiline: ". matches a line end")
// left a usage that stops at a colon.
func TestFlagUsagesWhole(t *testing.T) {
	for _, tool := range All() {
		for _, f := range tool.Command().Flags {
			d, ok := f.(cli.DocGenerationFlag)
			if !ok {
				continue
			}
			if u := strings.TrimSpace(d.GetUsage()); u == "" || strings.HasSuffix(u, ":") {
				t.Errorf("%s --%s: usage %q", tool.Name, f.Names()[0], u)
			}
		}
	}
}
