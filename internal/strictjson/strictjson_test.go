package strictjson

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// testShape is a document with a required and an optional key, a map of objects, a
// list of objects with required keys, and a plain value.
var testShape = &Shape{All: true, Fields: map[string]*Shape{
	"name": nil,
	"opt":  {Fields: map[string]*Shape{"a": nil, "b": nil}},
	"map":  {Names: &Shape{All: true, Fields: map[string]*Shape{"k": nil}}},
	"list": {Elems: &Shape{All: true, Fields: map[string]*Shape{"x": nil, "y": nil}}},
	"any":  nil,
}}

// allKeys is every key testShape requires, for cases to add to.
const allKeys = `"name": "n", "opt": {}, "map": {}, "list": [], "any": [1, "two", null]`

func TestCheck(t *testing.T) {
	tests := []struct {
		name, doc string
		want      string // a part of the error; "" for none
		syntax    bool   // the error matches ErrSyntax
	}{
		{"all keys", `{` + allKeys + `}`, "", false},
		{"nested values", `{"name": 1, "opt": {"a": 1}, "map": {"p": {"k": 2}, "q": {"k": [3]}}, "list": [{"x": 1, "y": {}}], "any": {}}`, "", false},
		{"nulls for objects", `{"name": null, "opt": null, "map": null, "list": null, "any": null}`, "", false},
		{"trailing white space", "{" + allKeys + "}\n\t ", "", false},
		{"unknown key", `{` + allKeys + `, "nme": 1}`, `"nme": unknown key`, false},
		{"key in another case", `{"Name": 1, ` + allKeys + `}`, `"Name": unknown key`, false},
		{"unknown key in an optional object", `{"name": 1, "opt": {"c": 1}, "map": {}, "list": [], "any": 1}`, `"opt"."c": unknown key`, false},
		{"unknown key in Names", `{"name": 1, "opt": {}, "map": {"p": {"k": 1, "j": 2}}, "list": [], "any": 1}`, `"map"."p"."j": unknown key`, false},
		{"unknown key in Elems", `{"name": 1, "opt": {}, "map": {}, "list": [{"x": 1, "y": 2}, {"x": 1, "y": 2, "z": 3}], "any": 1}`, `"list"[1]."z": unknown key`, false},
		{"object in a plain value", `{"name": {"a": 1}, "opt": {}, "map": {}, "list": [], "any": 1}`, `"name"."a": unknown key`, false},
		{"object in a plain value's array", `{"name": 1, "opt": {}, "map": {}, "list": [], "any": [[{"deep": 1}]]}`, `"any"[0][0]."deep": unknown key`, false},
		{"duplicate key", `{"name": 1, ` + allKeys + `}`, `"name": duplicate key`, false},
		{"duplicate key in an optional object", `{"name": 1, "opt": {"a": 1, "a": 1}, "map": {}, "list": [], "any": 1}`, `"opt"."a": duplicate key`, false},
		{"duplicate name in Names", `{"name": 1, "opt": {}, "map": {"p": {"k": 1}, "p": {"k": 1}}, "list": [], "any": 1}`, `"map"."p": duplicate key`, false},
		{"duplicate key in Elems", `{"name": 1, "opt": {}, "map": {}, "list": [{"x": 1, "y": 2, "x": 1}], "any": 1}`, `"list"[0]."x": duplicate key`, false},
		{"escaped duplicate", `{"name": 1, "opt": {}, "map": {}, "list": [], "any": 1, "n\u0061me": 2}`, `"name": duplicate key`, false},
		{"missing key", `{"name": 1, "opt": {}, "map": {}, "list": []}`, `the document: missing key "any"`, false},
		{"missing key in Names", `{"name": 1, "opt": {}, "map": {"p": {}}, "list": [], "any": 1}`, `"map"."p": missing key "k"`, false},
		{"missing key in Elems", `{"name": 1, "opt": {}, "map": {}, "list": [{"x": 1, "y": 2}, {"y": 2}], "any": 1}`, `"list"[1]: missing key "x"`, false},
		{"optional keys may be missing", `{"name": 1, "opt": {"b": 2}, "map": {}, "list": [], "any": 1}`, "", false},
		{"a quote in a key", `{"a\"b": 1}`, `"a\"b": unknown key`, false},
		{"a second value", `{` + allKeys + `} {}`, "more than one JSON value", true},
		{"trailing garbage", `{` + allKeys + `} x`, "", true},
		{"trailing bracket", `{` + allKeys + `}]`, "", true},
		{"an array", `[{` + allKeys + `}]`, "not a JSON object", true},
		{"a string", `"x"`, "not a JSON object", true},
		{"null", `null`, "not a JSON object", true},
		{"empty", ``, "not a JSON object", true},
		{"truncated", `{"name": 1, "opt": {"a": `, "", true},
		{"truncated array", `{"name": [1, 2`, "", true},
		{"bad value", `{"name": tru}`, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Check([]byte(tt.doc), testShape)
			if tt.want == "" && !tt.syntax {
				if err != nil {
					t.Fatalf("Check refused %s: %v", tt.doc, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Check accepted %s", tt.doc)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not say %q", err, tt.want)
			}
			if errors.Is(err, ErrSyntax) != tt.syntax {
				t.Errorf("error %q: errors.Is(ErrSyntax) = %v, want %v", err, !tt.syntax, tt.syntax)
			}
		})
	}
}

// nested is a document whose key "v" holds n arrays or objects, one in another.
func nested(n int, objects bool) string {
	if objects {
		return `{"v": ` + strings.Repeat(`{"a": `, n) + "1" + strings.Repeat("}", n) + "}"
	}
	return `{"v": ` + strings.Repeat("[", n) + strings.Repeat("]", n) + "}"
}

func TestCheckDepth(t *testing.T) {
	open := &Shape{Names: &Shape{}}
	open.Names = open // objects in objects, any keys
	for _, objects := range []bool{false, true} {
		if err := Check([]byte(nested(maxDepth-1, objects)), open); err != nil {
			t.Errorf("objects %v: %d levels refused: %v", objects, maxDepth-1, err)
		}
		for _, n := range []int{maxDepth, maxDepth + 1, 100000} {
			err := Check([]byte(nested(n, objects)), open)
			if err == nil || !strings.Contains(err.Error(), "nested too deep") {
				t.Errorf("objects %v: %d levels: error %v, want nested too deep", objects, n, err)
			}
		}
	}
}

func FuzzCheck(f *testing.F) {
	for _, s := range []string{
		`{` + allKeys + `}`,
		`{"name": 1, "opt": {"a": 1, "a": 2}, "map": {"p": {"k": 1}}, "list": [{"x": 1, "y": 2}], "any": [[{}]]}`,
		`{"name": 1} {}`, `[`, `{"map": {"p": {}}}`, nested(maxDepth, false), nested(maxDepth, true),
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		err := Check(data, testShape)
		if err == nil {
			// Accepted: one valid JSON object whose top-level keys are testShape's.
			var m map[string]json.RawMessage
			if uerr := json.Unmarshal(data, &m); uerr != nil {
				t.Fatalf("Check accepted a document encoding/json refuses: %v", uerr)
			}
			if len(m) != len(testShape.Fields) {
				t.Fatalf("Check accepted keys %v", m)
			}
			for k := range m {
				if _, ok := testShape.Fields[k]; !ok {
					t.Fatalf("Check accepted key %q", k)
				}
			}
			return
		}
		if !json.Valid(data) && err.Error() == "" {
			t.Fatal("an error without a message")
		}
	})
}
