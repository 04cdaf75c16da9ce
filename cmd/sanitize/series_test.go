package main

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sanitizer/internal/testfiles"
)

// The command line of a release series (docs/series.md): the exit status of every
// refusal with nothing changed, kill -9 at every stage of a night, and a night with
// nothing new. The nights are generated admissions tables (sanitize gen --table
// admissions) released with testdata/admissions.yaml.

// seriesQuasi are testdata/admissions.yaml's quasi-identifiers.
var seriesQuasi = []string{"age", "sex", "zip", "admitted", "stay_days", "ward"}

// seriesData is a series' nights as tables (header first): night 1 holds a generated
// table and a group of records that share one input record's quasi-identifiers (so
// that they are published in one class); every later night erases that group (a
// removal of more than k) and adds groups of new records (fresh patient ids, another
// seed's other values) that share quasi-identifiers with a night-1 record.
type seriesData struct {
	header []string
	nights [][][]string // nights[n-1] is night n's table
	group  [][]string   // night 1's group
	fresh  [][]string   // another seed's records with fresh patient ids, ungrouped
	ids    []string     // every patient id and name of every table: never in a message
}

// genAdmissions is the admissions table sanitize gen writes with seed (header first).
func genAdmissions(t *testing.T, seed string, rows int) [][]string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "gen"+seed+".csv")
	if code, _, stderr := runCLI(t, "gen", "--table", "admissions", "--rows", fmt.Sprint(rows), "--seed", seed, "--out", p); code != 0 {
		t.Fatalf("gen --seed %s: exit %d\n%s", seed, code, stderr)
	}
	return readCSV(t, p, ',')
}

// seriesTables generates the nights (2000 records on night 1; night 2 and 3 each add
// 24 records, 1.2%).
func seriesTables(t *testing.T) *seriesData {
	t.Helper()
	base, other := genAdmissions(t, "11", 2000), genAdmissions(t, "12", 400)
	d := &seriesData{header: base[0]}
	col := func(name string) int { return slices.Index(d.header, name) }
	pool := other[1:]
	for i, r := range pool {
		r[col("patient_id")] = fmt.Sprintf("Q%07d", i)
	}
	next := 0
	group := func(like []string) [][]string { // six records with like's quasi-identifiers
		var g [][]string
		seen := map[string]bool{}
		for len(g) < 6 {
			r := slices.Clone(pool[next])
			next++
			if len(g) < 3 && seen[r[col("diagnosis")]] {
				continue // three distinct diagnoses first: the group meets l = 3 on its own
			}
			seen[r[col("diagnosis")]] = true
			for _, q := range seriesQuasi {
				r[col(q)] = like[col(q)]
			}
			g = append(g, r)
		}
		return g
	}
	recs := base[1:]
	d.group = group(recs[10])
	night1 := slices.Concat(recs, d.group)
	night2 := slices.Concat(recs, group(recs[100]), group(recs[200]), group(recs[300]), group(recs[400]))
	night3 := slices.Concat(night2, group(recs[500]), group(recs[600]), group(recs[700]), group(recs[800]))
	d.fresh = pool[next : next+40]
	for _, n := range [][][]string{night1, night3, d.fresh} {
		for _, r := range n {
			d.ids = append(d.ids, r[col("patient_id")], r[col("name")])
		}
	}
	for _, n := range [][][]string{night1, night2, night3} {
		d.nights = append(d.nights, slices.Concat([][]string{d.header}, n))
	}
	return d
}

// seriesFiles is a folder of one series: the state, its key and lock, the nights'
// releases and reports. Inputs and configurations lie in another folder (in).
type seriesFiles struct {
	dir, in string
	data    *seriesData
}

// state is the path of the series' state file.
func (f *seriesFiles) state() string { return filepath.Join(f.dir, "st.json") }

// out is the path of night's release.
func (f *seriesFiles) out(night int) string {
	return filepath.Join(f.dir, fmt.Sprintf("r%d.csv", night))
}

// report is the path of night's JSON report.
func (f *seriesFiles) report(night int) string {
	return filepath.Join(f.dir, fmt.Sprintf("r%d.json", night))
}

// input writes rows as the named input and returns its path.
func (f *seriesFiles) input(t *testing.T, name string, rows [][]string) string {
	t.Helper()
	p := filepath.Join(f.in, name)
	writeFile(t, p, csvText(rows, ','))
	return p
}

// nightInput is night n's table written as an input.
func (f *seriesFiles) nightInput(t *testing.T, n int) string {
	t.Helper()
	return f.input(t, fmt.Sprintf("night%d.csv", n), f.data.nights[n-1])
}

// seriesConfig is testdata/admissions.yaml with its hierarchy paths made absolute and
// edit applied to its text (nil: none).
func seriesConfig(t *testing.T, edit func(cfg string) string) string {
	t.Helper()
	td := repoTestdata(t)
	cfg := testfiles.ReplaceAll(t, string(readFile(t, filepath.Join(td, "admissions.yaml"))), "file: hierarchies/", "file: "+filepath.Join(td, "hierarchies")+"/")
	if edit != nil {
		cfg = edit(cfg)
	}
	return cfg
}

