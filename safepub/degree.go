package safepub

import "fmt"

// Degree is ARX's generalization degree (DataGeneralizationScheme.GeneralizationDegree):
// a generalization fixed without looking at the data, each quasi-identifier at the
// same share of its hierarchy's height.
type Degree int

const (
	Low        Degree = iota + 1 // 0.2 of each hierarchy's height
	LowMedium                    // 0.4
	Medium                       // 0.5
	MediumHigh                   // 0.6
	High                         // 0.8
)

// tenths is each degree's share of the height, in tenths.
var tenths = map[Degree]int{Low: 2, LowMedium: 4, Medium: 5, MediumHigh: 6, High: 8}

// names are the degrees as the configuration writes them.
var names = map[Degree]string{Low: "low", LowMedium: "low-medium", Medium: "medium", MediumHigh: "medium-high", High: "high"}

// String is the degree's name in the configuration.
func (d Degree) String() string {
	if s, ok := names[d]; ok {
		return s
	}
	return fmt.Sprintf("Degree(%d)", int(d))
}

// AllDegrees are the degrees, lowest first.
var AllDegrees = []Degree{Low, LowMedium, Medium, MediumHigh, High}

// Level is the level the degree gives a quasi-identifier whose hierarchy's top level
// is top (its height less one), bounded by lo and hi as ARX bounds it by the minimum
// and maximum generalization: the share of top rounded half up (Math.round).
func (d Degree) Level(top, lo, hi int) int {
	l := (2*tenths[d]*top + 10) / 20 // ⌊share·top + 1/2⌋, in integers
	return min(max(l, lo), hi)
}
