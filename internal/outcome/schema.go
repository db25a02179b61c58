package outcome

import (
	"maps"
	"reflect"
	"strings"
)

// Schema is the JSON Schema of an Outcome's --json object (and of toolkit
// mcp's structured content) for an applet whose details are of type
// details: ok, then text or error (and usage), then the details' members,
// as encoding/json writes them. Only ok is required: a tool or usage error
// has no details.
func Schema(details reflect.Type) map[string]any {
	props := map[string]any{
		"ok":    map[string]any{"type": "boolean", "description": "true when the call was done; false for a tool or usage error"},
		"text":  map[string]any{"type": "string", "description": "what the model is shown"},
		"error": map[string]any{"type": "string", "description": "the error, one line"},
		"usage": map[string]any{"type": "boolean", "description": "the error is in the input"},
		"media": map[string]any{"type": "object", "description": "a picture or a document for the model, as it is sent",
			"properties": map[string]any{
				"media_type": map[string]any{"type": "string"},
				"data":       map[string]any{"type": "string", "description": "its bytes in base64"},
			}, "required": []string{"media_type", "data"}, "additionalProperties": false},
	}
	if details != nil {
		maps.Copy(props, structSchema(details)["properties"].(map[string]any))
	}
	return map[string]any{"type": "object", "properties": props, "required": []string{"ok"}, "additionalProperties": false}
}

// typeSchema is the schema of what encoding/json writes for a value of t.
func typeSchema(t reflect.Type) map[string]any {
	switch t.Kind() {
	case reflect.Pointer:
		s := typeSchema(t.Elem())
		s["type"] = []any{s["type"], "null"}
		return s
	case reflect.Struct:
		return structSchema(t)
	case reflect.Slice:
		return map[string]any{"type": []any{"array", "null"}, "items": typeSchema(t.Elem())}
	case reflect.Map:
		return map[string]any{"type": []any{"object", "null"}, "additionalProperties": typeSchema(t.Elem())}
	case reflect.String:
		return map[string]any{"type": "string"}
	case reflect.Bool:
		return map[string]any{"type": "boolean"}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return map[string]any{"type": "integer"}
	case reflect.Float32, reflect.Float64:
		return map[string]any{"type": "number"}
	}
	panic("outcome.Schema: no schema for a " + t.String())
}

// structSchema is an object of t's exported fields by their json names;
// those without omitempty are always there.
func structSchema(t reflect.Type) map[string]any {
	props := map[string]any{}
	required := []string{}
	for f := range t.Fields() {
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		props[name] = typeSchema(f.Type)
		if !strings.Contains(opts, "omitempty") {
			required = append(required, name)
		}
	}
	return map[string]any{"type": "object", "properties": props, "required": required, "additionalProperties": false}
}
