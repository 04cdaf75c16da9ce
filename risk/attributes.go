package risk

// Distinction is the share of distinct quasi-identifier combinations among the records
// of a table projected onto some of its quasi-identifiers: classes / records, 1 when
// every record is unique on them (Motwani & Xu 2007, "Efficient algorithms for masking
// and finding quasi-identifiers", their α-distinct quasi-identifiers; ARX's attribute
// risk analysis). 0 for the empty table.
func Distinction(d Distribution) float64 {
	if d.records == 0 {
		return 0
	}
	return float64(d.classes) / float64(d.records)
}

// Separation is the share of the pairs of records that the projected quasi-identifiers
// tell apart (Motwani & Xu 2007, α-separation): 1 − Σ_classes f(f−1) / (n(n−1)), n the
// records; 1 when every record is unique on them, 0 when all share one combination.
// A table of fewer than two records has no pair, and its separation is 1.
func Separation(d Distribution) float64 {
	n := float64(d.records)
	if d.records < 2 {
		return 1
	}
	var same float64
	for _, c := range d.counts {
		f := float64(c.Size)
		same += float64(c.Classes) * f * (f - 1)
	}
	return 1 - same/(n*(n-1))
}
