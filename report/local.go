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
	fmt.Fprintf(w, "local recoding: %d nodes placed the records (%d passes after the first, gs-factor %g, adaption %g); the first node suppressed %d, %d are left suppressed\n",
		len(l.Nodes), l.Passes, l.GSFactor, l.Adaption, l.FirstSuppressed, r.Suppressed)
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
	for i, n := range l.Nodes {
		out = append(out, fmt.Sprintf("Pass %d: %s — %s records.", i+1, nodeText(n.Node), fmtCount(int64(n.Records))))
	}
	return out
}
