package report

import (
	"fmt"
	"io"
	"sanitizer/dphist"
	"sanitizer/schema"
	"strings"
)

// Manifest describes a DP run's outputs: how each was made private, never a data value.
type Manifest struct {
	Tool         string            `json:"tool"`
	Version      string            `json:"version"`
	Dataset      string            `json:"dataset,omitempty"`
	ConfigDigest string            `json:"config_digest"`
	CreatedUTC   string            `json:"created_utc"`
	Neighbours   schema.Neighbours `json:"neighbours"`
	PrivacyUnit  *ManifestUnit     `json:"privacy_unit,omitempty"`
	Epsilon      float64           `json:"epsilon"` // this run, composed sequentially
	Delta        float64           `json:"delta"`
	Ledger       *ManifestLedger   `json:"ledger,omitempty"`
	Outputs      []ManifestOutput  `json:"outputs"`
}

// ManifestUnit is the privacy unit's contribution bounds.
type ManifestUnit struct {
	Column          string `json:"column"`
	MaxRowsPerUnit  int    `json:"max_rows_per_unit,omitempty"`
	MaxCellsPerUnit int    `json:"max_cells_per_unit,omitempty"`
	Seed            uint64 `json:"seed"`
}

// ManifestLedger is the dataset's account after this run's spend was recorded.
type ManifestLedger struct {
	File         string  `json:"file"`
	EpsilonSpent float64 `json:"epsilon_spent"`
	DeltaSpent   float64 `json:"delta_spent"`
	EpsilonTotal float64 `json:"epsilon_total"`
	DeltaTotal   float64 `json:"delta_total"`
	Recorded     string  `json:"recorded"`
	// History is every spend on the dataset the ledger holds, this run's included,
	// oldest first: the budget spent over time.
	History []LedgerSpend `json:"history,omitempty"`
}

// LedgerSpend is one run's charge to the dataset's budget.
type LedgerSpend struct {
	Time    string   `json:"time"` // RFC 3339, UTC
	Epsilon float64  `json:"epsilon"`
	Delta   float64  `json:"delta"`
	Outputs []string `json:"outputs"`
}

// ManifestOutput is one output: its file, its cells and its mechanism. L0 is the
// number of cells one privacy unit may change and LInf the most it may change one by
// (the sensitivities the library is given); L1 and L2 follow from them.
type ManifestOutput struct {
	Name          string               `json:"name"`
	File          string               `json:"file"`
	Kind          string               `json:"kind"` // histogram | marginals | aggregate | synthetic
	Columns       []string             `json:"columns"`
	Marginals     [][]string           `json:"marginals,omitempty"`
	Cells         int                  `json:"cells"`
	Other         bool                 `json:"other_cell"`
	Mechanism     string               `json:"mechanism"`
	Epsilon       float64              `json:"epsilon"`
	Delta         float64              `json:"delta"`
	Neighbours    schema.Neighbours    `json:"neighbours"`
	L0            int64                `json:"l0,omitempty"`
	LInf          int64                `json:"linf,omitempty"`
	L1            float64              `json:"l1,omitempty"`
	L2            float64              `json:"l2,omitempty"`
	NoiseScale    float64              `json:"noise_scale,omitempty"` // Laplace b or Gaussian σ of every cell
	HalfWidth95   float64              `json:"ci95_half_width,omitempty"`
	Post          []string             `json:"post"`
	Value         string               `json:"value_column,omitempty"` // aggregate
	Bounds        []float64            `json:"bounds,omitempty"`
	Ranks         []float64            `json:"quantile_ranks,omitempty"`
	Stats         []dphist.StatBudget  `json:"stats,omitempty"`
	Contributions *ManifestContributed `json:"contributions,omitempty"`
	Synthetic     *dphist.SynthReport  `json:"synthetic,omitempty"`
}

// ManifestContributed says how the privacy unit's rows were bounded in one output.
type ManifestContributed struct {
	CellsPerUnit int `json:"cells_per_unit,omitempty"`
	RowsPerCell  int `json:"rows_per_unit_and_cell,omitempty"`
	RowsPerUnit  int `json:"rows_per_unit,omitempty"`
}

// halfWidth is an output's 95% half-width as text, per statistic for aggregates.
func halfWidth(o ManifestOutput) string {
	if o.Kind != "aggregate" {
		return fmt.Sprintf("%.3g", o.HalfWidth95)
	}
	var parts []string
	for _, s := range o.Stats {
		if s.HalfWidth95 > 0 {
			parts = append(parts, fmt.Sprintf("%s %.3g", s.Stat, s.HalfWidth95))
		}
	}
	if len(parts) == 0 {
		return "data-dependent"
	}
	return strings.Join(parts, ", ")
}

// Summary is the DP run's short summary: one line per output, the run's spend and the
// dataset's account, and where the manifest is (manifestPath).
func (m *Manifest) Summary(w io.Writer, manifestPath string) {
	for _, o := range m.Outputs {
		if s := o.Synthetic; s != nil {
			fmt.Fprintf(w, "%s: synthetic, %d records, %s ε=%g δ=%g (zCDP ρ %.4g, %d rounds, %d marginals measured, model of %d cells)\n",
				o.File, s.Rows, s.Method, o.Epsilon, o.Delta, s.Rho, s.Rounds, len(s.Measured), s.ModelSize)
			continue
		}
		fmt.Fprintf(w, "%s: %s, %d cells, %s ε=%g δ=%g, 95%% half-width %s\n", o.File, o.Kind, o.Cells, o.Mechanism, o.Epsilon, o.Delta, halfWidth(o))
	}
	fmt.Fprintf(w, "spent ε=%g δ=%g", m.Epsilon, m.Delta)
	if l := m.Ledger; l != nil {
		fmt.Fprintf(w, "; dataset %q has spent ε=%g of %g, δ=%g of %g", m.Dataset, l.EpsilonSpent, l.EpsilonTotal, l.DeltaSpent, l.DeltaTotal)
	}
	fmt.Fprintf(w, "\nmanifest: %s (and %s, for a person to read)\n", manifestPath, strings.TrimSuffix(manifestPath, ".json")+".html")
}
