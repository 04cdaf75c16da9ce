package testfiles

import (
	"strings"
	"testing"
)

// Replace returns s with the first occurrence of old replaced by new. The test fails,
// naming old, when s does not hold it: a test that edits a configuration or a fixture
// must not go on with the text unedited when the template has drifted from the edit
// (the subtest would silently become a copy of another one).
func Replace(t testing.TB, s, old, new string) string {
	t.Helper()
	mustHold(t, s, old)
	return strings.Replace(s, old, new, 1)
}

// ReplaceAll returns s with every occurrence of old replaced by new; the test fails,
// naming old, when s holds none.
func ReplaceAll(t testing.TB, s, old, new string) string {
	t.Helper()
	mustHold(t, s, old)
	return strings.ReplaceAll(s, old, new)
}

// mustHold fails the test when s does not hold old, showing s when it is short.
func mustHold(t testing.TB, s, old string) {
	t.Helper()
	if strings.Contains(s, old) {
		return
	}
	if len(s) > 2000 {
		t.Fatalf("the text to edit (%d bytes) does not hold %q", len(s), old)
	}
	t.Fatalf("the text to edit does not hold %q:\n%s", old, s)
}
