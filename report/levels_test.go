package report

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// TestLevelsCountedOneWay: a quasi-identifier's level reads "level L of 0–T" (T the top,
// the report's levels − 1) on stdout and in the HTML page alike, at the original values,
// between, and at the top; no output counts the levels another way ("2 of 5" on stdout
// and "level 2, on a scale from 0 to 4" in the page were both said of one node).
func TestLevelsCountedOneWay(t *testing.T) {
	other := regexp.MustCompile(`(?:level|at) \d+ of \d+(?:[^–\d]|$)|scale from|\b\d+ of \d+: (?:original|\*)|[a-z] \d+ of \d+[,\n]`)
	for _, c := range []struct{ level, levels int }{{0, 5}, {2, 5}, {4, 5}, {0, 2}, {1, 2}, {3, 8}} {
		r := adultReport(false)
		r.Node = []NodeLevel{{Column: "age", Level: c.level, Levels: c.levels}}
		r.Generalized = []QuasiRelease{{Column: "age", Level: c.level, Levels: c.levels, Distinct: 2, Examples: []string{"a", "b"}}}
		want := fmt.Sprintf("level %d of 0–%d", c.level, c.levels-1)
		if got := LevelOf(c.level, c.levels); got != want {
			t.Errorf("LevelOf(%d, %d) = %q, want %q", c.level, c.levels, got, want)
		}
		var stdout, page bytes.Buffer
		r.Summary(&stdout)
		if err := WriteReleaseHTML(&page, r); err != nil {
			t.Fatal(err)
		}
		for where, text := range map[string]string{"stdout": stdout.String(), "the HTML page": page.String()} {
			if !strings.Contains(text, want) || where == "stdout" && !strings.Contains(text, " age "+want) {
				t.Errorf("%d of %d levels: %s does not say %q:\n%s", c.level, c.levels, where, want, text)
			}
			if m := other.FindString(text); m != "" {
				t.Errorf("%d of %d levels: %s counts levels another way: %q", c.level, c.levels, where, m)
			}
		}
	}
}
