package release

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"sanitizer/fault"
	"sanitizer/job"
	"sanitizer/schema"
	"sanitizer/table"
)

// TestIDTableMatchesMap: ids numbered by the compact table get the numbers a map
// gives them, in order of first appearance, through several growths, whatever their
// length (the empty id too), and a number's text is its id.
func TestIDTableMatchesMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(71, 72))
	tab, want := newIDTable(), map[string]int32{}
	var texts []string
	for range 200000 {
		v := "P" + strconv.Itoa(rng.IntN(60000))
		switch rng.IntN(50) {
		case 0:
			v = ""
		case 1:
			v += string(make([]byte, rng.IntN(40))) // long, with zero bytes
		}
		c, added, err := tab.number(v)
		if err != nil {
			t.Fatal(err)
		}
		w, seen := want[v]
		if !seen {
			w = int32(len(want))
			want[v] = w
			texts = append(texts, v)
		}
		if c != w || added == seen {
			t.Fatalf("%q: number %d (added %v), want %d (new %v)", v, c, added, w, !seen)
		}
	}
	if tab.len() != len(want) {
		t.Fatalf("%d ids numbered, want %d", tab.len(), len(want))
	}
	for c, v := range texts {
		if string(tab.id(int32(c))) != v {
			t.Fatalf("id %d reads %q, want %q", c, tab.id(int32(c)), v)
		}
		if got, ok, _ := tab.find(v); !ok || got != int32(c) {
			t.Fatalf("find %q: %d %v, want %d", v, got, ok, c)
		}
	}
	if _, ok, _ := tab.find("absent"); ok {
		t.Fatal("an id never numbered is found")
	}
}

// TestReleasePersonsEmptyIDParquet: an empty id read from Parquet (a string, not a
// null) is a record without its person's id: exit 2 naming the row and the column,
// never a value, and nothing written.
func TestReleasePersonsEmptyIDParquet(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.parquet")
	recs := make([][]string, 3000)
	for i := range recs {
		id := fmt.Sprintf("P%04d", i/3)
		if i == 2100 {
			id = ""
		}
		recs[i] = []string{id, fmt.Sprintf("021%02d", i%50)}
	}
	writeParquet(t, in, []table.OutColumn{{Name: "pid", Type: schema.String}, {Name: "zip", Type: schema.String}}, recs)
	cfg := loadConfigText(t, "columns:\n  pid: {role: identifier}\n  zip: {role: quasi, hierarchy: {mask: {max: 5}}}\nprivacy: {k: 2, privacy-unit: {column: pid}}\n")
	out := filepath.Join(dir, "out.csv")
	_, err := Release(context.Background(), cfg, job.Options{Input: in, Output: out})
	if !errors.Is(err, fault.ErrBadInput) || !strings.Contains(err.Error(), "row 2101") || !strings.Contains(err.Error(), `"pid"`) || !strings.Contains(err.Error(), "privacy.privacy-unit.column") {
		t.Fatalf("got %v, want bad input naming row 2101, pid and the key", err)
	}
	leftOnly(t, dir, "in.parquet")
}
