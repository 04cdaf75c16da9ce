// Package strictjson checks a JSON document's keys before it is decoded: encoding/json
// alone keeps the last of two equal keys, matches keys in any case and ignores a
// missing one, so that a file a run trusts (the DP ledger, a series' state) could lose
// an entry unseen. It imports nothing of this module.
package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// Shape is what one JSON value of a document may hold. An object may have exactly the
// keys of Fields (each value of the shape given), or, with Names set, any keys (each
// value of shape Names); an array's elements are of shape Elems. With All, every key
// of Fields must be given. A nil Shape is a value the document's types check when it
// is decoded; it may hold no object key.
type Shape struct {
	Fields map[string]*Shape
	Names  *Shape
	Elems  *Shape
	All    bool
}

// maxDepth bounds the nesting of arrays and objects.
const maxDepth = 16

// ErrSyntax is matched by errors of text that is not one JSON object.
var ErrSyntax = errors.New("not one JSON object")

// Check refuses data unless it is one JSON object of shape s in which no object has a
// key twice and every key is one s lists, in the same case (and, where s says All,
// every key it lists is given). The error names the key's path, e.g.
// "datasets"."ward": duplicate key.
func Check(data []byte, s *Shape) error {
	if json.Valid(data) { // the keys alone to check: a scan, no tokens (a series' state is tens of megabytes)
		return scanDocument(data, s)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber() // numbers are checked when decoded, not here
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return fmt.Errorf("%w: not a JSON object", ErrSyntax)
	}
	if err := walkObject(dec, s, "", 1); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return fmt.Errorf("%w: more than one JSON value", ErrSyntax)
	}
	return nil
}

// walkValue reads the value at path (nested depth deep) and checks it against s.
func walkValue(dec *json.Decoder, s *Shape, path string, depth int) error {
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
	var elems *Shape
	if s != nil {
		elems = s.Elems
	}
	for i := 0; dec.More(); i++ {
		if err := walkValue(dec, elems, path+"["+strconv.Itoa(i)+"]", depth+1); err != nil {
			return err
		}
	}
	return closing(dec, path)
}

// walkObject reads the keys and values of the object at path, whose '{' has been read.
func walkObject(dec *json.Decoder, s *Shape, path string, depth int) error {
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return syntaxError(path, err)
		}
		key, _ := tok.(string) // an object's tokens alternate key, value
		sub, at, err := s.member(seen, key, path)
		if err != nil {
			return err
		}
		if err := walkValue(dec, sub, at, depth); err != nil {
			return err
		}
	}
	if err := s.complete(seen, path); err != nil {
		return err
	}
	return closing(dec, path)
}

// member is the shape of key's value in an object of shape s at path, and its path,
// once key is recorded in seen: a key met before or that s does not list is an error.
func (s *Shape) member(seen map[string]bool, key, path string) (*Shape, string, error) {
	at := strconv.Quote(key)
	if path != "" {
		at = path + "." + at
	}
	if seen[key] {
		return nil, at, fmt.Errorf("%s: duplicate key", at)
	}
	seen[key] = true
	sub, ok := s.field(key)
	if !ok {
		return nil, at, fmt.Errorf("%s: unknown key (keys are case-sensitive)", at)
	}
	return sub, at, nil
}

// complete refuses an object of shape s at path whose keys (seen) lack one s
// requires (All).
func (s *Shape) complete(seen map[string]bool, path string) error {
	if s == nil || !s.All {
		return nil
	}
	for _, key := range slices.Sorted(maps.Keys(s.Fields)) {
		if !seen[key] {
			return fmt.Errorf("%s: missing key %q", objectPath(path), key)
		}
	}
	return nil
}

// objectPath names the object at path in a message.
func objectPath(path string) string {
	if path == "" {
		return "the document"
	}
	return path
}

