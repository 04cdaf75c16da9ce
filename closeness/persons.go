package closeness

import (
	"errors"
	"fmt"
	"math"
)

// In 1:M microdata a person may have several records, and several values of a
// sensitive column. What an attacker who knows that a person is in a class learns of
// a value v is the share of the class's persons who hold it, b(v) = holders(v) /
// persons, against the share of the whole table's persons who hold it, B(v). These
// shares are not a distribution (a person may hold several values: they may sum past
// 1), so t-closeness and β-likeness are read on them value by value:
//
//   - β-likeness in persons: for every value with b(v) > B(v), (b(v) − B(v)) / B(v) is
//     at most β (enhanced: at most min(β, −ln B(v))), Cao & Karras's (2012) bound on
//     the relative gain of a belief, applied to the belief that a person holds v.
//   - t-closeness in persons, equal distance: ½ Σ_v |b(v) − B(v)| is at most t. Each
//     value's share is a yes/no attribute of a person, whose EMD between class and
//     table is |b(v) − B(v)| (Li, Li, Venkatasubramanian 2007); with one record per
//     person the sum is the EMD under the equal distance. The ordered and hierarchical
//     distances move mass between values of one distribution, which shares that are
//     not one do not have: they have no person-level reading.
//
// With one record per person both reduce to the record-level models.

// PersonsReference is the table's share of persons holding each value of a sensitive
// column, against which a class's shares are measured.
type PersonsReference struct {
	b   []float64 // B(v)
	sum float64   // Σ B(v)
}

// NewPersonsReference returns the reference of a table of persons persons of which
// holders[v] hold value v.
func NewPersonsReference(holders []int64, persons int64) (*PersonsReference, error) {
	if persons <= 0 {
		return nil, errors.New("no persons")
	}
	r := &PersonsReference{b: make([]float64, len(holders))}
	for v, h := range holders {
		if h < 0 || h > persons {
			return nil, fmt.Errorf("value %d held by %d of %d persons", v, h, persons)
		}
		r.b[v] = float64(h) / float64(persons)
		r.sum += r.b[v]
	}
	return r, nil
}

// Share is B(v), the share of the table's persons who hold value v.
func (r *PersonsReference) Share(v int) float64 { return r.b[v] }

// Equal is the equal-distance t-closeness distance in persons of a class of persons
// persons whose values vals are held by holders[k] persons each (values not listed are
// held by none): ½ Σ_v |b(v) − B(v)| over every value of the column.
func (r *PersonsReference) Equal(vals, holders []int32, persons int64) float64 {
	d := r.sum // the values the class does not hold: B(v) each
	for k, v := range vals {
		b := float64(holders[k]) / float64(persons)
		d += math.Abs(b-r.b[v]) - r.b[v]
	}
	return max(d, 0) / 2
}

// Likeness reports whether a class of persons persons whose values vals are held by
// holders[k] persons each meets β-likeness in persons (enhanced: the enhanced bound).
func (r *PersonsReference) Likeness(vals, holders []int32, persons int64, beta float64, enhanced bool) bool {
	for k, v := range vals {
		b, q := float64(holders[k])/float64(persons), r.b[v]
		if b <= q {
			continue
		}
		if q == 0 || (b-q)/q > gainLimit(q, beta, enhanced)+likenessSlack {
			return false
		}
	}
	return true
}

// MaxGain is the largest relative gain (b(v) − B(v)) / B(v) of a class's value over
// the table's, in persons (+Inf for a value the table's persons do not hold; 0 when no
// value gains).
func (r *PersonsReference) MaxGain(vals, holders []int32, persons int64) float64 {
	var most float64
	for k, v := range vals {
		b, q := float64(holders[k])/float64(persons), r.b[v]
		switch {
		case b <= q:
		case q == 0:
			return math.Inf(1)
		default:
			most = max(most, (b-q)/q)
		}
	}
	return most
}