// config writes the configuration cfg under name and returns its path.
func (f *seriesFiles) config(t *testing.T, name, cfg string) string {
	t.Helper()
	p := filepath.Join(f.in, name)
	writeFile(t, p, cfg)
	return p
}

// nightArgs is the command line of a series night from in to out.
func (f *seriesFiles) nightArgs(cfg, in, out string, more ...string) []string {
	return append([]string{"release", "-c", cfg, "--in", in, "--out", out, "--series", f.state()}, more...)
}

// newSeries is a series whose first night (data's night 1) is published.
func newSeries(t *testing.T, data *seriesData) *seriesFiles {
	t.Helper()
	f := &seriesFiles{dir: t.TempDir(), in: t.TempDir(), data: data}
	cfg := f.config(t, "cfg.yaml", seriesConfig(t, nil))
	if code, _, stderr := runCLI(t, f.nightArgs(cfg, f.nightInput(t, 1), f.out(1))...); code != 0 {
		t.Fatalf("night 1: exit %d\n%s", code, stderr)
	}
	return f
}

// copySeries is a copy of f's series folder (the state, its key, the releases) in a
// new folder, with new inputs.
func (f *seriesFiles) copySeries(t *testing.T) *seriesFiles {
	t.Helper()
	c := &seriesFiles{dir: t.TempDir(), in: t.TempDir(), data: f.data}
	for _, name := range testfiles.Names(t, f.dir) {
		st, err := os.Lstat(filepath.Join(f.dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(c.dir, name), readFile(t, filepath.Join(f.dir, name)), st.Mode().Perm()); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

// snapshot is every file of dir by name, with its bytes.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, name := range testfiles.Names(t, dir) {
		out[name] = string(readFile(t, filepath.Join(dir, name)))
	}
	return out
}

// sameSnapshot fails the test when dir no longer holds exactly the files of before,
// with their bytes.
func sameSnapshot(t *testing.T, dir string, before map[string]string, what string) {
	t.Helper()
	after := snapshot(t, dir)
	if maps.Equal(before, after) {
		return
	}
	for name := range after {
		if _, ok := before[name]; !ok {
			t.Errorf("%s: %s appeared", what, name)
		}
	}
	for name, b := range before {
		if a, ok := after[name]; !ok {
			t.Errorf("%s: %s is gone", what, name)
		} else if a != b {
			t.Errorf("%s: %s changed", what, name)
		}
	}
}

// seriesState is what the tests read of a state file.
type seriesState struct {
	Series  string `json:"series"`
	Night   int    `json:"night"`
	Waiting []struct {
		Records int `json:"records"`
	} `json:"waiting"`
	History []struct {
		Night    int    `json:"night"`
		Released int    `json:"released"`
		Deferred int    `json:"deferred"`
		Removed  int    `json:"removed"`
		Node     []int  `json:"node"`
		Output   string `json:"output"`
		Digest   string `json:"digest"`
	} `json:"history"`
	Pending *struct {
		Output string `json:"output"`
		Digest string `json:"digest"`
	} `json:"pending"`
}

// readState reads the state at path.
func readState(t *testing.T, path string) seriesState {
	t.Helper()
	var s seriesState
	if err := json.Unmarshal(readFile(t, path), &s); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return s
}

// checkHistory fails the test unless the state at f's path is night n, not pending,
// with a history of nights 1..n whose last release is out and has the digest
// recorded.
func (f *seriesFiles) checkHistory(t *testing.T, n int) seriesState {
	t.Helper()
	s := readState(t, f.state())
	if s.Night != n || s.Pending != nil {
		t.Errorf("the state is night %d, pending %v; want night %d, nothing pending", s.Night, s.Pending, n)
	}
	if len(s.History) != n {
		t.Fatalf("the state's history holds %d nights, want %d", len(s.History), n)
	}
	for i, h := range s.History {
		if h.Night != i+1 {
			t.Errorf("history[%d] is night %d: the history has a gap", i, h.Night)
		}
		if _, err := os.Stat(h.Output); i == n-1 && (err != nil || sha256Of(t, h.Output) != h.Digest) {
			t.Errorf("night %d's release %s is missing or is not the release its history records (%v)", h.Night, h.Output, err)
		}
	}
	return s
}

// noDataIn fails the test when msg holds a patient id or name of the series' tables.
func (d *seriesData) noDataIn(t *testing.T, msg string) {
	t.Helper()
	for _, v := range d.ids {
		if strings.Contains(msg, v) {
			t.Errorf("the message holds the data value %q:\n%s", v, msg)
			return
		}
	}
}

// seriesRefusal is a night-2 run of a series that must fail and change nothing.
type seriesRefusal struct {
	name string
	// setup edits the copy's folder and returns the run's command line.
	setup refusalSetup
	code  int
	want  []string // substrings of stderr
}

// night2 is the command line of night 2 from in, with a report, under
// testdata/admissions.yaml edited by cfgEdit (nil: as it is).
func (f *seriesFiles) night2(t *testing.T, cfgEdit func(string) string, in string) []string {
	t.Helper()
	cfg := f.config(t, "cfg.yaml", seriesConfig(t, cfgEdit))
	return f.nightArgs(cfg, in, f.out(2), "--report", f.report(2))
}

// erasedInput is night 1's table without two records of its group: its class loses two
// of its records.
func (f *seriesFiles) erasedInput(t *testing.T) string {
	t.Helper()
	d := f.data
	rows := slices.DeleteFunc(slices.Clone(d.nights[0]), func(r []string) bool {
		return slices.Equal(r, d.group[0]) || slices.Equal(r, d.group[1])
	})
	if len(rows) != len(d.nights[0])-2 {
		t.Fatalf("erased %d records, want 2", len(d.nights[0])-len(rows))
	}
	return f.input(t, "erased.csv", rows)
}

// withSeries adds the series section to a configuration.
func withSeries(section string) func(string) string {
	return func(cfg string) string { return cfg + "series: " + section + "\n" }
}

// refusalSetup makes a refused night's folder and command line.
type refusalSetup = func(t *testing.T, f *seriesFiles) []string

// nightConfigEdit is night 2 under the configuration that edit makes.
func nightConfigEdit(edit func(t *testing.T, cfg string) string) refusalSetup {
	return func(t *testing.T, f *seriesFiles) []string {
		return f.night2(t, func(cfg string) string { return edit(t, cfg) }, f.nightInput(t, 2))
	}
}

// replacedConfig is night 2 under the configuration with old replaced by new.
func replacedConfig(old, new string) refusalSetup {
	return nightConfigEdit(func(t *testing.T, cfg string) string { return testfiles.Replace(t, cfg, old, new) })
}

// editedState is night 2 after edit has rewritten the state file.
func editedState(edit func(t *testing.T, state string) string) refusalSetup {
	return func(t *testing.T, f *seriesFiles) []string {
		writeFile(t, f.state(), edit(t, string(readFile(t, f.state()))))
		return f.night2(t, nil, f.nightInput(t, 2))
	}
}

// seriesRefusals are the refused nights 2: each with its exit status and what its
// message names.
func seriesRefusals() []seriesRefusal {
	return []seriesRefusal{
		{"hierarchy", replacedConfig("hierarchy: {intervals: [5, 10, 20]}", "hierarchy: {intervals: [5, 10, 40]}"), 2, []string{"columns.age.hierarchy", "--series-restart"}},
		{"k", replacedConfig("k: 5", "k: 6"), 2, []string{"privacy models", "--series-restart"}},
		{"quasi turned insensitive", nightConfigEdit(func(t *testing.T, cfg string) string {
			ward := "ward:       {role: quasi, hierarchy: {file: " + filepath.Join(repoTestdata(t), "hierarchies", "ward.csv") + "}}"
			return testfiles.Replace(t, cfg, ward, "ward:       {role: insensitive}")
		}), 2, []string{"quasi-identifiers", "--series-restart"}},
		{"duplicate key", editedState(func(t *testing.T, s string) string {
			return testfiles.Replace(t, s, `"night":1,`, `"night":1,"night":1,`)
		}), 2, []string{"series state", "st.json", "night"}},
		{"truncated", editedState(func(t *testing.T, s string) string { return s[:len(s)/2] }), 2, []string{"series state", "st.json"}},
		{"key deleted", func(t *testing.T, f *seriesFiles) []string {
			if err := os.Remove(f.state() + ".key"); err != nil {
				t.Fatal(err)
			}
			return f.night2(t, nil, f.nightInput(t, 2))
		}, 2, []string{"series.key-file", "st.json.key"}},
		{"another key", func(t *testing.T, f *seriesFiles) []string {
			if err := os.WriteFile(f.state()+".key", []byte(strings.Repeat("k", 32)), 0o600); err != nil {
				t.Fatal(err)
			}
			return f.night2(t, nil, f.nightInput(t, 2))
		}, 2, []string{"series.key-file", "st.json.key", "--series-restart"}},
		{"removals", func(t *testing.T, f *seriesFiles) []string { return f.night2(t, nil, f.erasedInput(t)) }, 3, []string{"series.removals", "1 classes lost"}},
		{"max-deferred", func(t *testing.T, f *seriesFiles) []string {
			return f.night2(t, withSeries("{max-deferred: 0}"), f.input(t, "fresh.csv", slices.Concat(f.data.nights[0], f.data.fresh)))
		}, 3, []string{"series.max-deferred"}},
		{"profitability", replacedConfig("privacy:\n  k: 5\n", "privacy:\n  k: 5\n  profitability: {attack: true}\n"), 2, []string{"privacy.profitability.attack"}},
		{"mondrian", replacedConfig("search: {algorithm: optimal, metric: loss}", "search: {algorithm: mondrian, metric: loss}"), 2, []string{"search.algorithm", "mondrian"}},
		{"parquet", func(t *testing.T, f *seriesFiles) []string {
			cfg := f.config(t, "cfg.yaml", seriesConfig(t, func(cfg string) string {
				return testfiles.Replace(t, cfg, "output: {format: csv}", "output: {format: parquet}")
			}))
			return f.nightArgs(cfg, f.nightInput(t, 2), filepath.Join(f.dir, "r2.parquet"))
		}, 2, []string{"output.format", "parquet"}},
	}
}

// TestSeriesRefusals: every night that a series refuses exits with its documented
// status and a message naming what changed (never a data value), and changes nothing:
// the state, its key, the previous release, no new output, no stray temporary.
func TestSeriesRefusals(t *testing.T) {
	data := seriesTables(t)
	base := newSeries(t, data)
	for _, c := range seriesRefusals() {
		t.Run(c.name, func(t *testing.T) {
			f := base.copySeries(t)
			args := c.setup(t, f)
			before := snapshot(t, f.dir)
			code, _, stderr := runCLI(t, args...)
			if code != c.code {
				t.Fatalf("exit %d, want %d\n%s", code, c.code, stderr)
			}
			for _, w := range c.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("the message does not name %q:\n%s", w, stderr)
				}
			}
			data.noDataIn(t, stderr)
			sameSnapshot(t, f.dir, before, "a refused night")
		})
	}
	t.Run("restart", func(t *testing.T) { seriesRestart(t, base) })
	t.Run("removals allowed", func(t *testing.T) {
		f := base.copySeries(t)
		args := f.night2(t, withSeries("{removals: allow}"), f.erasedInput(t))
		if code, _, stderr := runCLI(t, args...); code != 0 {
			t.Fatalf("series.removals: allow: exit %d\n%s", code, stderr)
		}
		f.checkHistory(t, 2)
	})
}