// field is the shape of key's value in an object of shape s, and whether s has key.
func (s *Shape) field(key string) (*Shape, bool) {
	switch {
	case s == nil:
		return nil, false
	case s.Names != nil:
		return s.Names, true
	default:
		sub, ok := s.Fields[key]
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

// syntaxError is err, met in the value at path, as an error matching ErrSyntax.
func syntaxError(path string, err error) error {
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	if path == "" {
		return fmt.Errorf("%w: %w", ErrSyntax, err)
	}
	return fmt.Errorf("%w: %s: %w", ErrSyntax, path, err)
}

// scanDocument is Check of valid JSON data: the same checks as the token walk, in the
// same order, by a scan of the bytes that decodes only the keys.
func scanDocument(data []byte, s *Shape) error {
	sc := scanner{data: data}
	sc.space()
	if sc.at >= len(data) || data[sc.at] != '{' {
		return fmt.Errorf("%w: not a JSON object", ErrSyntax)
	}
	if err := sc.value(s, "", 0); err != nil {
		return err
	}
	if sc.space(); sc.at < len(data) {
		return fmt.Errorf("%w: more than one JSON value", ErrSyntax)
	}
	return nil
}

// scanner reads valid JSON from data[at:].
type scanner struct {
	data []byte
	at   int
}

// space skips white space.
func (sc *scanner) space() {
	for sc.at < len(sc.data) {
		switch sc.data[sc.at] {
		case ' ', '\t', '\n', '\r':
			sc.at++
		default:
			return
		}
	}
}

// value reads the value at path (nested depth deep) and checks it against s.
func (sc *scanner) value(s *Shape, path string, depth int) error {
	sc.space()
	switch sc.data[sc.at] {
	case '{', '[':
		if depth >= maxDepth {
			return fmt.Errorf("%s: nested too deep", path)
		}
		if sc.data[sc.at] == '{' {
			return sc.object(s, path, depth+1)
		}
		return sc.array(s, path, depth+1)
	case '"':
		sc.str()
	default: // a number, true, false or null
		for sc.at < len(sc.data) && !bytes.ContainsRune([]byte(",}] \t\n\r"), rune(sc.data[sc.at])) {
			sc.at++
		}
	}
	return nil
}

// str skips a string, and returns its raw text (between the quotes).
func (sc *scanner) str() []byte {
	start := sc.at + 1
	for i := start; ; i++ {
		switch sc.data[i] {
		case '\\':
			i++
		case '"':
			sc.at = i + 1
			return sc.data[start:i]
		}
	}
}

// array reads the elements of the array at path.
func (sc *scanner) array(s *Shape, path string, depth int) error {
	sc.at++ // [
	var elems *Shape
	if s != nil {
		elems = s.Elems
	}
	for i := 0; ; i++ {
		sc.space()
		if sc.data[sc.at] == ']' {
			sc.at++
			return nil
		}
		if i > 0 {
			sc.at++ // ,
		}
		if err := sc.value(elems, path+"["+strconv.Itoa(i)+"]", depth); err != nil {
			return err
		}
	}
}

// object reads the keys and values of the object at path.
func (sc *scanner) object(s *Shape, path string, depth int) error {
	sc.at++ // {
	seen := map[string]bool{}
	for first := true; ; first = false {
		sc.space()
		if sc.data[sc.at] == '}' {
			sc.at++
			break
		}
		if !first {
			sc.at++ // ,
			sc.space()
		}
		key := string(sc.str())
		if strings.IndexByte(key, '\\') >= 0 {
			var k string
			if err := json.Unmarshal([]byte(`"`+key+`"`), &k); err != nil {
				return syntaxError(path, err)
			}
			key = k
		}
		sc.space()
		sc.at++ // :
		sub, at, err := s.member(seen, key, path)
		if err != nil {
			return err
		}
		if err := sc.value(sub, at, depth); err != nil {
			return err
		}
	}
	if err := s.complete(seen, path); err != nil {
		return err
	}
	return nil
}
