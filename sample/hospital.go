package sample

import (
	"encoding/csv"
	"errors"
	"io"
	"math"
	"math/bits"
	"math/rand/v2"
	"strconv"
	"time"
)

// HospitalColumns lists the header of the hospital table, in order.
var HospitalColumns = []string{"patient_id", "name", "age", "sex", "zip", "admitted", "diagnosis", "stay_days", "ward", "insurance"}

// Hospital writes n synthetic admission records as CSV to w: the header
// (HospitalColumns) first, separator ',', LF line ends. The same seed gives the same
// bytes, and memory use does not depend on n.
func Hospital(w io.Writer, n int, seed uint64) error {
	return writeCSV(w, HospitalColumns, n, NewHospitalGen(seed).Next)
}

// writeCSV writes header and n records, each filled by next, as CSV to w: separator
// ',', LF line ends, one row buffer for all of them.
func writeCSV(w io.Writer, header []string, n int, next func(row []string) []string) error {
	if n < 0 {
		return errors.New("sample: negative row count")
	}
	cw := csv.NewWriter(w)
	if err := cw.Write(header); err != nil {
		return err
	}
	row := make([]string, len(header))
	for i := 0; i < n; i++ {
		row = next(row)
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// pcgStream is the second PCG parameter of every generator ("hospital" in ASCII).
const pcgStream = 0x686f73706974616c

// Bounds of the generated values.
const (
	maxAge      = 104 // oldest generated age, inclusive
	maxStayDays = 365
	ringSize    = 1024 // recent patients eligible for a readmission
	repeatShare = 0.15 // share of admissions that are readmissions of a recent patient
	idSpace     = 10_000_000
	idStride    = 3_456_789 // coprime with idSpace: ids of new patients never collide before idSpace of them
)

// First and last day of the admission dates, inclusive.
var (
	firstAdmission = time.Date(2019, time.January, 1, 0, 0, 0, 0, time.UTC)
	lastAdmission  = time.Date(2024, time.December, 31, 0, 0, 0, 0, time.UTC)
)

// HospitalGen generates the records of the hospital table one at a time. Its state is
// bounded: it remembers a fixed number of recent patients for readmissions.
// A HospitalGen is not safe for concurrent use.
type HospitalGen struct {
	src      *rand.PCG
	extra    *rand.PCG // ward and insurance: a stream of their own, so the other columns do not depend on them
	idOffset uint64
	newCount uint64 // patients created so far
	ring     [ringSize]patient
	ringLen  int
	ringNext int
}

// patient is what a readmission keeps of an earlier admission.
type patient struct {
	id, name string
	female   bool
	zip      int   // index into zips
	birth    int   // day index of birth relative to firstAdmission (negative)
	day      int   // day index of the latest admission
	diag     int   // index into diagnoses of the latest admission
	ageAtDay int16 // age at day
}

// NewHospitalGen returns a generator whose record sequence is determined by seed.
func NewHospitalGen(seed uint64) *HospitalGen {
	g := &HospitalGen{src: rand.NewPCG(seed, pcgStream), extra: rand.NewPCG(seed, pcgStream+1)}
	g.idOffset = g.intn(idSpace)
	return g
}

// Next fills row with the next record's fields, in the order of HospitalColumns, and
// returns it. row is reused when it has room for them, else a new slice is allocated.
func (g *HospitalGen) Next(row []string) []string {
	if cap(row) < len(HospitalColumns) {
		row = make([]string, len(HospitalColumns))
	}
	row = row[:len(HospitalColumns)]

	p, age, slot := g.readmission()
	repeat := slot >= 0
	if !repeat {
		p, age = g.newPatient()
	}
	diag := -1
	if repeat && g.u01() < 0.4 && allowed(p.diag, age, p.female, p.day) {
		diag = p.diag // a chronic condition brings the patient back
	}
	if diag < 0 {
		diag = g.pick(diagCum[ageBand(age)][sexIndex(p.female)][dayInfo[p.day].season])
	}
	p.diag = diag
	if repeat {
		g.ring[slot] = p
	} else {
		g.remember(p)
	}

	sex := "M"
	if p.female {
		sex = "F"
	}
	row[0] = p.id
	row[1] = p.name
	row[2] = smallInts[age]
	row[3] = sex
	row[4] = zips[p.zip]
	row[5] = dayInfo[p.day].iso
	row[6] = diagnoses[diag].name
	row[7] = smallInts[g.stay(diag, age)]
	row[8] = g.ward(diag)
	row[9] = g.insurance(age)
	return row
}

// ward returns the ward of an admission: one of the wards of its department, the first
// ones busier ("Respiratory 1" … "Respiratory 3").
func (g *HospitalGen) ward(diag int) string {
	hi, _ := bits.Mul64(g.extra.Uint64(), 6)
	n := []int{1, 1, 1, 2, 2, 3}[hi]
	return diagnoses[diag].category + " " + smallInts[n]
}

// insurances are the payers of the insurance column; the shares depend on age.
var insurances = []string{"Medicare", "Medicaid", "Private", "Self-pay"}

// insurance returns the payer of an admission: mostly Medicare from 65 on, mostly
// private insurance before, with a few uninsured.
func (g *HospitalGen) insurance(age int) string {
	u := float64(g.extra.Uint64()>>11) * 0x1p-53
	cum := []float64{0.02, 0.22, 0.92, 1} // under 65
	if age >= 65 {
		cum = []float64{0.85, 0.92, 0.99, 1}
	}
	for i, c := range cum {
		if u < c {
			return insurances[i]
		}
	}
	return insurances[len(insurances)-1]
}

// readmission picks, with probability repeatShare, a recent patient and a later
// admission day for them, and returns the patient, their age on that day and their
// slot in the ring; the slot is -1 when this record is a new patient.
func (g *HospitalGen) readmission() (patient, int, int) {
	if g.ringLen == 0 || g.u01() >= repeatShare {
		return patient{}, 0, -1
	}
	i := int(g.intn(uint64(g.ringLen)))
	p := g.ring[i]
	day := p.day + 1 + int(-math.Log(1-g.u01())*40) // gap: exponential, mean 40 days
	if day >= len(dayInfo) {
		return patient{}, 0, -1
	}
	age := int(float64(day-p.birth) / 365.25)
	if age > maxAge {
		age = maxAge
	}
	if age < int(p.ageAtDay) {
		age = int(p.ageAtDay)
	}
	p.day, p.ageAtDay = day, int16(age)
	return p, age, i
}

// newPatient draws a patient who has not been admitted before.
func (g *HospitalGen) newPatient() (patient, int) {
	id := (g.idOffset + g.newCount*idStride) % idSpace
	g.newCount++
	var b [8]byte
	b[0] = 'P'
	for i, v := 7, id; i >= 1; i, v = i-1, v/10 {
		b[i] = byte('0' + v%10)
	}
	female := g.u01() < 0.52
	first := maleNames
	if female {
		first = femaleNames
	}
	name := first[g.intn(uint64(len(first)))] + " " + lastNames[g.intn(uint64(len(lastNames)))]
	age := g.age()
	day := g.pick(dayCum)
	birth := day - int(float64(age)*365.25) - int(g.intn(365))
	return patient{
		id:       string(b[:]),
		name:     name,
		female:   female,
		zip:      g.pick(zipCum),
		birth:    birth,
		day:      day,
		ageAtDay: int16(age),
	}, age
}

// remember stores a new patient in the ring, replacing the oldest one when it is full.
func (g *HospitalGen) remember(p patient) {
	g.ring[g.ringNext] = p
	g.ringNext = (g.ringNext + 1) % ringSize
	if g.ringLen < ringSize {
		g.ringLen++
	}
}

// age draws an age from a mixture of children (many infants), adults and the elderly.
func (g *HospitalGen) age() int {
	u := g.u01()
	for {
		var a float64
		switch {
		case u < 0.12:
			if g.u01() < 0.35 {
				return 0
			}
			return 1 + int(g.intn(15))
		case u < 0.45:
			a = 40 + 14*g.normal()
		default:
			a = 75 + 9*g.normal()
		}
		if a >= 0 && a < maxAge+1 {
			return int(a)
		}
	}
}

// stay draws the length of stay in days for a diagnosis, longer for the old.
func (g *HospitalGen) stay(diag, age int) int {
	d := &diagnoses[diag]
	f := 1.0
	if age > 60 {
		f += 0.015 * float64(age-60)
	}
	s := int(d.stayMedian * f * math.Exp(d.staySigma*g.normal()))
	return min(max(s, 0), maxStayDays)
}

// u01 returns a uniform float64 in [0, 1). The helpers below use only the PCG's
// defined output, so the byte stream does not depend on math/rand's derived methods.
func (g *HospitalGen) u01() float64 {
	return float64(g.src.Uint64()>>11) * 0x1p-53
}

// intn returns a uniform integer in [0, n).
func (g *HospitalGen) intn(n uint64) uint64 {
	hi, _ := bits.Mul64(g.src.Uint64(), n)
	return hi
}

// normal returns a standard normal deviate (Box–Muller).
func (g *HospitalGen) normal() float64 {
	u1 := 1 - g.u01() // (0, 1]
	u2 := g.u01()
	return math.Sqrt(-2*math.Log(u1)) * math.Cos(2*math.Pi*u2)
}

// pick returns the index i of a draw from the cumulative weights cum.
func (g *HospitalGen) pick(cum []float64) int {
	u := g.u01() * cum[len(cum)-1]
	lo, hi := 0, len(cum)-1
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if cum[m] > u {
			hi = m
		} else {
			lo = m + 1
		}
	}
	return lo
}

// diagnosis is one condition of the diagnosis column with its relative frequency by
// age band, sex and season, and its length-of-stay distribution (log-normal).
type diagnosis struct {
	name, category string
	base           float64
	band           [4]float64 // ages 0–15, 16–45, 46–64, 65+
	sex            [2]float64 // F, M
	season         [3]float64 // winter (Dec–Feb), spring/autumn, summer (Jun–Aug)
	stayMedian     float64    // days
	staySigma      float64
}

var flat = [3]float64{1, 1, 1}

// diagnoses lists every diagnosis generated; category is its parent in
// testdata/hierarchies/diagnosis.csv.
var diagnoses = []diagnosis{
	{"Pneumonia", "Respiratory", 6, [4]float64{1.2, 0.5, 0.9, 2.5}, [2]float64{1, 1.1}, [3]float64{1.8, 1, 0.6}, 5, 0.6},
	{"Influenza", "Respiratory", 3, [4]float64{1.5, 0.7, 0.8, 1.6}, [2]float64{1, 1}, [3]float64{4, 0.6, 0.1}, 3, 0.5},
	{"Asthma", "Respiratory", 3, [4]float64{3, 1, 0.7, 0.5}, [2]float64{1.1, 0.9}, [3]float64{1.2, 1, 0.9}, 2, 0.5},
	{"COPD", "Respiratory", 4, [4]float64{0, 0.1, 1, 2.5}, [2]float64{0.9, 1.1}, [3]float64{1.5, 1, 0.7}, 5, 0.6},
	{"Heart failure", "Cardiovascular", 5, [4]float64{0.02, 0.1, 0.8, 3}, [2]float64{0.9, 1.1}, [3]float64{1.2, 1, 0.9}, 6, 0.6},
	{"Myocardial infarction", "Cardiovascular", 4, [4]float64{0, 0.15, 1.5, 2}, [2]float64{0.6, 1.5}, [3]float64{1.1, 1, 0.95}, 4, 0.5},
	{"Atrial fibrillation", "Cardiovascular", 4, [4]float64{0, 0.1, 0.8, 2.5}, [2]float64{0.9, 1.1}, flat, 3, 0.6},
	{"Stroke", "Cardiovascular", 4, [4]float64{0.01, 0.1, 0.8, 2.5}, [2]float64{1, 1.05}, [3]float64{1.1, 1, 1}, 7, 0.7},
	{"Breast cancer", "Cancer", 2.5, [4]float64{0, 0.5, 2, 1.5}, [2]float64{1, 0.01}, flat, 3, 0.5},
	{"Lung cancer", "Cancer", 2, [4]float64{0, 0.05, 1, 2}, [2]float64{0.8, 1.2}, flat, 6, 0.6},
	{"Hip fracture", "Injury", 3, [4]float64{0.05, 0.1, 0.5, 3}, [2]float64{1.8, 0.7}, [3]float64{1.2, 1, 0.9}, 8, 0.5},
	{"Concussion", "Injury", 2, [4]float64{3, 1.5, 0.6, 0.8}, [2]float64{0.7, 1.4}, [3]float64{1, 1, 1.1}, 1, 0.7},
	{"Appendicitis", "Digestive", 3, [4]float64{2.5, 1.5, 0.5, 0.2}, [2]float64{0.9, 1.1}, flat, 2, 0.5},
	{"Gastroenteritis", "Digestive", 4, [4]float64{2.5, 1, 0.6, 1}, [2]float64{1, 1}, [3]float64{1.3, 1, 1}, 2, 0.6},
	{"Depression", "Mental", 3, [4]float64{0.3, 1.8, 1.2, 0.6}, [2]float64{1.5, 0.7}, [3]float64{1.2, 1, 0.85}, 10, 0.7},
	{"Type 2 diabetes", "Metabolic", 3, [4]float64{0.02, 0.6, 1.5, 1.5}, [2]float64{0.9, 1.1}, flat, 4, 0.6},
	{"Anemia", "Blood", 2, [4]float64{0.8, 1.2, 0.8, 1.3}, [2]float64{1.6, 0.6}, flat, 2, 0.6},
	{"Sepsis", "Infection", 3, [4]float64{0.8, 0.4, 0.9, 2.2}, [2]float64{0.95, 1.05}, [3]float64{1.2, 1, 0.9}, 8, 0.7},
	{"Cellulitis", "Infection", 3, [4]float64{0.5, 1, 1.2, 1.3}, [2]float64{0.9, 1.1}, [3]float64{0.8, 1, 1.3}, 4, 0.5},
	{"Urinary tract infection", "Genitourinary", 4, [4]float64{0.7, 0.8, 0.8, 2}, [2]float64{1.7, 0.5}, [3]float64{1, 1, 1.1}, 3, 0.6},
	{"Kidney stones", "Genitourinary", 2, [4]float64{0.1, 1.5, 1.3, 0.7}, [2]float64{0.6, 1.5}, [3]float64{0.85, 1, 1.2}, 1, 0.6},
	{"Migraine", "Neurological", 1.5, [4]float64{0.5, 2, 1, 0.2}, [2]float64{2.2, 0.6}, flat, 1, 0.5},
	{"Cataract", "Eye", 2, [4]float64{0.02, 0.05, 0.8, 3}, [2]float64{1.1, 0.9}, flat, 0.3, 0.8},
	{"Osteoarthritis", "Musculoskeletal", 3, [4]float64{0, 0.2, 1.5, 2.5}, [2]float64{1.3, 0.8}, flat, 3, 0.4},
	{"Pregnancy complication", "Pregnancy", 5, [4]float64{0, 3, 0, 0}, [2]float64{1, 0}, flat, 2, 0.5},
}

// ageBand maps an age to the index of diagnosis.band.
func ageBand(age int) int {
	switch {
	case age <= 15:
		return 0
	case age <= 45:
		return 1
	case age <= 64:
		return 2
	default:
		return 3
	}
}

func sexIndex(female bool) int {
	if female {
		return 0
	}
	return 1
}

// allowed reports whether diagnosis d can be drawn for a patient of this age and sex on day.
func allowed(d, age int, female bool, day int) bool {
	x := &diagnoses[d]
	return x.band[ageBand(age)]*x.sex[sexIndex(female)]*x.season[dayInfo[day].season] > 0
}

var femaleNames = []string{
	"Mary", "Patricia", "Jennifer", "Linda", "Elizabeth", "Barbara", "Susan", "Jessica",
	"Sarah", "Karen", "Lisa", "Nancy", "Betty", "Margaret", "Sandra", "Ashley",
	"Kimberly", "Emily", "Donna", "Michelle", "Carol", "Amanda", "Dorothy", "Melissa",
	"Deborah", "Stephanie", "Rebecca", "Sharon", "Laura", "Cynthia", "Kathleen", "Amy",
	"Angela", "Shirley", "Anna", "Brenda", "Pamela", "Emma", "Nicole", "Helen",
}

var maleNames = []string{
	"James", "Robert", "John", "Michael", "David", "William", "Richard", "Joseph",
	"Thomas", "Charles", "Christopher", "Daniel", "Matthew", "Anthony", "Mark", "Donald",
	"Steven", "Paul", "Andrew", "Joshua", "Kenneth", "Kevin", "Brian", "George",
	"Timothy", "Ronald", "Edward", "Jason", "Jeffrey", "Ryan", "Jacob", "Gary",
	"Nicholas", "Eric", "Jonathan", "Stephen", "Larry", "Justin", "Scott", "Brandon",
}

var lastNames = []string{
	"Smith", "Johnson", "Williams", "Brown", "Jones", "Garcia", "Miller", "Davis",
	"Rodriguez", "Martinez", "Hernandez", "Lopez", "Gonzalez", "Wilson", "Anderson", "Thomas",
	"Taylor", "Moore", "Jackson", "Martin", "Lee", "Perez", "Thompson", "White",
	"Harris", "Sanchez", "Clark", "Ramirez", "Lewis", "Robinson", "Walker", "Young",
	"Allen", "King", "Wright", "Scott", "Torres", "Nguyen", "Hill", "Flores",
}

// Tables derived once from the lists above.
var (
	smallInts []string           // decimal strings of 0..maxStayDays
	zips      []string           // 297 zip codes: 33 in each of the prefixes 021..029
	zipCum    []float64          // cumulative Zipf-like weights of zips
	dayInfo   []dayEntry         // one entry per admission day, firstAdmission first
	dayCum    []float64          // cumulative weights of admission days
	diagCum   [4][2][3][]float64 // [age band][sex][season] cumulative weights of diagnoses
)

type dayEntry struct {
	iso    string
	season uint8
}

func init() {
	smallInts = make([]string, max(maxStayDays, maxAge)+1)
	for i := range smallInts {
		smallInts[i] = strconv.Itoa(i)
	}

	// Zip codes: prefix 0pp, suffixes spread by a stride coprime with 100. Popularity
	// ranks are assigned by another coprime stride so that the big zips are spread over
	// the prefixes; weight of rank r is 1/(r+2) (Zipf–Mandelbrot).
	const perPrefix = 33
	for p := 21; p <= 29; p++ {
		for j := range perPrefix {
			z := p*100 + (j*29+p*11)%100
			zips = append(zips, leftPad5(z))
		}
	}
	weights := make([]float64, len(zips))
	for r := range zips {
		weights[(r*97)%len(zips)] = 1 / float64(r+2)
	}
	zipCum = cumulative(weights)

	// Days: a winter peak, fewer admissions at weekends, a dip in 2020.
	yearFactor := map[int]float64{2019: 1, 2020: 0.85, 2021: 0.95, 2022: 1, 2023: 1.03, 2024: 1.05}
	var dw []float64
	for d := firstAdmission; !d.After(lastAdmission); d = d.AddDate(0, 0, 1) {
		season := uint8(1)
		switch d.Month() {
		case time.December, time.January, time.February:
			season = 0
		case time.June, time.July, time.August:
			season = 2
		}
		dayInfo = append(dayInfo, dayEntry{iso: d.Format(time.DateOnly), season: season})
		w := (1 + 0.25*math.Cos(2*math.Pi*float64(d.YearDay()-20)/365.25)) * yearFactor[d.Year()]
		if wd := d.Weekday(); wd == time.Saturday || wd == time.Sunday {
			w *= 0.75
		}
		dw = append(dw, w)
	}
	dayCum = cumulative(dw)

	for b := range 4 {
		for s := range 2 {
			for se := range 3 {
				w := make([]float64, len(diagnoses))
				for i, d := range diagnoses {
					w[i] = d.base * d.band[b] * d.sex[s] * d.season[se]
				}
				diagCum[b][s][se] = cumulative(w)
			}
		}
	}
}

func leftPad5(z int) string {
	s := strconv.Itoa(z)
	for len(s) < 5 {
		s = "0" + s
	}
	return s
}

func cumulative(w []float64) []float64 {
	c := make([]float64, len(w))
	var sum float64
	for i, x := range w {
		sum += x
		c[i] = sum
	}
	return c
}