// seriesRestart: a changed hierarchy with --series-restart starts a new series: night
// 1 again, another series id.
func seriesRestart(t *testing.T, base *seriesFiles) {
	f := base.copySeries(t)
	old := readState(t, f.state())
	cfg := f.config(t, "cfg.yaml", seriesConfig(t, func(cfg string) string {
		return testfiles.Replace(t, cfg, "hierarchy: {intervals: [5, 10, 20]}", "hierarchy: {intervals: [5, 10, 40]}")
	}))
	if code, _, stderr := runCLI(t, f.nightArgs(cfg, f.nightInput(t, 2), f.out(2), "--series-restart")...); code != 0 {
		t.Fatalf("--series-restart: exit %d\n%s", code, stderr)
	}
	s := f.checkHistory(t, 1)
	if s.Series == old.Series || len(s.Series) != 32 {
		t.Errorf("the restarted series' id is %q, the old one's %q", s.Series, old.Series)
	}
	if s.History[0].Output != f.out(2) {
		t.Errorf("the restarted series' night 1 is %s, want %s", s.History[0].Output, f.out(2))
	}
}

// TestSeriesLocked: a second night while the first holds the series' lock is exit 1
// naming the state, and changes nothing; the first, killed, leaves the state intact,
// and the night then runs.
func TestSeriesLocked(t *testing.T) {
	if testing.Short() {
		t.Skip("runs child processes")
	}
	data := seriesTables(t)
	f := newSeries(t, data)
	cfg := f.config(t, "cfg.yaml", seriesConfig(t, nil))
	args := f.nightArgs(cfg, f.nightInput(t, 2), f.out(2))
	before := snapshot(t, f.dir)
	first := startAt(t, "search", args...)
	code, _, stderr := runCLI(t, args...)
	if code != 1 || !strings.Contains(stderr, f.state()) || !strings.Contains(stderr, "in use by another run") {
		t.Errorf("a second run beside a live one: exit %d, want 1 naming the state\n%s", code, stderr)
	}
	data.noDataIn(t, stderr)
	sameSnapshot(t, f.dir, before, "a night beside a live one")
	_ = first.Process.Kill()
	_ = first.Wait()
	sameSnapshot(t, f.dir, before, "a night killed at its search")
	if code, _, stderr := runCLI(t, args...); code != 0 {
		t.Fatalf("the night after the kill: exit %d\n%s", code, stderr)
	}
	f.checkHistory(t, 2)
}

