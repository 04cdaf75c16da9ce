package report

import (
	"fmt"
	"io"

	"sanitizer/schema"
	"sanitizer/verify"
)

// ReleasedColumn is what a column released as it is reveals about one protected
// sensitive column, as the verifier measured it from the written file: the released
// records grouped by the column's value alone, each group checked against the
// sensitive column's requirements as a published class is. Counts only, never a value.
type ReleasedColumn struct {
	Column    string `json:"column"`    // the column released as it is
	Sensitive string `json:"sensitive"` // the protected sensitive column
	Values    int    `json:"values"`    // distinct values of the column in the release
	// FailingValues is how many of them hold records that fail the requirements,
	// Records how many records those hold, and Share Records over the released
	// records: the column gives the sensitive value away when FailingValues > 0.
	FailingValues int     `json:"failing_values"`
	Records       int     `json:"records"`
	Share         float64 `json:"share"`
	// Refused says the configuration makes such a column an error
	// (privacy.released-columns.check: error).
	Refused bool `json:"refused,omitempty"`
}

// Discloses reports whether the column gives the sensitive value away on its own.
func (c ReleasedColumn) Discloses() bool { return c.FailingValues > 0 }

// releasedSummary prints a line per column released as it is that gives a protected
// sensitive value away, and one line saying how many were measured otherwise.
func releasedSummary(w io.Writer, cols []ReleasedColumn) {
	clean := 0
	for _, c := range cols {
		if !c.Discloses() {
			clean++
			continue
		}
		fmt.Fprintf(w, "warning: column %s, released as it is, gives %s away: %d of its %d values hold records that fail %s's requirements (%.3g%% of the released records); give it role quasi or identifier\n",
			c.Column, c.Sensitive, c.FailingValues, c.Values, c.Sensitive, 100*c.Share)
	}
	if clean > 0 && clean == len(cols) {
		fmt.Fprintf(w, "columns released as they are: none gives a protected sensitive value away (%d measured, verified)\n", clean)
	}
}

// releasedChecks are the verifier's rows for the columns released as they are: one per
// column and protected sensitive column.
func releasedChecks(cols []ReleasedColumn) []checkRow {
	var out []checkRow
	for _, c := range cols {
		row := checkRow{
			Model:    fmt.Sprintf("%s, released as it is, against %s", c.Column, c.Sensitive),
			Required: fmt.Sprintf("the records of each value of %s meet %s's requirements, as a group does", c.Column, c.Sensitive),
			Holds:    !c.Discloses(),
		}
		if c.Discloses() {
			row.Measured = fmt.Sprintf("%s of its %s values fail, holding %s of the records: %s gives %s away (give it role quasi or identifier)",
				fmtCount(int64(c.FailingValues)), fmtCount(int64(c.Values)), fmtPct(c.Share), c.Column, c.Sensitive)
		} else {
			row.Measured = fmt.Sprintf("all %s values meet them", fmtCount(int64(c.Values)))
		}
		out = append(out, row)
	}
	return out
}

// ReleasedColumns is the report's account of what the verifier measured of the columns
// released as they are (m.Released), under the configuration's check.
func ReleasedColumns(cfg *schema.Config, m *verify.Measured) []ReleasedColumn {
	var out []ReleasedColumn
	for _, r := range m.Released {
		c := ReleasedColumn{Column: r.Column, Sensitive: r.Sensitive, Values: r.Groups, FailingValues: r.FailingGroups, Records: r.Records,
			Refused: r.Fails() && cfg.Privacy.ReleasedColumns == schema.ReleasedError}
		if m.Rows > 0 {
			c.Share = float64(r.Records) / float64(m.Rows)
		}
		out = append(out, c)
	}
	return out
}
