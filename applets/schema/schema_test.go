package schema

import (
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"toolkit/applets"
)

func TestFormats(t *testing.T) {
	tool, _ := applets.Find("read")
	for format, key := range map[string]string{"plain": "input_schema", "anthropic": "input_schema", "mcp": "inputSchema", "openai-responses": "parameters"} {
		d, err := Describe(tool, format, false)
		if err != nil {
			t.Fatal(err)
		}
		if m := d.(map[string]any); m["name"] != "read" || m[key] == nil {
			t.Errorf("%s: %v", format, m)
		}
	}
	d, _ := Describe(tool, "openai", false)
	if f := d.(map[string]any)["function"].(map[string]any); f["parameters"] == nil || f["name"] != "read" {
		t.Errorf("openai: %v", d)
	}
	if _, err := Describe(tool, "yaml", false); err == nil {
		t.Error("an unknown format was accepted")
	}
	if _, err := Describe(tool, "anthropic", true); err == nil {
		t.Error("--strict was taken for anthropic")
	}
}

// TestPublishedConstraints: every tool in every format has what its API
// asks of a tool: a name of 1-64 letters, digits, _ or - (both APIs), an
// input schema of type object at its top (Anthropic, OpenAI, MCP), and MCP's
// outputSchema of type object.
func TestPublishedConstraints(t *testing.T) {
	name := regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)
	for _, tool := range applets.All() {
		for _, format := range Formats {
			d, err := Describe(tool, format, false)
			if err != nil {
				t.Fatal(err)
			}
			m := d.(map[string]any)
			if f, ok := m["function"].(map[string]any); ok {
				m = f
			}
			if !name.MatchString(m["name"].(string)) {
				t.Errorf("%s %s: name %q", format, tool.Name, m["name"])
			}
			for _, key := range []string{"input_schema", "inputSchema", "parameters", "outputSchema", "output_schema"} {
				if s, ok := m[key]; ok && s.(map[string]any)["type"] != "object" {
					t.Errorf("%s %s: %s is not an object: %v", format, tool.Name, key, s)
				}
			}
		}
	}
}

// strictKeywords are the keywords OpenAI's strict mode takes.
var strictKeywords = []string{"type", "description", "properties", "required", "additionalProperties", "items",
	"enum", "anyOf", "pattern", "format", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "minItems", "maxItems"}

// checkStrict reports what in s strict mode refuses: an object that does
// not require every property or allows others, a keyword it does not take.
func checkStrict(t *testing.T, s map[string]any, at string) {
	t.Helper()
	for k := range s {
		if !slices.Contains(strictKeywords, k) {
			t.Errorf("%s: keyword %q", at, k)
		}
	}
	if props, ok := s["properties"].(map[string]any); ok {
		if s["additionalProperties"] != false {
			t.Errorf("%s: additionalProperties %v", at, s["additionalProperties"])
		}
		var names []string
		for n, p := range props {
			names = append(names, n)
			checkStrict(t, p.(map[string]any), at+"."+n)
		}
		sort.Strings(names)
		req, _ := s["required"].([]string)
		if !slices.Equal(req, names) {
			t.Errorf("%s: required %v, properties %v", at, req, names)
		}
	}
	if items, ok := s["items"].(map[string]any); ok {
		checkStrict(t, items, at+"[]")
	}
}

// TestStrict: read, write and edit in strict form satisfy strict mode;
// shell (env) and patch (if_match) take objects of any names, and are
// refused naming that field.
func TestStrict(t *testing.T) {
	for _, tool := range applets.All() {
		d, err := Describe(tool, "openai-responses", true)
		switch tool.Name {
		case "shell", "patch":
			want := map[string]string{"shell": "shell: env is an object of any names", "patch": "patch: if_match is an object of any names"}[tool.Name]
			if err == nil || !strings.HasPrefix(err.Error(), want) {
				t.Errorf("%s: %v, want %q", tool.Name, err, want)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tool.Name, err)
		}
		m := d.(map[string]any)
		if m["strict"] != true {
			t.Errorf("%s: strict %v", tool.Name, m["strict"])
		}
		checkStrict(t, m["parameters"].(map[string]any), tool.Name)
	}
}
