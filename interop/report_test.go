package interop

import (
	"encoding/json"
	"fmt"
	"os"
)

// report is the part of a release's JSON report that the checks compare the Parquet
// file with. It is decoded from the file the release wrote, by its JSON keys, not
// through the main module's Go types.
type report struct {
	Tool         string `json:"tool"`
	Version      string `json:"version"`
	Dataset      string `json:"dataset"`
	ConfigDigest string `json:"config_digest"`
	Input        struct {
		Format string `json:"format"`
		Rows   int    `json:"rows"`
	} `json:"input"`
	Output struct {
		Format string `json:"format"`
		Rows   int    `json:"rows"`
	} `json:"output"`
	Model struct {
		K                int             `json:"k"`
		SuppressionLimit float64         `json:"suppression_limit"`
		MaxSuppressed    int             `json:"max_suppressed_records"`
		LDiversity       json.RawMessage `json:"l_diversity"`
		TCloseness       json.RawMessage `json:"t_closeness"`
	} `json:"model"`
	Algorithm string          `json:"algorithm"`
	Node      json.RawMessage `json:"node"`
	Classes   int             `json:"classes"`
	MinClass  int             `json:"min_class"`
	Metric    struct {
		Name  string  `json:"name"`
		Value float64 `json:"value"`
	} `json:"metric"`
	Suppressed int `json:"suppressed"`
}

// nodeLevel is one entry of the report's node: a quasi-identifier's level.
type nodeLevel struct {
	Column string `json:"column"`
	Level  int    `json:"level"`
	Levels int    `json:"levels"`
}

// readReport decodes the JSON report at path.
func readReport(path string) (*report, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r report
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("report %s: %w", path, err)
	}
	return &r, nil
}

// levels maps every quasi-identifier to its level in the report's node (empty for a
// Mondrian release, which has no node).
func (r *report) levels() (map[string]int, error) {
	out := map[string]int{}
	if len(r.Node) == 0 {
		return out, nil
	}
	var node []nodeLevel
	if err := json.Unmarshal(r.Node, &node); err != nil {
		return nil, fmt.Errorf("report node: %w", err)
	}
	for _, n := range node {
		out[n.Column] = n.Level
	}
	return out, nil
}