// committedStages are the stages a night reaches after its commit point.
var committedStages = []string{"series-committed", "report-removed", "release-published"}

// TestSeriesKill kills night 2 with SIGKILL at each stage. Before the commit point the
// state is night 1's, byte for byte, and night 2's output does not exist; night 2
// then runs again. From the commit point on the state is night 2's, and the next
// night, before its search, has put night 2's release in place with the digest the
// history records. Either way night 3 then succeeds, the history holds nights 1..3,
// no temporary is left, and the last releases pass sanitize check.
func TestSeriesKill(t *testing.T) {
	if testing.Short() {
		t.Skip("runs child processes")
	}
	data := seriesTables(t)
	base := newSeries(t, data)
	stages := []string{"read", "search", "series", "write", "verify", "publish", "series-committed", "report-removed", "release-published"}
	for _, stage := range stages {
		t.Run(stage, func(t *testing.T) {
			f := base.copySeries(t)
			cfg := f.config(t, "cfg.yaml", seriesConfig(t, nil))
			var more func(n int) []string // --report and --force past the release's publication
			if stage == "report-removed" || stage == "release-published" {
				more = func(n int) []string { return []string{"--report", f.report(n), "--force"} }
			} else {
				more = func(int) []string { return nil }
			}
			in2, in3 := f.nightInput(t, 2), f.nightInput(t, 3)
			night2 := f.nightArgs(cfg, in2, f.out(2), more(2)...)
			night3 := f.nightArgs(cfg, in3, f.out(3), more(3)...)
			state1 := readFile(t, f.state())
			killAt(t, stage, night2...)
			if slices.Contains(committedStages, stage) {
				afterCommit(t, f, night3)
			} else {
				if got := readFile(t, f.state()); string(got) != string(state1) {
					t.Errorf("killed at %s, before the commit point: the state changed", stage)
				}
				if _, err := os.Lstat(f.out(2)); err == nil {
					t.Errorf("killed at %s, before the commit point: night 2's output exists", stage)
				}
				if code, _, stderr := runCLI(t, night2...); code != 0 {
					t.Fatalf("night 2 again: exit %d\n%s", code, stderr)
				}
				f.checkHistory(t, 2)
			}
			if code, _, stderr := runCLI(t, night3...); code != 0 {
				t.Fatalf("night 3: exit %d\n%s", code, stderr)
			}
			f.checkHistory(t, 3)
			keep := []string{"st.json", "st.json.key", "st.json.lock", "r1.csv", "r2.csv", "r3.csv"}
			if more(2) != nil {
				keep = append(keep, "r3.json")
			}
			if extra := slices.DeleteFunc(temporaries(t, f.dir, keep...), func(n string) bool {
				// The report of a night killed after its commit is not recovered (only the
				// release is, docs/series.md step 2): its temporary waits for a run that
				// writes that report's path.
				return more(2) != nil && (n == "r2.json" || strings.HasPrefix(n, ".r2.json.sanitize-"))
			}); len(extra) > 0 {
				t.Errorf("killed at %s, then nights 2 and 3: the folder still holds %q", stage, extra)
			}
			for n, in := range map[int]string{2: in2, 3: in3} {
				if code, _, stderr := runCLI(t, "check", "-c", cfg, "--in", in, "--release", f.out(n)); code != 0 {
					t.Errorf("check of night %d's release: exit %d\n%s", n, code, stderr)
				}
			}
		})
	}
}

