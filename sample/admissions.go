package sample

import (
	"io"
	"math"
	"math/rand/v2"
)

// AdmissionsColumns lists the header of the admissions table, in order: the hospital
// table's columns, where age is the patient's age at their first admission.
var AdmissionsColumns = []string{"patient_id", "name", "age", "sex", "zip", "admitted", "diagnosis", "stay_days", "ward", "insurance"}

// The admissions table's distribution of admissions per patient: a zeta (power-law)
// distribution truncated at MaxAdmissions, P(n) ∝ n^-AdmissionsExponent for n = 1 to
// MaxAdmissions. With the exponent 1.5, 46.1% of patients have one admission, 62.4%
// one or two, and the mean is 3.50 admissions per patient (10,000,000 rows ≈ 2.86
// million patients).
const (
	MaxAdmissions       = 20
	AdmissionsExponent  = 1.5
	admissionsStream    = pcgStream + 2 // the admissions' PCG streams: apart from the hospital table's
	admissionGapMeanDay = 60            // mean of the exponential gap between a discharge and the next admission
)

// admissionsCum are the cumulative weights of 1 to MaxAdmissions admissions.
var admissionsCum = func() []float64 {
	w := make([]float64, MaxAdmissions)
	for i := range w {
		w[i] = math.Pow(float64(i+1), -AdmissionsExponent)
	}
	return cumulative(w)
}()

// AdmissionShare is the probability that a patient of the admissions table has n
// admissions (0 outside 1 to MaxAdmissions).
func AdmissionShare(n int) float64 {
	if n < 1 || n > MaxAdmissions {
		return 0
	}
	total := admissionsCum[MaxAdmissions-1]
	return math.Pow(float64(n), -AdmissionsExponent) / total
}

// Admissions writes n synthetic admission records as CSV to w, several per patient:
// the header (AdmissionsColumns) first, separator ',', LF line ends. The same seed
// gives the same bytes, and memory use does not depend on n.
func Admissions(w io.Writer, n int, seed uint64) error {
	return writeCSV(w, AdmissionsColumns, n, NewAdmissionsGen(seed).Next)
}

// AdmissionsGen generates the records of the admissions table one at a time, patient
// by patient: each patient's admissions are consecutive records in date order. The
// patient's id, name, age (at the first admission), sex, zip and insurance are the same
// in all of them; the admission date increases strictly, and the diagnosis, length of
// stay and ward are each admission's. Its state is bounded: one patient's admissions.
// An AdmissionsGen is not safe for concurrent use.
type AdmissionsGen struct {
	h         *HospitalGen // its random streams, tables and patients; its ring is unused
	p         patient
	age       string // at the first admission
	insurance string
	plan      [MaxAdmissions]admission
	n, next   int // the patient's admissions, and the index of the next one to write
}

// admission is one planned admission of a patient.
type admission struct{ day, diag, stay int }

// NewAdmissionsGen returns a generator whose record sequence is determined by seed.
func NewAdmissionsGen(seed uint64) *AdmissionsGen {
	h := &HospitalGen{src: rand.NewPCG(seed, admissionsStream), extra: rand.NewPCG(seed, admissionsStream+1)}
	h.idOffset = h.intn(idSpace)
	return &AdmissionsGen{h: h}
}

// Next fills row with the next record's fields, in the order of AdmissionsColumns, and
// returns it. row is reused when it has room for them, else a new slice is allocated.
func (g *AdmissionsGen) Next(row []string) []string {
	if cap(row) < len(AdmissionsColumns) {
		row = make([]string, len(AdmissionsColumns))
	}
	row = row[:len(AdmissionsColumns)]
	if g.next == g.n {
		g.newPatient()
	}
	a := g.plan[g.next]
	g.next++
	sex := "M"
	if g.p.female {
		sex = "F"
	}
	row[0] = g.p.id
	row[1] = g.p.name
	row[2] = g.age
	row[3] = sex
	row[4] = zips[g.p.zip]
	row[5] = dayInfo[a.day].iso
	row[6] = diagnoses[a.diag].name
	row[7] = smallInts[a.stay]
	row[8] = g.h.ward(a.diag)
	row[9] = g.insurance
	return row
}

// newPatient draws the next patient and plans their admissions.
func (g *AdmissionsGen) newPatient() {
	h := g.h
	g.n, g.next = h.pick(admissionsCum)+1, 0
	g.p, _ = h.newPatient()
	day, diag := g.p.day, -1
	for i := range g.n {
		age, on := ageOn(g.p.birth, day), min(day, len(dayInfo)-1) // fit moves a day past the last
		// A chronic condition brings the patient back with the same diagnosis (40%).
		if diag < 0 || h.u01() >= 0.4 || !allowed(diag, age, g.p.female, on) {
			diag = h.pick(diagCum[ageBand(age)][sexIndex(g.p.female)][dayInfo[on].season])
		}
		g.plan[i] = admission{day: day, diag: diag, stay: h.stay(diag, age)}
		day += g.plan[i].stay + 1 + int(-math.Log(1-h.u01())*admissionGapMeanDay)
	}
	// The day drawn for the patient is one of their admissions, chosen uniformly, so
	// that the admissions lie around the days' distribution rather than after it.
	g.shift(g.p.day - g.plan[h.intn(uint64(g.n))].day)
	g.fit()
	first := ageOn(g.p.birth, g.plan[0].day)
	g.age = smallInts[first]
	g.insurance = h.insurance(first)
}

// shift moves the planned admissions, and the patient's birth with them (so that their
// age at each stays as planned), by days.
func (g *AdmissionsGen) shift(days int) {
	for i := range g.plan[:g.n] {
		g.plan[i].day += days
	}
	g.p.birth += days
}

// fit moves the planned admissions into the table's dates when some lie outside them:
// the whole plan, its gaps kept, to a start drawn uniformly among those that fit; a plan
// longer than the table's span is spread evenly over it, each stay cut to end before
// the next admission.
func (g *AdmissionsGen) fit() {
	plan, last := g.plan[:g.n], len(dayInfo)-1
	if plan[0].day >= 0 && plan[g.n-1].day <= last {
		return
	}
	if span := plan[g.n-1].day - plan[0].day; span <= last {
		g.shift(int(g.h.intn(uint64(last-span+1))) - plan[0].day)
		return
	}
	g.shift(-plan[0].day)
	step := last / max(g.n-1, 1)
	for i := range plan {
		plan[i].day = i * step
		if i+1 < len(plan) {
			plan[i].stay = min(plan[i].stay, step-1)
		}
	}
}

// ageOn is the age on day of a patient born on birth (days relative to the first
// admission day), within 0 to maxAge.
func ageOn(birth, day int) int {
	return min(max(int(float64(day-birth)/365.25), 0), maxAge)
}
