package risk

import "math"

// Prosecutor is the re-identification risk under the prosecutor model (El Emam &
// Dankar 2008, "Protecting privacy using k-anonymity", JAMIA 15(5)): the attacker knows
// that the target's record is in the table and picks one of the records that share the
// target's quasi-identifier values at random, so a record's risk is 1/f, f the size of
// its class. Suppressed records belong to no class and carry no risk.
type Prosecutor struct {
	// Highest is the largest risk of any record: 1 / the smallest class (0 for the
	// empty table).
	Highest float64
	// Average is the mean risk over the records: Σ_records 1/f = classes / records
	// (0 for the empty table).
	Average float64
	// AtHighest is the share of the records whose risk is Highest: those in classes of
	// the smallest size.
	AtHighest float64
}

// ProsecutorRisk measures d under the prosecutor model.
func ProsecutorRisk(d Distribution) Prosecutor {
	if d.records == 0 {
		return Prosecutor{}
	}
	small := d.counts[0]
	return Prosecutor{
		Highest:   1 / float64(small.Size),
		Average:   float64(d.classes) / float64(d.records),
		AtHighest: float64(small.Size*small.Classes) / float64(d.records),
	}
}

// ClassRisk is the prosecutor risk of a record in a class of size records: 1/size.
func ClassRisk(size int64) float64 { return 1 / float64(size) }

// AtRisk reports whether a record in a class of size records has a prosecutor risk
// above threshold. Risk and threshold are compared as 1/size > threshold, so that a
// threshold written as a fraction (0.2) and the risk of its class (1/5) are equal, not
// above.
func AtRisk(size int64, threshold float64) bool { return ClassRisk(size) > threshold }

// RecordsAtRisk is the share of the records whose prosecutor risk is above threshold
// (ARX's "records at risk"); 0 for the empty table.
func RecordsAtRisk(d Distribution, threshold float64) float64 {
	if d.records == 0 {
		return 0
	}
	var n int64
	for _, c := range d.counts {
		if !AtRisk(c.Size, threshold) {
			break // sizes ascend, risks descend
		}
		n += c.Size * c.Classes
	}
	return float64(n) / float64(d.records)
}

// Band is a range of record risk, (Above, UpTo], and the share of records in it.
type Band struct {
	Above, UpTo float64
	Records     float64 // share of the table's records whose risk lies in the band
}

// RiskBands is the distribution of the records' prosecutor risk over the bands
// (0, b₀], (b₀, b₁], …, (bₙ₋₁, 1] given by the ascending bounds (each in (0, 1); a bound
// of 1 or more ends the list), for a chart of how many records carry which risk. The
// shares sum to 1 (0 for the empty table).
func RiskBands(d Distribution, bounds []float64) []Band {
	bands := make([]Band, 0, len(bounds)+1)
	lo := 0.0
	for _, b := range bounds {
		if b <= lo || b >= 1 {
			break
		}
		bands = append(bands, Band{Above: lo, UpTo: b})
		lo = b
	}
	bands = append(bands, Band{Above: lo, UpTo: 1})
	if d.records == 0 {
		return bands
	}
	i := len(bands) - 1 // sizes ascend, so risks descend: bands from the top
	for _, c := range d.counts {
		r := ClassRisk(c.Size)
		for i > 0 && r <= bands[i].Above {
			i--
		}
		bands[i].Records += float64(c.Size*c.Classes) / float64(d.records)
	}
	return bands
}

// DefaultBands are the bounds of the risk bands a report charts: 0.1%, 1%, 5%, 10%,
// 20%, 33% and 50%, the thresholds regulators' guidance and ARX's charts use.
var DefaultBands = []float64{0.001, 0.01, 0.05, 0.1, 0.2, 1.0 / 3, 0.5}

// SmallestClassWithin is the smallest class size whose records' prosecutor risk is at
// most highest (in (0, 1]): the k that a bound on the highest risk amounts to (0.2
// gives 5, 0.3 gives 4); math.MaxInt64 for a bound too small for any class.
func SmallestClassWithin(highest float64) int64 {
	if !(highest > 0) || 1/highest >= math.MaxInt64 {
		return math.MaxInt64
	}
	s := int64(math.Ceil(1 / highest))
	for s > 1 && !AtRisk(s-1, highest) {
		s--
	}
	for AtRisk(s, highest) {
		s++
	}
	return s
}
