package report

import (
	"fmt"
	"io"
	"strings"
)

// LocalRecodingSummary is a release placed pass by pass (ARX's iterative local
// recoding, search.local-recoding): its parameters, and every node that placed
// records, in the order of the passes (the first is the optimal search's).
type LocalRecodingSummary struct {
	Iterations int     `json:"iterations"`
	GSFactor   float64 `json:"gs_factor"`
	Adaption   float64 `json:"adaption"`
	// Cells says that the passes after the first only raised some of the first
	// node's quasi-identifiers to their top (cell suppression, search.local-recoding
	// .cells).
	Cells bool `json:"cells,omitempty"`
	// SuppressedCells is the values the passes after the first replaced by their
	// column's top value where the first node has another (with cells or without).
	SuppressedCells int64 `json:"suppressed_cells"`
	// Passes is the passes after the first that were searched (those that placed
	// nothing included); FirstSuppressed the records the first node suppressed.
	Passes          int         `json:"passes"`
	FirstSuppressed int         `json:"first_suppressed"`
	Nodes           []LocalNode `json:"nodes"`
}

// LocalNode is a node of a local recoding and the records it placed.
type LocalNode struct {
	Node    []NodeLevel `json:"node"`
	Records int         `json:"records"`
}

// localSummary prints the local recoding's lines.
func (r *Report) localSummary(w io.Writer) {
	l := r.LocalRecoding
	if l == nil {
		return
	}
	kind := "local recoding"
	if l.Cells {
		kind = "cell suppression"
	}
	fmt.Fprintf(w, "%s: %d nodes placed the records (%d passes after the first, gs-factor %g, adaption %g); the first node suppressed %d, %d are left suppressed; %d values replaced by their column's top\n",
		kind, len(l.Nodes), l.Passes, l.GSFactor, l.Adaption, l.FirstSuppressed, r.Suppressed, l.SuppressedCells)
	for i, n := range l.Nodes {
		fmt.Fprintf(w, "  pass %d: %s: %d records\n", i+1, nodeText(n.Node), n.Records)
	}
}

// nodeText is a node as "age 2, sex 0, …".
func nodeText(node []NodeLevel) string {
	parts := make([]string, len(node))
	for i, n := range node {
		parts[i] = fmt.Sprintf("%s %d", n.Column, n.Level)
	}
	return strings.Join(parts, ", ")
}

// localSentences say what a local recoding did, for the HTML page.
func localSentences(r *Report) []string {
	l := r.LocalRecoding
	if l == nil {
		return nil
	}
	out := []string{fmt.Sprintf("Local recoding (ARX's iterative local recoding): the %s records the first generalization suppressed were generalized again on their own, pass after pass, each pass at the generalization that suits its records; %s records were placed so, and %s are left suppressed. A group of the release is every record that shares its released values, whichever pass placed it, and meets every model above.",
		fmtCount(int64(l.FirstSuppressed)), fmtCount(int64(l.FirstSuppressed-r.Suppressed)), fmtCount(int64(r.Suppressed)))}
	if l.Cells {
		out[0] = fmt.Sprintf("Cell suppression: the %s records the first generalization suppressed were released with some of their values replaced by the column's most general value (usually *) instead, pass after pass, each pass at the columns that suit its records best by the search's metric; %s records were placed so (%s values replaced), and %s are left suppressed. A group of the release is every record that shares its released values, a * being a value like any other, and meets every model above.",
			fmtCount(int64(l.FirstSuppressed)), fmtCount(int64(l.FirstSuppressed-r.Suppressed)), fmtCount(l.SuppressedCells), fmtCount(int64(r.Suppressed)))
	}
	for i, n := range l.Nodes {
		out = append(out, fmt.Sprintf("Pass %d: %s — %s records.", i+1, nodeText(n.Node), fmtCount(int64(n.Records))))
	}
	return out
}