// afterCommit checks a night killed after its commit point: the state is night 2,
// with its publication pending or done; the next night, when it reaches its search,
// has put night 2's release at its output with the digest the history records.
func afterCommit(t *testing.T, f *seriesFiles, night3 []string) {
	t.Helper()
	s := readState(t, f.state())
	if s.Night != 2 || len(s.History) != 2 {
		t.Fatalf("killed after the commit point: the state is night %d with %d nights of history, want 2", s.Night, len(s.History))
	}
	if p := s.Pending; p != nil && (p.Output != f.out(2) || p.Digest != s.History[1].Digest) {
		t.Errorf("the pending publication %+v is not night 2's release %s (%s)", *p, f.out(2), s.History[1].Digest)
	}
	next := startAt(t, "search", night3...)
	if _, err := os.Stat(f.out(2)); err != nil {
		t.Fatalf("night 3 at its search: night 2's release is not in place: %v", err)
	}
	if got := sha256Of(t, f.out(2)); got != s.History[1].Digest {
		t.Errorf("night 2's release has digest %s, its history records %s", got, s.History[1].Digest)
	}
	if got := readState(t, f.state()); got.Pending != nil || got.Night != 2 {
		t.Errorf("night 3 at its search: the state is night %d, pending %v", got.Night, got.Pending)
	}
	_ = next.Process.Kill()
	_ = next.Wait()
}

// TestSeriesNothingNew: a night whose input is the last night's again publishes the
// same rows (as multisets), defers nothing and has nothing waiting.
func TestSeriesNothingNew(t *testing.T) {
	data := seriesTables(t)
	f := newSeries(t, data)
	cfg := f.config(t, "cfg.yaml", seriesConfig(t, nil))
	if code, _, stderr := runCLI(t, f.nightArgs(cfg, f.nightInput(t, 1), f.out(2))...); code != 0 {
		t.Fatalf("night 2 on night 1's input: exit %d\n%s", code, stderr)
	}
	s := f.checkHistory(t, 2)
	if h := s.History[1]; h.Deferred != 0 || len(s.Waiting) != 0 || h.Released != s.History[0].Released {
		t.Errorf("night 2 on night 1's input: released %d (night 1 %d), deferred %d, %d classes waiting", h.Released, s.History[0].Released, h.Deferred, len(s.Waiting))
	}
	count := func(path string) map[string]int {
		m := map[string]int{}
		for _, r := range readCSV(t, path, ',') {
			m[strings.Join(r, "\x00")]++
		}
		return m
	}
	if a, b := count(f.out(1)), count(f.out(2)); !maps.Equal(a, b) {
		t.Errorf("night 2 on night 1's input published other rows: %d distinct rows, night 1 %d", len(b), len(a))
	}
}

