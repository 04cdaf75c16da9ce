package release

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sanitizer/fault"
	"sanitizer/job"
	"sanitizer/report"
)

// TestReleaseLocalRecoding: Adult released under k = 5 (and with distinct l-diversity
// on occupation) with ARX's local recoding parameters (loss at gs-factor 0.05, 100%
// suppression allowed, 100 iterations, adaption 0.05): the passes place records the
// first node suppressed; every released record is its input record (by rid)
// generalized at one of the nodes the report lists, measured by the test from the
// hierarchy files; every class of the file (whichever pass placed its records) holds
// k records (and l values); check passes the release with its report, asks for the
// report without it, and refuses a copy with one record moved to another pass's node.
func TestReleaseLocalRecoding(t *testing.T) {
	modelsOnly(t)
	const arx = "search: {metric: loss, gs-factor: 0.05, local-recoding: {iterations: 100, gs-factor: 0.05, adaption: 0.05}}"
	for _, c := range []struct {
		name, privacy, search string
		k, l                  int
	}{
		{"k5", "privacy: {k: 5, suppression: 1}", arx, 5, 0},
		{"k5-l3", "privacy: {k: 5, suppression: 1, l-diversity: {column: occupation, variant: distinct, l: 3}}", arx, 5, 3},
		// two passes, no adaption: records are left suppressed
		{"k5-left", "privacy: {k: 5, suppression: 1}", "search: {metric: loss, gs-factor: 0.05, local-recoding: {iterations: 2, gs-factor: 0.3, adaption: 0}}", 5, 0},
		// the prosecutor's profitability decides every pass's classes too
		{"profit", "privacy: {k: 2, suppression: 0.1, profitability: {attack: true, " + profitAmounts + "}}", "search: {metric: publisher-payout, local-recoding: {}}", 2, 0},
		// cell suppression: the passes only raise columns to their top
		{"cells", "privacy: {k: 5, suppression: 1}", "search: {metric: loss, gs-factor: 0.05, local-recoding: {cells: true}}", 5, 0},
		// an average risk enforced: the passes decide it with the classes released
		// before them, and the file's classes meet it (checked below)
		{"cells-risk", "privacy: {k: 2, average-risk: 0.03, suppression: 0.05}", "search: {local-recoding: {cells: true}}", 2, 0},
		{"risk", "privacy: {k: 2, average-risk: 0.03, suppression: 0.05}", "search: {local-recoding: {}}", 2, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg, in, dir, _ := subsetFixture(t, c.privacy+"\n"+c.search, studyFlag)
			out, repPath := filepath.Join(dir, "out.csv"), filepath.Join(dir, "out.json")
			rep, err := Release(context.Background(), cfg, job.Options{Input: in, Output: out, Reports: []string{repPath}})
			if err != nil {
				t.Fatal(err)
			}
			l := rep.LocalRecoding
			if l == nil || len(l.Nodes) < 2 || rep.Suppressed >= l.FirstSuppressed {
				t.Fatalf("local recoding: %+v, %d suppressed", l, rep.Suppressed)
			}
			t.Logf("first node suppressed %d; %d nodes; %d left suppressed; loss %.4f", l.FirstSuppressed, len(l.Nodes), rep.Suppressed, rep.Utility.Loss)
			checkLocalRelease(t, out, in, l, c.k, c.l)
			if strings.Contains(c.search, "cells") {
				checkCellNodes(t, l)
			}
			if strings.Contains(c.privacy, "average-risk") {
				checkAverageRisk(t, out, 0.03)
			}
			if _, err := Check(context.Background(), cfg, job.Options{Input: in, Output: out, Report: repPath}); err != nil {
				t.Fatalf("check: %v", err)
			}
			_, err = Check(context.Background(), cfg, job.Options{Input: in, Output: out})
			if !errors.Is(err, fault.ErrBadInput) || !strings.Contains(err.Error(), "--report") {
				t.Fatalf("check without the report: %v", err)
			}
			if c.name == "k5" { // its passes generalize anew: not a cell suppression's
				cells, _, _, _ := subsetFixture(t, c.privacy+"\nsearch: {metric: loss, gs-factor: 0.05, local-recoding: {cells: true}}", studyFlag)
				_, err := Check(context.Background(), cells, job.Options{Input: in, Output: out, Report: repPath})
				if !errors.Is(err, fault.ErrUnattainable) || !strings.Contains(err.Error(), "search.local-recoding.cells") {
					t.Fatalf("check of a local recoding as a cell suppression: %v", err)
				}
			}
			if c.name == "k5-left" && rep.Suppressed == 0 {
				t.Fatalf("no record left suppressed: the case tests nothing")
			}
			if c.name == "profit" {
				if rep.Verified.Payout == nil || !(rep.Verified.Payout.LeastPayout > 0) {
					t.Fatalf("verified payout %+v", rep.Verified.Payout)
				}
			}
			if c.l == 0 { // Parquet records its nodes in its metadata: check needs no report
				pq := filepath.Join(dir, "out.parquet")
				if _, err := Release(context.Background(), cfg, job.Options{Input: in, Output: pq}); err != nil {
					t.Fatal(err)
				}
				if _, err := Check(context.Background(), cfg, job.Options{Input: in, Output: pq}); err != nil {
					t.Fatalf("check of the Parquet release: %v", err)
				}
			}
			moved := movedRecord(t, out, in, l, dir)
			_, err = Check(context.Background(), cfg, job.Options{Input: in, Output: moved, Report: repPath})
			if !errors.Is(err, fault.ErrUnattainable) {
				t.Fatalf("check of a record moved to another pass's node: %v", err)
			}
		})
	}
}

