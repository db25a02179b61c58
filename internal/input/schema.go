package input

import "reflect"

// Schema is the JSON Schema of an Args type's input, made from the fields
// Decode reads: the same names, types, required fields, bounds and checks
// (as patterns), null for an optional field, and no other property allowed,
// so that the schema and the decoder agree on every input.
func Schema(args reflect.Type) map[string]any {
	return objectSchema(Fields(args))
}

// The checks as ECMA-262 patterns (the ones JSON Schema takes), written so
// that Go's RE2 reads them the same.
const (
	noNUL        = `^[^\x00]*$`
	ifMatch      = `^(absent|[0-9a-fA-F]{12,64})$`
	envName      = `^[^=]+$`
	envNameNoNUL = `^[^=\x00]+$`
	name         = `^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$`
)

func objectSchema(fields []Field) map[string]any {
	props := map[string]any{}
	var required []string
	for _, f := range fields {
		p := fieldSchema(f)
		if f.Desc != "" {
			p["description"] = f.Desc
		}
		if f.Required {
			required = append(required, f.Name)
		} else {
			p["type"] = []any{p["type"], "null"} // null is leaving it out
			if enum, ok := p["enum"].([]string); ok {
				values := make([]any, 0, len(enum)+1)
				for _, v := range enum {
					values = append(values, v)
				}
				p["enum"] = append(values, nil)
			}
		}
		props[f.Name] = p
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
		if len(f.OneOf) > 0 {
			p["enum"] = f.OneOf
		}
		switch {
		case f.IfMatch:
			p["pattern"] = ifMatch
		case f.IsName:
			p["pattern"] = name
		case f.NoNUL:
			p["pattern"] = noNUL
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
		values := map[string]any{"type": "string"}
		names := ""
		switch {
		case f.EnvMap && f.NoNUL:
			names = envNameNoNUL
		case f.EnvMap:
			names = envName
		case f.NoNUL:
			names = noNUL
		}
		if names != "" {
			p["propertyNames"] = map[string]any{"pattern": names}
		}
		switch {
		case f.IfMatch:
			values["pattern"] = ifMatch
		case f.NoNUL:
			values["pattern"] = noNUL
		}
		p["additionalProperties"] = values
	case List:
		p["type"] = "array"
		p["items"] = fieldSchema(*f.Elem)
	case Object:
		return objectSchema(f.Fields)
	}
	return p
}
