package input

import "reflect"

// Schema is the JSON Schema of an Args type's input, made from the fields
// Decode reads: the same names, types, required fields and bounds, and no
// other property allowed.
func Schema(args reflect.Type) map[string]any {
	return objectSchema(Fields(args))
}

func objectSchema(fields []Field) map[string]any {
	props := map[string]any{}
	var required []string
	for _, f := range fields {
		p := fieldSchema(f)
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

func fieldSchema(f Field) map[string]any {
	p := map[string]any{}
	switch f.Type {
	case String:
		p["type"] = "string"
		if f.NonEmpty {
			p["minLength"] = 1
		}
	case Integer:
		p["type"] = "integer"
		if f.Min != nil {
			p["minimum"] = *f.Min
		}
	case Boolean:
		p["type"] = "boolean"
	case StringMap:
		p["type"] = "object"
		p["additionalProperties"] = map[string]any{"type": "string"}
	case List:
		p["type"] = "array"
		p["items"] = fieldSchema(*f.Elem)
	case Object:
		return objectSchema(f.Fields)
	}
	return p
}
