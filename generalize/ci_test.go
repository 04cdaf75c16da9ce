package generalize

import (
	"os"
	"testing"
)

// exhaustiveOnly skips a test (or a case) that make test leaves to make
// test-exhaustive, which CI runs after it (SANITIZE_EXHAUSTIVE): the searches of the
// whole Adult lattice and ARX's cases on it, and the roll-ups of several chunks of
// records. make test keeps a smaller test of the same property beside each.
func exhaustiveOnly(t *testing.T, what string) {
	t.Helper()
	if os.Getenv("SANITIZE_EXHAUSTIVE") == "" {
		t.Skip(what + ": make test-exhaustive (CI) runs it")
	}
}
