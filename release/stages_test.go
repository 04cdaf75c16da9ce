package release

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"sanitizer/dprun"
	"sanitizer/fault"
	"sanitizer/gen"
	"sanitizer/generalize"
	"sanitizer/internal/testfiles"
	"sanitizer/job"
	"sanitizer/sample"
	"sanitizer/schema"
	"sanitizer/table"
)

// hospitalFixture writes n generated hospital records and the sample configuration
// (with absolute hierarchy paths) into a temporary folder.
func hospitalFixture(t *testing.T, n int) (cfg *schema.Config, in, dir string) {
	t.Helper()
	dir = t.TempDir()
	var buf bytes.Buffer
	if err := sample.Hospital(&buf, n, 3); err != nil {
		t.Fatal(err)
	}
	in = filepath.Join(dir, "in.csv")
	if err := os.WriteFile(in, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile("../testdata/hospital-tests.yaml")
	if err != nil {
		t.Fatal(err)
	}
	hier, _ := filepath.Abs("../testdata/hierarchies")
	text := testfiles.ReplaceAll(t, string(raw), "hierarchies/", hier+"/")
	path := filepath.Join(dir, "c.yaml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	if cfg, err = schema.Load(path); err != nil {
		t.Fatal(err)
	}
	return cfg, in, dir
}

// settled waits for the goroutine count to come back to base.
func settled(t *testing.T, base int) {
	t.Helper()
	for range 100 {
		if runtime.NumGoroutine() <= base {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	buf := make([]byte, 1<<16)
	t.Fatalf("%d goroutines left running (base %d):\n%s", runtime.NumGoroutine(), base, buf[:runtime.Stack(buf, true)])
}

// TestStageFailureStopsEveryStage: a bad value deep in pass 2 (after many batches are
// in flight) fails the run, every stage goroutine exits, and nothing is left behind.
func TestStageFailureStopsEveryStage(t *testing.T) {
	cfg, in, dir := hospitalFixture(t, 50000)
	data, _ := os.ReadFile(in)
	lines := strings.SplitAfter(string(data), "\n")
	// Make stay_days (the eighth field) of row 40000 hold a non-integer.
	fields := strings.Split(lines[40000], ",")
	fields[7] = "Zq9SECRET"
	lines[40000] = strings.Join(fields, ",")
	if err := os.WriteFile(in, []byte(strings.Join(lines, "")), 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	base := runtime.NumGoroutine()
	for _, workers := range []int{1, 2, 8} {
		_, err := Release(context.Background(), cfg, job.Options{Input: in, Output: filepath.Join(out, "r.csv"), Report: filepath.Join(out, "r.json"), Workers: workers})
		if !errors.Is(err, fault.ErrBadInput) || !strings.Contains(err.Error(), "row 40000") || strings.Contains(err.Error(), "Zq9SECRET") {
			t.Fatalf("workers=%d: got %v, want bad input naming row 40000 without the value", workers, err)
		}
		settled(t, base)
		if entries, _ := os.ReadDir(out); len(entries) != 0 {
			t.Fatalf("workers=%d: output folder holds %v", workers, entries)
		}
	}
}

// TestCancelledRunWritesNothing: a cancelled context stops the run cleanly.
func TestCancelledRunWritesNothing(t *testing.T) {
	cfg, in, dir := hospitalFixture(t, 20000)
	base := runtime.NumGoroutine()
	for _, after := range []time.Duration{0, time.Millisecond, 5 * time.Millisecond, 20 * time.Millisecond} {
		ctx, cancel := context.WithTimeout(context.Background(), after)
		out := filepath.Join(dir, fmt.Sprintf("r%d.csv", after))
		_, err := Release(ctx, cfg, job.Options{Input: in, Output: out})
		cancel()
		if err == nil {
			// finished before the deadline: then it must be complete and verified
			if _, statErr := os.Stat(out); statErr != nil {
				t.Fatalf("after %v: success without a release: %v", after, statErr)
			}
			continue
		}
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("after %v: %v", after, err)
		}
		if _, statErr := os.Stat(out); !os.IsNotExist(statErr) {
			t.Fatalf("after %v: cancelled run left %s", after, out)
		}
		settled(t, base)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".tmp") {
			t.Fatalf("temporary file %s left behind", e.Name())
		}
	}
}

// TestInputChangedBetweenPasses: pass 2 must read what pass 1 encoded. A file whose
// quasi-identifiers change between the passes is refused and nothing is written.
func TestInputChangedBetweenPasses(t *testing.T) {
	cfg, in, dir := hospitalFixture(t, 3000)
	raw, err := os.ReadFile(in)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(in)
	if err != nil {
		t.Fatal(err)
	}
	src, err := table.OpenCSV(in, cfg.Input.CSV, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	f.Close()
	p, err := newPlan(cfg, in, filepath.Join(dir, "r.csv"), src.Columns())
	if err != nil {
		t.Fatal(err)
	}
	fileHier := make([]*generalize.Hierarchy, len(p.QuasiCfg))
	for i, c := range p.QuasiCfg {
		if c.Hierarchy.File != "" {
			if fileHier[i], err = generalize.LoadHierarchy(c.Hierarchy.File); err != nil {
				t.Fatal(err)
			}
		}
	}
	tab, err := encode(context.Background(), p, src, fileHier, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Between the passes, swap two records' sexes in place (same length, same fd).
	changed := testfiles.Replace(t, string(raw), ",F,", ",M,")
	if err := os.WriteFile(in, []byte(changed), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := src.Rewind(); err != nil {
		t.Fatal(err)
	}
	rc := newRecoder(p, tab, make([]int, len(tab.Columns)), make([]bool, tab.Rows), nil)
	var buf bytes.Buffer
	sink, err := table.NewSink(&buf, "csv", cfg.Output.CSV, p.OutColumns(), nil)
	if err != nil {
		t.Fatal(err)
	}
	// Pass 2 reads no quasi-identifier: the source's check after it catches the change.
	if _, err = writeRelease(context.Background(), src, rc, sink, 2); err == nil {
		err = src.Unchanged()
	}
	if !errors.Is(err, fault.ErrBadInput) || !strings.Contains(err.Error(), "changed") {
		t.Fatalf("got %v, want an error saying the input changed", err)
	}
}

// TestReleaseInputChangedDuringPass2: a quasi-identifier changed in place while pass 2
// runs (same length, same file) fails the release, CSV or Parquet, and publishes
// nothing.
func TestReleaseInputChangedDuringPass2(t *testing.T) {
	for _, format := range []string{"csv", "parquet"} {
		t.Run(format, func(t *testing.T) {
			cfg, in, dir := hospitalFixture(t, 3000)
			if format == "parquet" {
				pq := filepath.Join(dir, "in.parquet")
				if err := gen.Hospital(pq, "", 3000, 3, job.Options{}); err != nil {
					t.Fatal(err)
				}
				in = pq
				raw, err := os.ReadFile(cfg.File)
				if err != nil {
					t.Fatal(err)
				}
				cfg = loadConfigText(t, testfiles.Replace(t, string(raw), "input: {format: csv, csv: {separator: \",\", header: true}}", ""))
			}
			raw, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(dir, "out.csv")
			opt := job.Options{Input: in, Output: out, AtStage: func(stage job.Stage) {
				if stage != job.StageWrite {
					return
				}
				// Flip one byte in the middle of the file, in place.
				f, err := os.OpenFile(in, os.O_WRONLY, 0)
				if err != nil {
					t.Error(err)
					return
				}
				defer f.Close()
				at := int64(len(raw) / 2)
				if format == "csv" {
					at = int64(strings.Index(string(raw), ",F,") + 1)
				}
				if _, err := f.WriteAt([]byte{raw[at] ^ 0x01}, at); err != nil {
					t.Error(err)
				}
			}}
			_, err = Release(context.Background(), cfg, opt)
			if err == nil {
				t.Fatal("a release of an input changed during pass 2 succeeded")
			}
			t.Log(err)
			if !strings.Contains(err.Error(), "changed") && !strings.Contains(err.Error(), "verification") {
				t.Errorf("got %v, want an error saying the input changed or the verification failed", err)
			}
			if _, serr := os.Stat(out); !errors.Is(serr, os.ErrNotExist) {
				t.Errorf("%s exists after the failed release (%v)", out, err)
			}
		})
	}
}

// TestProgressCountsReleasedRecords: the progress counters end at the records read by
// pass 1 and the records released (not the rows pass 2 read, suppressed ones included).
func TestProgressCountsReleasedRecords(t *testing.T) {
	cfg, in, dir := hospitalFixture(t, 3000)
	prog := &job.Progress{}
	rep, err := Release(context.Background(), cfg, job.Options{Input: in, Output: filepath.Join(dir, "out.csv"), Progress: prog})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Suppressed == 0 {
		t.Fatal("the fixture suppresses nothing: the test cannot tell released from read records")
	}
	if got := prog.Read.Load(); got != int64(rep.Input.Rows) {
		t.Errorf("progress read %d, want %d", got, rep.Input.Rows)
	}
	if got := prog.Written.Load(); got != int64(rep.Output.Rows) {
		t.Errorf("progress written %d, want the %d records released (%d suppressed)", got, rep.Output.Rows, rep.Suppressed)
	}
}

// TestCancelAtPublishWritesNothing: a run cancelled once everything is verified, just
// before the release is moved into place, publishes nothing.
func TestCancelAtPublishWritesNothing(t *testing.T) {
	cfg, in, dir := hospitalFixture(t, 1000)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := filepath.Join(dir, "out.csv")
	_, err := Release(ctx, cfg, job.Options{Input: in, Output: out, Report: filepath.Join(dir, "r.json"), AtStage: func(stage job.Stage) {
		if stage == job.StagePublish {
			cancel()
		}
	}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if e.Name() != "in.csv" && e.Name() != "c.yaml" {
			t.Errorf("left in the folder: %s", e.Name())
		}
	}
}

// TestDPCancelAtPublishWritesNothing: a DP run cancelled as it is about to publish
// publishes no output folder and leaves no temporary.
func TestDPCancelAtPublishWritesNothing(t *testing.T) {
	dir := t.TempDir()
	raw, err := os.ReadFile("../testdata/hospital-dp.yaml")
	if err != nil {
		t.Fatal(err)
	}
	hier, _ := filepath.Abs("../testdata/hierarchies")
	path := filepath.Join(dir, "dp.yaml")
	if err := os.WriteFile(path, []byte(testfiles.ReplaceAll(t, string(raw), "hierarchies/", hier+"/")), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := schema.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	in, _ := filepath.Abs("../testdata/hospital.csv")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, err = dprun.Run(ctx, cfg, job.Options{Input: in, Output: filepath.Join(dir, "out"), AtStage: func(stage job.Stage) {
		if stage == job.StagePublish {
			cancel()
		}
	}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if e.Name() != "dp.yaml" {
			t.Errorf("left in the folder: %s", e.Name())
		}
	}
}

// TestReleaseInputChangedUnseen: a CSV input changed in place after pass 1, where the
// release's generalization covers the new value as well as the old, is refused and
// nothing is published: pass 2 writes from what pass 1 held, so the check is the
// verification's reading of the input, byte for byte against pass 1's.
func TestReleaseInputChangedUnseen(t *testing.T) {
	for _, stage := range []job.Stage{job.StageWrite, job.StageVerify} {
		t.Run(stage.String(), func(t *testing.T) {
			dir := t.TempDir()
			hier := filepath.Join(dir, "sex.csv")
			if err := os.WriteFile(hier, []byte("M;*\nF;*\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			var b strings.Builder
			b.WriteString("sex,ward\n")
			for i := range 40 {
				b.WriteString([]string{"M", "F"}[i%2] + ",w" + strconv.Itoa(i%3) + "\n")
			}
			in := filepath.Join(dir, "in.csv")
			if err := os.WriteFile(in, []byte(b.String()), 0o600); err != nil {
				t.Fatal(err)
			}
			// k = every record, nothing suppressed: sex is released as "*".
			cfg := loadConfigText(t, `input: {format: csv}
columns:
  sex: {role: quasi, hierarchy: {file: `+hier+`}}
  ward: {role: insensitive}
privacy: {k: 40, suppression: 0}
`)
			out := filepath.Join(dir, "out.csv")
			opt := job.Options{Input: in, Output: out, AtStage: func(s job.Stage) {
				if s != stage {
					return
				}
				f, err := os.OpenFile(in, os.O_WRONLY, 0)
				if err != nil {
					t.Error(err)
					return
				}
				defer f.Close()
				// The first two records swap their sexes: the same values, as many of each.
				for at, v := range map[int64]string{int64(len("sex,ward\n")): "F", int64(len("sex,ward\nM,w0\n")): "M"} {
					if _, err := f.WriteAt([]byte(v), at); err != nil {
						t.Error(err)
					}
				}
			}}
			_, err := Release(context.Background(), cfg, opt)
			if !errors.Is(err, fault.ErrBadInput) || !strings.Contains(err.Error(), "changed") {
				t.Errorf("got %v, want bad input saying the input changed", err)
			}
			if _, serr := os.Stat(out); !errors.Is(serr, os.ErrNotExist) {
				t.Errorf("%s exists after the failed release (%v)", out, err)
			}
		})
	}
}

// TestReportLatticeAddsUp: under a model that is not monotone with suppression, the
// report's nodes evaluated in full, for the monotone part only, tagged and bounded add
// up to the lattice, and some were checked for the monotone part only.
func TestReportLatticeAddsUp(t *testing.T) {
	cfg, in, dir := hospitalWith(t, 3000, "privacy:\n  k: 5\n  suppression: 0.05\n  l-diversity: {column: diagnosis, variant: entropy, l: 2}")
	rep, err := Release(context.Background(), cfg, job.Options{Input: in, Output: filepath.Join(dir, "r.csv")})
	if err != nil {
		t.Fatal(err)
	}
	l := rep.Lattice
	if l.Evaluated+l.MonotoneOnly+l.Tagged+l.Bounded != l.Size || l.MonotoneOnly == 0 {
		t.Errorf("lattice of %d nodes: %d evaluated, %d monotone part only, %d tagged, %d bounded", l.Size, l.Evaluated, l.MonotoneOnly, l.Tagged, l.Bounded)
	}
}
