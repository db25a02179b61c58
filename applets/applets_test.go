package applets

import (
	"encoding/json"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"toolkit/internal/input"
)

// sample is a valid value for a property of the schema.
func sample(t *testing.T, p map[string]any) any {
	switch p["type"] {
	case "string":
		return "x"
	case "integer":
		if m, ok := p["minimum"].(int64); ok {
			return m + 1
		}
		return 2
	case "boolean":
		return true
	case "object":
		return map[string]string{"K": "v"}
	}
	t.Fatalf("no sample for %v", p)
	return nil
}

// TestSchemaMatchesDecoder: every schema property is a field the decoder
// takes (with a value of the schema's type it decodes), every field the
// decoder takes is in the schema, and the required lists agree; a property
// the schema does not list is refused by both.
func TestSchemaMatchesDecoder(t *testing.T) {
	for _, tool := range All() {
		t.Run(tool.Name, func(t *testing.T) {
			if len(tool.Description) < 200 {
				t.Errorf("description too short for a model: %q", tool.Description)
			}
			s := input.Schema(tool.Args)
			props := s["properties"].(map[string]any)
			var names, required []string
			for _, f := range input.Fields(tool.Args) {
				names = append(names, f.Name)
				if f.Required {
					required = append(required, f.Name)
				}
				if _, ok := props[f.Name]; !ok {
					t.Errorf("field %q is not in the schema", f.Name)
				}
			}
			var listed []string
			for name := range props {
				listed = append(listed, name)
			}
			sort.Strings(names)
			sort.Strings(listed)
			if !slices.Equal(names, listed) {
				t.Errorf("schema properties %v, decoder fields %v", listed, names)
			}
			req, _ := s["required"].([]string)
			if !slices.Equal(req, required) {
				t.Errorf("schema requires %v, decoder %v", req, required)
			}
			if s["additionalProperties"] != false {
				t.Error("the schema allows other properties; the decoder does not")
			}

			// All required fields with sample values decode; so does each
			// optional one added; an unlisted one does not.
			base := map[string]any{}
			for _, name := range required {
				base[name] = sample(t, props[name].(map[string]any))
			}
			decode := func(m map[string]any) error {
				data, _ := json.Marshal(m)
				dst := reflect.New(tool.Args).Interface()
				return input.Decode(data, dst)
			}
			if err := decode(base); err != nil {
				t.Fatalf("required fields %v: %v", base, err)
			}
			for name, p := range props {
				m := map[string]any{}
				for k, v := range base {
					m[k] = v
				}
				m[name] = sample(t, p.(map[string]any))
				if err := decode(m); err != nil {
					t.Errorf("property %q: %v", name, err)
				}
			}
			base["not_in_schema"] = 1
			if err := decode(base); err == nil || !strings.Contains(err.Error(), "unknown field") {
				t.Errorf("an unlisted property decoded: %v", err)
			}
		})
	}
}
