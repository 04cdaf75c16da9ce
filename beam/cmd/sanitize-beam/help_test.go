package main

import (
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestUsageMatchesReadme: for each command, README.md's sanitize-beam line and the
// usage sanitize-beam prints take the same flags, with the same optional flags written
// the same way ("[--report R.json] [--report R.html]"; the runner's flags aside), and
// every flag of the command's own is in the usage. So neither can change without the
// other.
func TestUsageMatchesReadme(t *testing.T) {
	data, err := os.ReadFile("../../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := map[string]string{}
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) > 1 && f[0] == "bin/sanitize-beam" {
			readme[f[1]] = line
		}
	}
	usages := map[string]string{}
	for _, line := range strings.Split(usage, "\n") {
		if f := strings.Fields(strings.TrimPrefix(line, "usage:")); len(f) > 1 && f[0] == "sanitize-beam" {
			usages[f[1]] = line
		}
	}
	if len(readme) == 0 || len(readme) != len(usages) {
		t.Fatalf("README.md lists sanitize-beam commands %v, its usage %v", slices.Sorted(maps.Keys(readme)), slices.Sorted(maps.Keys(usages)))
	}
	flagRE := regexp.MustCompile(`--[a-z][a-z_-]*`)
	optionalRE := regexp.MustCompile(`\[--[^\]]*\]`)
	notRunner := func(list []string) []string {
		list = slices.DeleteFunc(list, func(s string) bool { return strings.Contains(s, "--runner") })
		slices.Sort(list)
		return list
	}
	for name, line := range readme {
		use, ok := usages[name]
		if !ok {
			t.Errorf("README.md lists sanitize-beam %s, which its usage does not", name)
			continue
		}
		if a, b := notRunner(flagRE.FindAllString(line, -1)), notRunner(flagRE.FindAllString(use, -1)); !slices.Equal(a, b) {
			t.Errorf("%s: README.md's flags %v, the usage's %v", name, a, b)
		}
		if a, b := notRunner(optionalRE.FindAllString(line, -1)), notRunner(optionalRE.FindAllString(use, -1)); !slices.Equal(a, b) {
			t.Errorf("%s: README.md's optional flags %q, the usage's %q", name, a, b)
		}
	}
	for _, f := range []string{"config", "in", "out", "report", "force", "max-class-table", "ledger", "quiet", "debug", "log-format"} {
		if !strings.Contains(usage, "--"+f) && !(f == "config" && strings.Contains(usage, "-c CONFIG")) {
			t.Errorf("the usage does not name --%s", f)
		}
	}
}
