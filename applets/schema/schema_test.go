package schema

import (
	"testing"

	"toolkit/applets"
)

func TestFormats(t *testing.T) {
	tool, _ := applets.Find("read")
	for format, key := range map[string]string{"plain": "input_schema", "anthropic": "input_schema", "mcp": "inputSchema"} {
		d, err := Describe(tool, format)
		if err != nil {
			t.Fatal(err)
		}
		if m := d.(map[string]any); m["name"] != "read" || m[key] == nil {
			t.Errorf("%s: %v", format, m)
		}
	}
	d, _ := Describe(tool, "openai")
	if f := d.(map[string]any)["function"].(map[string]any); f["parameters"] == nil || f["name"] != "read" {
		t.Errorf("openai: %v", d)
	}
	if _, err := Describe(tool, "yaml"); err == nil {
		t.Error("an unknown format was accepted")
	}
}
