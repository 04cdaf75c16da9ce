package dphist

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// shape is what one JSON value of a ledger may hold. An object may have exactly the
// keys of fields (each value of the shape given), or, with names set, any keys (each
// value of shape names); an array's elements are of shape elems. A nil shape is a
// value the ledger's types check when it is decoded; it may hold no object key.
type shape struct {
	fields map[string]*shape
	names  *shape
	elems  *shape
}

// ledgerShape is the JSON form of Ledger: its keys, exactly as Save writes them.
var ledgerShape = &shape{fields: map[string]*shape{
	"datasets": {names: &shape{fields: map[string]*shape{
		"epsilon_total": nil,
		"delta_total":   nil,
		"spends": {elems: &shape{fields: map[string]*shape{
			"time": nil, "epsilon": nil, "delta": nil, "outputs": nil,
		}}},
	}}},
}}

// maxDepth bounds the nesting of arrays and objects; a ledger needs six.
const maxDepth = 16

// errNotLedger is matched by errors of text that is not one JSON object.
var errNotLedger = errors.New("not a ledger")

// checkStrict refuses data unless it is one JSON object of shape s in which no object
// has a key twice and every key is one s lists, in the same case. The error names the
// key's path, e.g. "datasets"."ward": duplicate key.
func checkStrict(data []byte, s *shape) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber() // numbers are checked when decoded, not here
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return fmt.Errorf("%w: not a JSON object", errNotLedger)
	}
	if err := walkObject(dec, s, "", 1); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return fmt.Errorf("%w: more than one JSON value", errNotLedger)
	}
	return nil
}

// walkValue reads the value at path (nested depth deep) and checks it against s.
func walkValue(dec *json.Decoder, s *shape, path string, depth int) error {
	tok, err := dec.Token()
	if err != nil {
		return syntaxError(path, err)
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return nil
	}
	if depth >= maxDepth {
		return fmt.Errorf("%s: nested too deep", path)
	}
	if d == '{' {
		return walkObject(dec, s, path, depth+1)
	}
	var elems *shape
	if s != nil {
		elems = s.elems
	}
	for i := 0; dec.More(); i++ {
		if err := walkValue(dec, elems, path+"["+strconv.Itoa(i)+"]", depth+1); err != nil {
			return err
		}
	}
	return closing(dec, path)
}

// walkObject reads the keys and values of the object at path, whose '{' has been read.
func walkObject(dec *json.Decoder, s *shape, path string, depth int) error {
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return syntaxError(path, err)
		}
		key, _ := tok.(string) // an object's tokens alternate key, value
		at := strconv.Quote(key)
		if path != "" {
			at = path + "." + at
		}
		if seen[key] {
			return fmt.Errorf("%s: duplicate key", at)
		}
		seen[key] = true
		sub, ok := s.field(key)
		if !ok {
			return fmt.Errorf("%s: unknown key (keys are case-sensitive)", at)
		}
		if err := walkValue(dec, sub, at, depth); err != nil {
			return err
		}
	}
	return closing(dec, path)
}

// field is the shape of key's value in an object of shape s, and whether s has key.
func (s *shape) field(key string) (*shape, bool) {
	switch {
	case s == nil:
		return nil, false
	case s.names != nil:
		return s.names, true
	default:
		sub, ok := s.fields[key]
		return sub, ok
	}
}

// closing reads the '}' or ']' that ends the value at path.
func closing(dec *json.Decoder, path string) error {
	if _, err := dec.Token(); err != nil {
		return syntaxError(path, err)
	}
	return nil
}

// syntaxError is err, met in the value at path, as an error matching errNotLedger.
func syntaxError(path string, err error) error {
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	if path == "" {
		return fmt.Errorf("%w: %w", errNotLedger, err)
	}
	return fmt.Errorf("%w: %s: %w", errNotLedger, path, err)
}
