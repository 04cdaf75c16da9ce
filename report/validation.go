package report

import (
	"fmt"
	"io"
	"strings"
)

// Validation is what Validate found: the configuration's shape and, when an input was
// given, the input's.
type Validation struct {
	Release bool // the configuration describes a release (privacy.k is set)
	DP      int  // outputs of the dp section
	Quasi   int  // quasi-identifiers
	// Heights is every quasi-identifier's number of hierarchy levels (nil when a
	// hierarchy is built from the data and no input was given).
	Heights []int
	// Lattice is the number of generalization nodes (the product of Heights; 0 when
	// Heights is nil); LatticeTooLarge says it is past what the search accepts.
	Lattice         int
	LatticeTooLarge bool
	// Input says an input was read and met the configuration; Rows is its number of
	// records when it was read as a release (−1 otherwise).
	Input bool
	Rows  int
}

// Summary is validate's summary: what it checked, with cfgPath the configuration's path.
func (v *Validation) Summary(w io.Writer, cfgPath string) {
	fmt.Fprintf(w, "ok: %s is valid\n", cfgPath)
	if v.Release {
		switch {
		case v.Heights == nil:
			fmt.Fprintf(w, "release: %d quasi-identifiers; lattice size depends on the data (a hierarchy is built from it): give --in\n", v.Quasi)
		default:
			levels := make([]string, len(v.Heights))
			for i, h := range v.Heights {
				levels[i] = fmt.Sprint(h)
			}
			fmt.Fprintf(w, "release: %d quasi-identifiers; lattice %d nodes (levels %s)\n", v.Quasi, v.Lattice, strings.Join(levels, "×"))
		}
	}
	if v.DP > 0 {
		fmt.Fprintf(w, "dp: %d outputs\n", v.DP)
	}
	switch {
	case v.Rows >= 0:
		fmt.Fprintf(w, "input: %d records; its columns, types, hierarchies and domains agree with the configuration\n", v.Rows)
	case v.Input:
		fmt.Fprintln(w, "input: its columns, types and domains agree with the configuration")
	}
}
