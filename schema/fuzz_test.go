package schema

import (
	"errors"
	"os"
	"strings"
	"testing"
)

// FuzzParse checks that Parse never panics, that every error it returns is bad input
// naming the file, and that every configuration it accepts keeps the basic invariants.
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
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := Parse(data, "fuzz.yaml", "/cfg")
		if err != nil {
			if !errors.Is(err, ErrBadInput) {
				t.Fatalf("error %q does not match ErrBadInput", err)
			}
			if !strings.HasPrefix(err.Error(), "fuzz.yaml") {
				t.Fatalf("error %q does not name the file", err)
			}
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
