package diversity

import "math"

// PersonsHold reports whether a class of persons persons (a class of 1:M microdata,
// where a person may have several records) satisfies l-diversity counted in persons:
// every sensitive value is held by at most persons/l of the class's persons, holders
// giving, per value, how many distinct persons of the class have a record in the class
// holding it (zero counts are ignored). A value's share of a class is the share of the
// class's persons who hold it, so one person's many records cannot make a class look
// diverse: five persons who all hold one value, one of whom also holds four others,
// hold five distinct values in records but are not 2-diverse.
//
// This is the l-diversity of (k,l)-diversity for 1:M microdata (Gong, Luo, Yang, Ni,
// Li, "Anonymizing 1:M microdata with high utility", Knowledge-Based Systems 115,
// 2017), the person-level form of the distinct variant. With one record per person
// it asks each value's frequency to be at most 1/l, which implies at least l distinct
// values. A class without persons or values, an l below 1, or a value held by more
// persons than the class has, fails.
func PersonsHold(l float64, persons int64, holders []int64) bool {
	if persons <= 0 || !(l >= 1) {
		return false
	}
	var most int64
	for _, h := range holders {
		most = max(most, h)
	}
	switch {
	case most == 0 || most > persons:
		return false
	case l > float64(persons):
		return false // most ≥ 1 > persons/l
	case l == math.Trunc(l):
		// most·l ≤ persons ⟺ most ≤ ⌊persons/l⌋ for a whole l: no product to overflow
		return most <= persons/int64(l)
	}
	return float64(most)*l <= float64(persons)
}

// PersonsL is the largest l for which a class of persons persons, whose values are
// held by holders persons each (as PersonsHold takes them), satisfies l-diversity
// counted in persons: persons over the most persons holding one value (0 for a class
// without persons or values).
func PersonsL(persons int64, holders []int64) float64 {
	var most int64
	for _, h := range holders {
		most = max(most, h)
	}
	if persons <= 0 || most == 0 {
		return 0
	}
	return float64(persons) / float64(most)
}
