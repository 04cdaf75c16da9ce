//go:build unix

package dphist

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sanitizer/publish"
)

// killedSave names the ledger that TestKilledSave's child writes.
const killedSave = "DPHIST_KILLED_SAVE"

// TestKilledSave is the child of TestRecordAfterKilledSave (it does nothing
// otherwise): it starts writing the ledger, says which temporary it writes, and waits
// to be killed.
func TestKilledSave(t *testing.T) {
	path := os.Getenv(killedSave)
	if path == "" {
		t.Skip("run by TestRecordAfterKilledSave")
	}
	publish.WriteFile(path, publish.Options{Force: true}, func(f *os.File) error {
		f.WriteString(`{"datasets":{"ward":`)
		fmt.Printf("tmp %s\n", f.Name())
		io.Copy(io.Discard, os.Stdin) // until the parent goes
		os.Exit(1)                    // never publish
		return nil
	})
}

// TestRecordAfterKilledSave: while a run is writing the ledger, a Record leaves its
// temporary; once that run is killed, the next Record removes it.
func TestRecordAfterKilledSave(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "ledger.json")
	cmd := exec.Command(os.Args[0], "-test.run=^TestKilledSave$", "-test.count=1")
	cmd.Env = append(os.Environ(), killedSave+"="+path)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	var tmp string
	for sc := bufio.NewScanner(out); tmp == "" && sc.Scan(); {
		tmp, _ = strings.CutPrefix(sc.Text(), "tmp ")
	}
	if filepath.Dir(tmp) != dir {
		t.Fatalf("the child wrote %q", tmp)
	}
	if _, err := Record(path, "ward", 1, 0, Spend{Epsilon: 0.1}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(tmp); err != nil {
		t.Fatalf("a live run's temporary was removed: %v", err)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	if _, err := os.Stat(tmp); err != nil {
		t.Fatalf("the killed run's temporary is not there to sweep: %v", err)
	}
	a, err := Record(path, "ward", 1, 0, Spend{Epsilon: 0.2})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(tmp); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the killed run's temporary is still there (%v)", err)
	}
	if got := names(t, dir); !slices.Equal(got, []string{"ledger.json", "ledger.json.lock"}) {
		t.Errorf("the folder holds %q", got)
	}
	if len(a.Spends) != 2 {
		t.Errorf("the ledger holds %d spends, want 2", len(a.Spends))
	}
}