// TestSeriesDefers: a night of 1.5% new records (another seed's, with fresh patient
// ids) on a night-1 release that used nearly all of its suppression limit defers the
// new records that cannot meet k and the models in their classes: exit 0, the history
// counts them and their classes wait; the records suppressed and deferred together
// exceed the suppression limit, which bounds the search's suppression only.
func TestSeriesDefers(t *testing.T) {
	night1, other := genAdmissions(t, "1", 3000), genAdmissions(t, "2", 46)
	for i, r := range other[1:] {
		r[0] = fmt.Sprintf("Q%07d", i)
	}
	f := &seriesFiles{dir: t.TempDir(), in: t.TempDir()}
	cfg := f.config(t, "cfg.yaml", seriesConfig(t, nil))
	if code, _, stderr := runCLI(t, f.nightArgs(cfg, f.input(t, "night1.csv", night1), f.out(1))...); code != 0 {
		t.Fatalf("night 1: exit %d\n%s", code, stderr)
	}
	in := f.input(t, "night2.csv", slices.Concat(night1, other[1:]))
	if code, _, stderr := runCLI(t, f.nightArgs(cfg, in, f.out(2))...); code != 0 {
		t.Fatalf("a night with %d new records: exit %d\n%s", len(other)-1, code, stderr)
	}
	s := f.checkHistory(t, 2)
	h := s.History[1]
	if h.Deferred == 0 || len(s.Waiting) == 0 {
		t.Errorf("night 2 deferred %d records, %d classes wait", h.Deferred, len(s.Waiting))
	}
	if limit := (len(night1) + len(other) - 2) * 5 / 100; len(night1)+len(other)-2-h.Released <= limit {
		t.Errorf("night 2 left out %d records, within the suppression limit %d: the case no longer tests deferral past it", len(night1)+len(other)-2-h.Released, limit)
	}
	if got := len(readCSV(t, f.out(2), ',')) - 1; got != h.Released {
		t.Errorf("night 2's release holds %d rows, its history records %d", got, h.Released)
	}
}

// TestSeriesRetryAfterCommit: a night killed once its state is committed and run
// again to the same output keeps the committed release (the next run puts it in
// place before it looks at the output), and the series goes on.
func TestSeriesRetryAfterCommit(t *testing.T) {
	data := seriesTables(t)
	f := newSeries(t, data)
	cfg := f.config(t, "cfg.yaml", seriesConfig(t, nil))
	night2 := f.nightArgs(cfg, f.nightInput(t, 2), f.out(2))
	killAt(t, "series-committed", night2...)
	runCLI(t, night2...) // the output exists now: refused without --force
	s := readState(t, f.state())
	if _, err := os.Stat(f.out(2)); err != nil || sha256Of(t, f.out(2)) != s.History[1].Digest {
		t.Errorf("committed release lost at %s (%v)", f.out(2), err)
	}
	if code, _, stderr := runCLI(t, f.nightArgs(cfg, f.nightInput(t, 3), f.out(3))...); code != 0 {
		t.Fatalf("night 3: exit %d\n%s", code, stderr)
	}
}

// TestSeriesCheck: check --series re-checks the last night of a series that deferred
// records (exit 0), refuses another night's release (exit 2), and finds the night
// breaking the series' rules when the state says a class held one entry fewer the
// night before (one record added, fewer than k: exit 3).
func TestSeriesCheck(t *testing.T) {
	night1, other := genAdmissions(t, "1", 3000), genAdmissions(t, "2", 46)
	for i, r := range other[1:] {
		r[0] = fmt.Sprintf("Q%07d", i)
	}
	f := &seriesFiles{dir: t.TempDir(), in: t.TempDir()}
	cfg := f.config(t, "cfg.yaml", seriesConfig(t, nil))
	in1 := f.input(t, "night1.csv", night1)
	if code, _, stderr := runCLI(t, f.nightArgs(cfg, in1, f.out(1))...); code != 0 {
		t.Fatalf("night 1: exit %d\n%s", code, stderr)
	}
	in2 := f.input(t, "night2.csv", slices.Concat(night1, other[1:]))
	if code, _, stderr := runCLI(t, f.nightArgs(cfg, in2, f.out(2))...); code != 0 {
		t.Fatalf("night 2: exit %d\n%s", code, stderr)
	}
	if h := f.checkHistory(t, 2).History[1]; h.Deferred == 0 {
		t.Fatal("night 2 deferred nothing: the check of a night with deferred records is not tested")
	}
	check := func(state, release string) (int, string) {
		code, _, stderr := runCLI(t, "check", "-c", cfg, "--in", in2, "--release", release, "--series", state)
		return code, stderr
	}
	if code, stderr := check(f.state(), f.out(2)); code != 0 {
		t.Fatalf("check --series of the last night: exit %d\n%s", code, stderr)
	}
	if code, stderr := check(f.state(), f.out(1)); code == 0 {
		t.Errorf("check --series of night 1's release against night 2's state: exit 0\n%s", stderr)
	}
	// The state's previous night loses one entry of its first class, whose class
	// tonight still holds it: tonight then seems to add one record.
	var raw map[string]any
	data, err := os.ReadFile(f.state())
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		t.Fatal(err)
	}
	prev := raw["previous"].(map[string]any)["classes"].([]any)[0].(map[string]any)
	for key, width := range map[string]int{"entries": 16, "cohorts": 4} {
		b, err := base64.StdEncoding.DecodeString(prev[key].(string))
		if err != nil || len(b) < 2*width {
			t.Fatalf("the state's previous class: %s of %d bytes (%v)", key, len(b), err)
		}
		prev[key] = base64.StdEncoding.EncodeToString(b[width:])
	}
	edited, err := json.Marshal(raw)
	if err != nil {
		t.Fatal(err)
	}
	forged := filepath.Join(t.TempDir(), "forged.json")
	key, err := os.ReadFile(f.state() + ".key")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(forged, edited, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(forged+".key", key, 0o600); err != nil {
		t.Fatal(err)
	}
	code, stderr := check(forged, f.out(2))
	if code != 3 || !strings.Contains(stderr, "adds 1 records") {
		t.Errorf("check --series with a state whose previous class lacks an entry: exit %d, want 3 naming the additions\n%s", code, stderr)
	}
}

