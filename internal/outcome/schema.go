package outcome

import (
	"encoding/json"
	"reflect"

	"github.com/google/jsonschema-go/jsonschema"
)

// changesSchema is the schema of "changes", what a call changed.
func changesSchema() *jsonschema.Schema {
	c, err := jsonschema.ForType(reflect.TypeFor[Changes](), nil)
	if err != nil {
		panic("outcome.Schema: " + err.Error())
	}
	c.Description = "what the call changed under the tracked tree, when history is on"
	return c
}

// Schema is the JSON Schema of an Outcome's --json object (and of toolkit
// mcp's structured content) for an applet whose details are of type
// details: ok, then text or error (and usage), then the details' members,
// as encoding/json writes them, inferred by the schema package the MCP SDK
// infers its tools' schemas with. Only ok is required: a tool or usage
// error has no details.
func Schema(details reflect.Type) map[string]any {
	s := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{}}
	if details != nil {
		d, err := jsonschema.ForType(details, nil)
		if err != nil {
			panic("outcome.Schema: " + err.Error()) // a Details type of plain fields cannot fail
		}
		s = d
	}
	s.Required = []string{"ok"}
	for name, p := range map[string]*jsonschema.Schema{
		"ok":    {Type: "boolean", Description: "true when the call was done; false for a tool or usage error"},
		"text":  {Type: "string", Description: "what the model is shown"},
		"error": {Type: "string", Description: "the error, one line"},
		"usage": {Type: "boolean", Description: "the error is in the input"},
		"media": {Type: "object", Description: "a picture or a document for the model, as it is sent",
			Properties: map[string]*jsonschema.Schema{
				"media_type": {Type: "string"},
				"data":       {Type: "string", Description: "its bytes in base64"},
			}, Required: []string{"media_type", "data"}, AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}}},
		"changes": changesSchema(),
	} {
		s.Properties[name] = p
	}
	// As a map, as the input schemas are: hosts print and change both alike.
	b, _ := json.Marshal(s)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	return m
}
