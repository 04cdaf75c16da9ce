package schema

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"

	"sanitizer/fault"
)

// FuzzParse checks that Parse never panics, that every error it returns is bad input
// naming the file on each of its lines, in the order of their line numbers, and that
// every configuration it accepts keeps the basic invariants.
func FuzzParse(f *testing.F) {
	example, err := os.ReadFile("testdata/ward.yaml")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(example)
	for _, seed := range []string{
		"",
		"---\n",
		"columns: [a]\n",
		"columns:\n  x: {role: quasi}\n",
		"columns:\n  x: {role: quasi\n",
		"columns:\n  a: &r {role: identifier}\n  b: *r\n  c: {<<: *r}\n",
		"columns:\n  x: {role: quasi, type: float, hierarchy: {intervals: [0.1, .nan]}}\n",
		"privacy: {k: five, suppression: [1]}\ncolumns: {d: {role: sensitive}}\n",
		"dp:\n  epsilon-total: 1e-6\n  outputs:\n    - {name: a, epsilon: 1, synthetic: {columns: [d], workload: &w [*w]}}\ncolumns: {d: {role: sensitive}}\n",
		"input: {csv: {separator: \"\\t\"}}\ncolumns: {d: {role: sensitive}}\n---\n",
		"dataset: \"w\\u200b \"\ncolumns: {d: {role: sensitive}}\n",
		"privacy: {k: 0, l-diversity: [{column: d, variant: x}, {column: d, l: 0}]}\ncolumns: {d: {role: sensitve}, e: {role: quasi, hierarchy: {}}}\nsearch: {metric: ncp, gs-factor: 2, weights: {e: 0, f: 1}}\n",
		"columns: {a: {role: quasi, hierarchy: {<<: {mask: {max: 1}}}}}\nrisk: {fraction: 1}\ndp: {outputs: [{}, {name: a, synthetic: {columns: [a]}, post: [round]}]}\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := Parse(data, "fuzz.yaml", "/cfg")
		if err != nil {
			if !errors.Is(err, fault.ErrBadInput) {
				t.Fatalf("error %q does not match fault.ErrBadInput", err)
			}
			checkErrorLines(t, err)
			if cfg != nil {
				t.Fatalf("configuration returned with error %q", err)
			}
			return
		}
		if len(cfg.Columns) == 0 {
			t.Fatal("accepted a configuration without columns")
		}
		for _, c := range cfg.Columns {
			if c.Role == Quasi && c.Hierarchy == nil {
				t.Fatalf("quasi-identifier %q without hierarchy", c.Name)
			}
		}
		if cfg.Privacy.Suppression < 0 || cfg.Privacy.Suppression > 1 {
			t.Fatalf("suppression %g", cfg.Privacy.Suppression)
		}
		if cfg.Dataset != "" && CheckDatasetName(cfg.Dataset) != nil {
			t.Fatalf("accepted the dataset name %q", cfg.Dataset)
		}
	})
}

// checkErrorLines checks that every line of err names the file fuzz.yaml, but a last
// "and N more", and that the lines' numbers do not decrease.
func checkErrorLines(t *testing.T, err error) {
	lines := strings.Split(err.Error(), "\n")
	if last := lines[len(lines)-1]; len(lines) > MaxListed && strings.HasPrefix(last, "and ") {
		lines = lines[:len(lines)-1]
	}
	prev := 0
	for _, l := range lines {
		if !strings.HasPrefix(l, "fuzz.yaml") {
			t.Fatalf("error %q: line %q does not name the file", err, l)
		}
		rest := strings.TrimPrefix(l, "fuzz.yaml:")
		n, _, _ := strings.Cut(rest, ":")
		if line, convErr := strconv.Atoi(n); convErr == nil {
			if line < prev {
				t.Fatalf("error %q: line %d after line %d", err, line, prev)
			}
			prev = line
		}
	}
}