// TestSeriesDeferredThenPublished: deferral does not enter the search's objective (the
// night keeps the last node, whatever it defers), and the records it defers are
// published on the night their class's new records meet k and the models: two new
// records of one class wait on night 2, and with three more on night 3 the five are
// published together.
func TestSeriesDeferredThenPublished(t *testing.T) {
	base, other := genAdmissions(t, "11", 2000), genAdmissions(t, "12", 200)
	header, recs := base[0], base[1:]
	col := func(name string) int { return slices.Index(header, name) }
	like := recs[10]
	var fresh [][]string
	seen := map[string]bool{}
	for i, r := range other[1:] {
		if len(fresh) == 5 {
			break
		}
		if seen[r[col("diagnosis")]] {
			continue // five distinct diagnoses: the five meet l = 3 on their own, the first two cannot
		}
		seen[r[col("diagnosis")]] = true
		r = slices.Clone(r)
		r[col("patient_id")] = fmt.Sprintf("Q%07d", i)
		for _, q := range seriesQuasi {
			r[col(q)] = like[col(q)]
		}
		fresh = append(fresh, r)
	}
	if len(fresh) < 5 {
		t.Fatal("the generated table has fewer than five diagnoses")
	}
	f := &seriesFiles{dir: t.TempDir(), in: t.TempDir()}
	cfg := f.config(t, "cfg.yaml", seriesConfig(t, nil))
	nights := [][][]string{recs, slices.Concat(recs, fresh[:2]), slices.Concat(recs, fresh)}
	for n, rows := range nights {
		in := f.input(t, fmt.Sprintf("night%d.csv", n+1), slices.Concat([][]string{header}, rows))
		if code, _, stderr := runCLI(t, f.nightArgs(cfg, in, f.out(n+1))...); code != 0 {
			t.Fatalf("night %d: exit %d\n%s", n+1, code, stderr)
		}
	}
	h := f.checkHistory(t, 3).History
	if h[1].Deferred != 2 || h[1].Released != h[0].Released {
		t.Errorf("night 2 deferred %d and released %d (night 1 %d): want the two new records deferred", h[1].Deferred, h[1].Released, h[0].Released)
	}
	if h[2].Deferred != 0 || h[2].Released != h[0].Released+5 {
		t.Errorf("night 3 deferred %d and released %d (night 1 %d): want the five new records published", h[2].Deferred, h[2].Released, h[0].Released)
	}
	for n := range h {
		if !slices.Equal(h[n].Node, h[0].Node) {
			t.Errorf("night %d's node %v, night 1's %v: deferral moved the node", n+1, h[n].Node, h[0].Node)
		}
	}
}

// TestSeriesCoarser: a night whose node is more general than the last (the custodian
// raised search.min-levels, which is no change of the models) rolls the last night's
// classes up to the new node: none of its records leaves, the night passes the
// verifier's check, and check --series re-checks it.
func TestSeriesCoarser(t *testing.T) {
	base := genAdmissions(t, "11", 2000)
	f := &seriesFiles{dir: t.TempDir(), in: t.TempDir()}
	in := f.input(t, "night.csv", base)
	cfg1 := f.config(t, "cfg1.yaml", seriesConfig(t, nil))
	if code, _, stderr := runCLI(t, f.nightArgs(cfg1, in, f.out(1))...); code != 0 {
		t.Fatalf("night 1: exit %d\n%s", code, stderr)
	}
	// The top levels of the built hierarchies (testdata/admissions.yaml): the first
	// quasi-identifier below its top is raised one level.
	tops := map[string]int{"age": 4, "zip": 5, "admitted": 4, "stay_days": 4}
	node1 := f.checkHistory(t, 1).History[0].Node
	q, level := -1, 0
	for i, name := range seriesQuasi {
		if top, ok := tops[name]; ok && node1[i] < top && q < 0 {
			q, level = i, node1[i]+1
		}
	}
	if q < 0 {
		t.Fatalf("night 1's node %v is at the top of every built hierarchy", node1)
	}
	cfg2 := f.config(t, "cfg2.yaml", seriesConfig(t, func(cfg string) string {
		return testfiles.Replace(t, cfg, "search: {algorithm: optimal, metric: loss}", fmt.Sprintf("search: {algorithm: optimal, metric: loss, min-levels: {%s: %d}}", seriesQuasi[q], level))
	}))
	if code, _, stderr := runCLI(t, f.nightArgs(cfg2, in, f.out(2))...); code != 0 {
		t.Fatalf("night 2 at a coarser node: exit %d\n%s", code, stderr)
	}
	h := f.checkHistory(t, 2).History
	// Records the finer node suppressed may be published now: as new records, in
	// cohorts of k, or deferred; none of night 1's leaves.
	if h[1].Node[q] != level || h[1].Removed != 0 || h[1].Released < h[0].Released {
		t.Errorf("night 2: node %v, removed %d, released %d (night 1 %v, %d): want %s at %d and night 1's records kept", h[1].Node, h[1].Removed, h[1].Released, h[0].Node, h[0].Released, seriesQuasi[q], level)
	}
	if code, _, stderr := runCLI(t, "check", "-c", cfg2, "--in", in, "--release", f.out(2), "--series", f.state()); code != 0 {
		t.Errorf("check --series of the coarser night: exit %d\n%s", code, stderr)
	}
}