// localNodes is the report's nodes as level maps.
func localNodes(l *report.LocalRecodingSummary) []map[string]int {
	var out []map[string]int
	for _, n := range l.Nodes {
		m := map[string]int{}
		for _, x := range n.Node {
			m[x.Column] = x.Level
		}
		out = append(out, m)
	}
	return out
}

// checkLocalRelease: every record of the release at out is its input record (by rid)
// generalized at one of l's nodes, every class holds at least k records and, when
// lvals > 0, that many values of occupation, and the records kept are those the
// nodes placed.
func checkLocalRelease(t *testing.T, out, in string, l *report.LocalRecodingSummary, k, lvals int) {
	t.Helper()
	labels := adultLabels(t)
	nodes := localNodes(l)
	header, rows := readTable(t, out, ';')
	inHeader, inRows := readTable(t, in, ';')
	classes, occ := map[string]int{}, map[string]map[string]bool{}
	placed := 0
	for _, n := range l.Nodes {
		placed += n.Records
	}
	if len(rows) != placed {
		t.Fatalf("%d records released, the nodes placed %d", len(rows), placed)
	}
	for _, r := range rows {
		var rid int
		fmt.Sscan(r[slices.Index(header, "rid")], &rid)
		src := inRows[rid]
		at := -1
		for i, node := range nodes {
			ok := true
			for _, q := range adultQI {
				ok = ok && labels[q][src[slices.Index(inHeader, q)]][node[q]] == r[slices.Index(header, q)]
			}
			if ok {
				at = i
				break
			}
		}
		if at < 0 {
			t.Fatalf("record rid %d is its input record at none of the nodes", rid)
		}
		key := ""
		for _, q := range adultQI {
			key += r[slices.Index(header, q)] + "\x1f"
		}
		classes[key]++
		if occ[key] == nil {
			occ[key] = map[string]bool{}
		}
		occ[key][r[slices.Index(header, "occupation")]] = true
	}
	for key, n := range classes {
		if n < k || len(occ[key]) < lvals {
			t.Fatalf("a released class of %d records and %d values of occupation", n, len(occ[key]))
		}
	}
}

// checkCellNodes: every node after the first is the first with some columns raised
// to their top (the hierarchy files' last level), and the report counts the values so
// raised.
func checkCellNodes(t *testing.T, l *report.LocalRecodingSummary) {
	t.Helper()
	if !l.Cells {
		t.Fatal("the report does not say cells")
	}
	labels := adultLabels(t)
	top := map[string]int{}
	for _, q := range adultQI {
		for _, path := range labels[q] {
			top[q] = len(path) - 1
			break
		}
	}
	nodes := localNodes(l)
	var cells int64
	for i, node := range nodes[1:] {
		for _, q := range adultQI {
			switch {
			case node[q] == nodes[0][q]:
			case node[q] == top[q]:
				cells += int64(l.Nodes[i+1].Records)
			default:
				t.Fatalf("pass %d's node %v: %s at level %d, neither the first node's %d nor the top %d", i+2, node, q, node[q], nodes[0][q], top[q])
			}
		}
	}
	if cells == 0 || l.SuppressedCells != cells {
		t.Fatalf("the report counts %d values raised to the top, the nodes %d", l.SuppressedCells, cells)
	}
}

// checkAverageRisk: the classes of the release at out (records sharing all their
// quasi-identifiers) number at most avg of its records.
func checkAverageRisk(t *testing.T, out string, avg float64) {
	t.Helper()
	header, rows := readTable(t, out, ';')
	classes := map[string]bool{}
	for _, r := range rows {
		key := ""
		for _, q := range adultQI {
			key += r[slices.Index(header, q)] + "\x1f"
		}
		classes[key] = true
	}
	if got := float64(len(classes)) / float64(len(rows)); got > avg {
		t.Fatalf("%d classes of %d records: an average risk of %.4f, above %g", len(classes), len(rows), got, avg)
	}
	t.Logf("%d classes of %d records: an average risk of %.4f", len(classes), len(rows), float64(len(classes))/float64(len(rows)))
}

// movedRecord writes a copy of the release at out with the first record the last node
// placed rewritten at the first node's values, and returns its path.
func movedRecord(t *testing.T, out, in string, l *report.LocalRecodingSummary, dir string) string {
	t.Helper()
	labels := adultLabels(t)
	nodes := localNodes(l)
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(raw), "\n"), "\n")
	header := strings.Split(lines[0], ";")
	inHeader, inRows := readTable(t, in, ';')
	last := nodes[len(nodes)-1]
	for i, line := range lines[1:] {
		f := strings.Split(line, ";")
		var rid int
		fmt.Sscan(f[slices.Index(header, "rid")], &rid)
		src := inRows[rid]
		atLast := true
		for _, q := range adultQI {
			atLast = atLast && labels[q][src[slices.Index(inHeader, q)]][last[q]] == f[slices.Index(header, q)]
		}
		if !atLast {
			continue
		}
		for _, q := range adultQI {
			f[slices.Index(header, q)] = labels[q][src[slices.Index(inHeader, q)]][nodes[0][q]]
		}
		lines[i+1] = strings.Join(f, ";")
		path := filepath.Join(dir, "moved.csv")
		if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	t.Fatal("no record of the last node")
	return ""
}
