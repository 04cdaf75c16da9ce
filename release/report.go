package release

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"sanitizer/generalize"
	"sanitizer/internal/build"
	"sanitizer/publish"
	"sanitizer/report"
	"sanitizer/schema"
)

// writeReportTemp writes the release's report to a new temporary file beside path,
// held until the caller publishes or discards it: a self-contained HTML page when
// path ends in .html or .htm, indented JSON otherwise.
func writeReportTemp(path string, rep *report.Report) (*publish.File, error) {
	f, err := publish.Prepare(path, nil, func(f *os.File) error {
		if isHTML(path) {
			return report.WriteReleaseHTML(f, rep)
		}
		return report.WriteJSON(f, rep)
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return f, nil
}

// isHTML reports whether a report's path asks for HTML.
func isHTML(path string) bool {
	ext := strings.ToLower(filepath.Ext(path))
	return ext == ".html" || ext == ".htm"
}

// ReleaseMetadata is the key-value metadata of a Parquet or Arrow release of rows
// input records (those of the research subset, when there is one) whose
// quasi-identifiers are quasi (in the table's order), at the search's result res,
// written at now: the release parameters (sanitize.* keys), never a data value. Every
// part of a release in parts carries the same; a release on another engine (the beam
// module) writes the same as the CLI's.
func ReleaseMetadata(cfg *schema.Config, quasi []generalize.Column, rows int, res *generalize.Result, now time.Time) map[string]string {
	nodeJSON := []byte(`"mondrian"`)
	if res.Levels != nil {
		node := make([]report.NodeLevel, len(quasi))
		for i, c := range quasi {
			node[i] = report.NodeLevel{Column: c.Name, Level: res.Levels[i], Levels: c.Hierarchy.Height()}
		}
		nodeJSON, _ = json.Marshal(node)
	}
	meta := recordedParams(cfg, rows, maxSuppressed(cfg.Privacy.Suppression, rows), res.Suppressed)
	meta["sanitize.tool"] = "sanitize"
	meta["sanitize.version"] = build.Version
	meta["sanitize.dataset"] = cfg.Dataset
	meta["sanitize.config_digest"] = "sha256:" + cfg.Digest
	meta["sanitize.node"] = string(nodeJSON)
	meta["sanitize.metric"] = res.Metric
	meta["sanitize.metric_value"] = strconv.FormatFloat(res.Value, 'g', -1, 64)
	meta["sanitize.created_utc"] = now.UTC().Format(time.RFC3339)
	return meta
}

// recordedParams is the part of a release's metadata that check compares with what
// it measures: the models' parameters (column names and parameters only) and the
// suppression of a release of cfg over an input of rows records.
func recordedParams(cfg *schema.Config, rows, maxSupp, suppressed int) map[string]string {
	meta := map[string]string{
		"sanitize.k":                 strconv.Itoa(cfg.Privacy.K),
		"sanitize.suppression_limit": strconv.FormatFloat(cfg.Privacy.Suppression, 'g', -1, 64),
		"sanitize.max_suppressed":    strconv.Itoa(maxSupp),
		"sanitize.suppressed":        strconv.Itoa(suppressed),
		"sanitize.input_rows":        strconv.Itoa(rows),
		"sanitize.algorithm":         algorithm(cfg),
	}
	var ls []report.LDiversityIn
	for _, l := range cfg.Privacy.LDiversity {
		ls = append(ls, report.LDiversityIn{Column: l.Column, Variant: l.Variant, L: l.L, C: l.C, Estimator: l.Estimator})
	}
	if ls != nil {
		b, _ := json.Marshal(ls)
		meta["sanitize.l_diversity"] = string(b)
	}
	var ts []report.TClosenessIn
	for _, t := range cfg.Privacy.TCloseness {
		ts = append(ts, report.TClosenessIn{Column: t.Column, T: t.T, Distance: t.Distance})
	}
	if ts != nil {
		b, _ := json.Marshal(ts)
		meta["sanitize.t_closeness"] = string(b)
	}
	pr := cfg.Privacy
	if pr.Subset != nil {
		meta["sanitize.subset"] = pr.Subset.Column
	}
	if d := pr.DeltaPresence; d != nil {
		b, _ := json.Marshal(report.DeltaPresenceIn{Min: d.Min, Max: d.Max})
		meta["sanitize.delta_presence"] = string(b)
	}
	if k := pr.KMap; k != nil {
		b, _ := json.Marshal(report.KMapIn{K: k.K, Estimator: k.Estimator, Significance: k.Significance})
		meta["sanitize.k_map"] = string(b)
	}
	return meta
}

// algorithm is the configured search algorithm, "optimal" by default.
func algorithm(cfg *schema.Config) string {
	if cfg.Search.Algorithm == "" {
		return "optimal"
	}
	return cfg.Search.Algorithm
}
