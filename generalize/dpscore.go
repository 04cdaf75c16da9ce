package generalize

import (
	"fmt"
	"math/big"
)

// DPScore is a score function of SafePub's data-dependent search (Bild, Kuhn,
// Prasser, "SafePub: A Truthful Data Anonymization Algorithm With Strong Privacy
// Guarantees", PoPETs 2018, section 5), as ARX's metrics' getScore compute it: a
// node's utility on a dataset (the search's sample), its classes of fewer than k
// records suppressed, divided by the score's sensitivity (a record added to or
// removed from the dataset changes it by at most 1), higher better. ARX computes them
// on its sample with the input's records N in place of the sample's and the records
// outside the sample counted as suppressed; here the sample is the whole dataset, so
// that the search reads nothing else and its privacy is amplified by the sampling
// (the terms of records outside the sample are the same for every node and would not
// change a draw).
type DPScore int

// The scores, with their sensitivities (TestDPScoreSensitivity checks each bound on
// random neighbouring datasets). N is the dataset's records (for the search's sample,
// its records ÷ β: the input's size as the sample estimates it, which keeps ARX's
// balance between suppressing and generalizing), U those of the input outside it (0
// for the search's sample), d the quasi-identifiers, S the records suppressed.
const (
	// ScoreLoss (section 5.1, granularity): −(Σ over released records and columns
	// of the share of the hierarchy's leaves the value covers + d·(S + U)) /
	// (d·max(1, k−1)). A record added to a class of k−1 suppressed ones releases k
	// records: the sum changes by at most d·(k−1); any other, by at most d.
	ScoreLoss DPScore = iota
	// ScorePrecision (section 5.1, intensity): ScoreLoss with the column's level ÷
	// its hierarchy's top level for the share.
	ScorePrecision
	// ScoreDiscernibility (section 5.2): −(Σ |E|² over released classes E +
	// N·(S + U)) / (N·c_k), c_k = 5 for k = 1, k²/(k−1) + 1 otherwise.
	ScoreDiscernibility
	// ScoreEntropy (section 5.3, ARX's score for its non-uniform entropy): −Σ over
	// columns of (Σ over the released values v other than a unique top value of
	// n(v)² + N·(the records whose value is suppressed or the top + U)) / (N·d·c_k),
	// n(v) the released records holding v.
	ScoreEntropy
	// ScoreAECS (section 5.4, group size): the released classes, plus 1 when any
	// record is suppressed or outside the sample; sensitivity 1 as it is.
	ScoreAECS
)

// String names the score by the metric it stands for.
func (s DPScore) String() string {
	switch s {
	case ScoreLoss:
		return "loss"
	case ScorePrecision:
		return "precision"
	case ScoreDiscernibility:
		return "discernibility"
	case ScoreEntropy:
		return "entropy"
	case ScoreAECS:
		return "aecs"
	}
	return fmt.Sprintf("DPScore(%d)", int(s))
}

// nodeClass is a class of the sample at a node: its records and its values' codes at
// the node's levels.
type nodeClass struct {
	count int64
	codes []int32
}

// scoreInput is what a score needs of a node: its classes on the sample, the levels,
// and the counts the score takes from the input.
type scoreInput struct {
	cols    []Column
	levels  []int
	classes []nodeClass
	k       int64
	input   *big.Rat // N: the dataset's records, or as many as it stands for
	outside int64    // U: the input's records outside the dataset
}