// TestSeriesInParts: a series whose nights are read in parts and released as folders
// of parts publishes, night by night, the rows the same nights read as one file
// publish, in the same order; a night killed after its commit has its folder put in
// place by the next night; check --series re-checks a folder.
func TestSeriesInParts(t *testing.T) {
	if testing.Short() {
		t.Skip("runs child processes")
	}
	data := seriesTables(t)
	persons := func(cfg string) string {
		return testfiles.Replace(t, cfg, "privacy:\n  k: 5\n", "privacy:\n  k: 5\n  privacy-unit: {column: patient_id}\n")
	}
	for _, edit := range []func(string) string{nil, persons} {
		name := "rows"
		if edit != nil {
			name = "persons"
		}
		t.Run(name, func(t *testing.T) { seriesInParts(t, data, edit) })
	}
}

// seriesInParts is TestSeriesInParts under testdata/admissions.yaml edited by edit.
func seriesInParts(t *testing.T, data *seriesData, edit func(string) string) {
	whole, parts := &seriesFiles{dir: t.TempDir(), in: t.TempDir(), data: data}, &seriesFiles{dir: t.TempDir(), in: t.TempDir(), data: data}
	// One key for both series: the persons' digests, and so the order in which a
	// class's new records are taken, are the same.
	key := filepath.Join(whole.in, "series.key")
	if err := os.WriteFile(key, []byte(strings.Repeat("k", 32)), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := whole.config(t, "cfg.yaml", seriesConfig(t, func(cfg string) string {
		if edit != nil {
			cfg = edit(cfg)
		}
		return cfg + "series: {key-file: " + key + "}\n"
	}))
	folder := func(n int) string {
		return filepath.Join(parts.dir, fmt.Sprintf("r%d", n)) + string(filepath.Separator)
	}
	partsInput := func(n int) string { // night n's table in two parts, the header in each
		dir := filepath.Join(parts.in, fmt.Sprintf("night%d", n))
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		rows := data.nights[n-1]
		half := len(rows) / 2
		writeFile(t, filepath.Join(dir, "part-0.csv"), csvText(rows[:half], ','))
		writeFile(t, filepath.Join(dir, "part-1.csv"), csvText(slices.Concat(rows[:1], rows[half:]), ','))
		return dir + string(filepath.Separator)
	}
	partRows := func(dir string) [][]string { // the folder's parts' rows, header once
		var out [][]string
		for i, name := range testfiles.Names(t, dir) {
			rows := readCSV(t, filepath.Join(dir, name), ',')
			if i > 0 {
				rows = rows[1:]
			}
			out = append(out, rows...)
		}
		return out
	}
	for n := 1; n <= 3; n++ {
		if code, _, stderr := runCLI(t, whole.nightArgs(cfg, whole.nightInput(t, n), whole.out(n))...); code != 0 {
			t.Fatalf("night %d as one file: exit %d\n%s", n, code, stderr)
		}
		args := parts.nightArgs(cfg, partsInput(n), folder(n))
		if n == 2 { // killed once committed: night 3 puts the folder in place
			killAt(t, "series-committed", args...)
			if s := readState(t, parts.state()); s.Night != 2 || s.Pending == nil || !strings.HasPrefix(s.Pending.Digest, "sha256-folder:") {
				t.Fatalf("killed after night 2's commit: the state is night %d, pending %+v", s.Night, s.Pending)
			}
			continue
		}
		if code, _, stderr := runCLI(t, args...); code != 0 {
			t.Fatalf("night %d in parts: exit %d\n%s", n, code, stderr)
		}
	}
	for n := 1; n <= 3; n++ {
		got, want := partRows(folder(n)), readCSV(t, whole.out(n), ',')
		if !slices.EqualFunc(got, want, slices.Equal[[]string]) {
			t.Errorf("night %d: the folder's parts hold %d rows, the file %d, or other rows", n, len(got)-1, len(want)-1)
		}
	}
	s := readState(t, parts.state())
	if s.Night != 3 || s.Pending != nil || len(s.History) != 3 {
		t.Fatalf("after night 3 the state is night %d, pending %v, %d nights of history", s.Night, s.Pending, len(s.History))
	}
	if got := s.History[2].Output; got != strings.TrimSuffix(folder(3), string(filepath.Separator)) {
		t.Errorf("night 3's history names %s", got)
	}
	if code, _, stderr := runCLI(t, "check", "-c", cfg, "--in", filepath.Join(parts.in, "night3")+"/", "--release", folder(3), "--series", parts.state()); code != 0 {
		t.Errorf("check --series of night 3's folder: exit %d\n%s", code, stderr)
	}
	if code, _, _ := runCLI(t, "check", "-c", cfg, "--in", filepath.Join(parts.in, "night2")+"/", "--release", folder(2), "--series", parts.state()); code != 2 {
		t.Errorf("check --series of night 2's folder against night 3's state: exit %d, want 2", code)
	}
}