// dpScore computes score s of the node in.
func dpScore(s DPScore, in scoreInput) (*big.Rat, error) {
	var released, suppressed int64
	classes := 0
	for _, c := range in.classes {
		if c.count >= in.k {
			released += c.count
			classes++
		} else {
			suppressed += c.count
		}
	}
	d := int64(len(in.cols))
	left := suppressed + in.outside // S + U
	if in.input.Sign() == 0 && s != ScoreAECS {
		return new(big.Rat), nil // no record: every node alike
	}
	switch s {
	case ScoreLoss, ScorePrecision:
		raw := new(big.Rat).SetInt64(d * left)
		for i, c := range in.cols {
			raw.Add(raw, columnShare(s, c.Hierarchy, in.levels[i], i, in))
		}
		return raw.Neg(raw.Quo(raw, big.NewRat(d*max(1, in.k-1), 1))), nil
	case ScoreDiscernibility:
		squares, sq := new(big.Int), new(big.Int)
		for _, c := range in.classes {
			if c.count >= in.k {
				squares.Add(squares, sq.Mul(big.NewInt(c.count), big.NewInt(c.count)))
			}
		}
		raw := new(big.Rat).Mul(in.input, big.NewRat(left, 1))
		raw.Add(raw, new(big.Rat).SetInt(squares))
		den := new(big.Rat).Mul(in.input, ck(in.k))
		return raw.Neg(raw.Quo(raw, den)), nil
	case ScoreEntropy:
		raw := new(big.Rat)
		for i, c := range in.cols {
			raw.Add(raw, entropyTerm(c.Hierarchy, in.levels[i], i, in, left))
		}
		den := new(big.Rat).Mul(in.input, big.NewRat(d, 1))
		den.Mul(den, ck(in.k))
		return raw.Neg(raw.Quo(raw, den)), nil
	case ScoreAECS:
		n := int64(classes)
		if left > 0 {
			n++
		}
		return big.NewRat(n, 1), nil
	}
	return nil, fmt.Errorf("%v: no such score", s)
}

// ck is SafePub's c_k: 5 for k = 1, k²/(k−1) + 1 otherwise.
func ck(k int64) *big.Rat {
	if k <= 1 {
		return big.NewRat(5, 1)
	}
	r := big.NewRat(k*k, k-1)
	return r.Add(r, big.NewRat(1, 1))
}

// columnShare is Σ over the released classes of their records times the share of
// column i's value at level (leaves covered ÷ the hierarchy's leaves for ScoreLoss,
// level ÷ top level for ScorePrecision).
func columnShare(s DPScore, h *Hierarchy, level, i int, in scoreInput) *big.Rat {
	var sum int64
	for _, c := range in.classes {
		if c.count < in.k {
			continue
		}
		if s == ScoreLoss {
			sum += c.count * int64(h.LeafCount(level, c.codes[i]))
		} else {
			sum += c.count
		}
	}
	if s == ScoreLoss {
		return big.NewRat(sum, int64(h.Leaves()))
	}
	top := h.Height() - 1
	if top == 0 {
		return new(big.Rat)
	}
	return big.NewRat(sum*int64(level), int64(top))
}

// entropyTerm is column i's part of ScoreEntropy's sum: Σ n(v)² over the released
// values other than a unique top value, and N times the records whose value is
// suppressed or that top, or outside the sample (left: the records suppressed and
// outside).
func entropyTerm(h *Hierarchy, level, i int, in scoreInput, left int64) *big.Rat {
	top := h.Height() - 1
	rootAt := int32(-1) // the code at level of the unique top value, if it has one
	if h.Size(top) == 1 {
		for code := range h.Size(level) {
			if h.Value(level, int32(code)) == h.TopValue() {
				rootAt = int32(code)
			}
		}
	}
	per := make([]int64, h.Size(level))
	hidden := left
	for _, c := range in.classes {
		switch v := c.codes[i]; {
		case c.count < in.k:
		case v == rootAt:
			hidden += c.count
		default:
			per[v] += c.count
		}
	}
	squares, sq := new(big.Int), new(big.Int)
	for _, n := range per {
		if n > 0 {
			squares.Add(squares, sq.Mul(big.NewInt(n), big.NewInt(n)))
		}
	}
	out := new(big.Rat).Mul(in.input, big.NewRat(hidden, 1))
	return out.Add(out, new(big.Rat).SetInt(squares))
}
