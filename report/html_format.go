package report

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// The HTML reports' number formats: counts with thousands separators, shares as
// percentages with as many digits as keep a non-zero share from reading as 0% (or a
// share short of all from reading as 100%), risks also as "1 in N".

// fmtCount is n with thousands separators: 30162 → "30,162".
func fmtCount(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// fmtNumber is x with thousands separators and at most two decimals, trailing zeros
// dropped: 90254.737 → "90,254.74"; small numbers keep three significant digits.
func fmtNumber(x float64) string {
	switch {
	case math.IsNaN(x) || math.IsInf(x, 0):
		return "n/a"
	case x == 0:
		return "0"
	case math.Abs(x) < 1:
		return strconv.FormatFloat(x, 'g', 3, 64)
	case math.Abs(x) >= 1e15:
		return strconv.FormatFloat(x, 'g', 4, 64)
	}
	whole, frac := math.Modf(math.Abs(x))
	dec := math.Round(frac * 100)
	if dec == 100 {
		whole, dec = whole+1, 0
	}
	s := fmtCount(int64(whole))
	if dec > 0 {
		s += strings.TrimRight(fmt.Sprintf(".%02d", int(dec)), "0")
	}
	if x < 0 {
		s = "-" + s
	}
	return s
}

// fmtPct is the share x (0 to 1) as a percentage: one decimal in general, more for a
// share so small (or so close to 1) that one decimal would round it to 0% (or 100%),
// trailing zeros dropped: 0.045 → "4.5%", 0.000033 → "0.0033%", 0.99997 → "99.997%".
func fmtPct(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return "n/a"
	}
	v := x * 100
	digits := 1
	switch {
	case v == 0 || v == 100:
		digits = 0
	case math.Abs(v) < 1:
		digits = 1 - int(math.Floor(math.Log10(math.Abs(v))))
	case v > 99 && v < 100:
		digits = 1 - int(math.Floor(math.Log10(100-v)))
	}
	if digits > 12 {
		return "< 0.000000000001%" // no share of records a report counts is so small
	}
	s := strconv.FormatFloat(v, 'f', digits, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s + "%"
}

// fmtOneIn is the risk x as "1 in N" (N rounded to a whole number of people when it
// is large, to one decimal when small), "" for no risk or certainty.
func fmtOneIn(x float64) string {
	if x <= 0 || x >= 1 || math.IsNaN(x) || math.IsInf(x, 0) {
		return "" // "1 in 1" says no more than 100%
	}
	n := 1 / x
	if n > 1e15 {
		return ""
	}
	if n < 10 && math.Abs(n-math.Round(n)) > 0.05 {
		return "1 in " + strconv.FormatFloat(n, 'f', 1, 64)
	}
	return "1 in " + fmtCount(int64(math.Round(n)))
}

// fmtRisk is a risk as a percentage and as "1 in N": "20% (1 in 5)".
func fmtRisk(x float64) string {
	if s := fmtOneIn(x); s != "" {
		return fmtPct(x) + " (" + s + ")"
	}
	return fmtPct(x)
}

// fmtShareOf is part of whole as "1,346 (4.5%)".
func fmtShareOf(part, whole int64) string {
	if whole <= 0 {
		return fmtCount(part)
	}
	return fmtCount(part) + " (" + fmtPct(float64(part)/float64(whole)) + ")"
}

// fmtG is a privacy parameter (ε, δ, t, c, a noise scale) in its shortest exact form.
func fmtG(x float64) string {
	return strconv.FormatFloat(x, 'g', -1, 64)
}

// fmtScale is a noise scale or a half-width: four significant digits, with separators
// when large.
func fmtScale(x float64) string {
	if math.Abs(x) >= 1000 {
		return fmtNumber(math.Round(x))
	}
	return strconv.FormatFloat(x, 'g', 4, 64)
}

// joinWords lists words as "a, b and c".
func joinWords(words []string) string {
	switch len(words) {
	case 0:
		return ""
	case 1:
		return words[0]
	}
	return strings.Join(words[:len(words)-1], ", ") + " and " + words[len(words)-1]
}

// maxClassAbove is the largest class size whose records' prosecutor risk (1 / size)
// is above threshold t (0 when none is).
func maxClassAbove(t float64) int64 {
	if t <= 0 {
		return math.MaxInt64
	}
	n := 1 / t
	if r := math.Round(n); math.Abs(n-r) < 1e-9 {
		return int64(r) - 1
	}
	return int64(math.Ceil(n)) - 1
}

// plural is n's noun in the singular or the plural.
func plural(n int64, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// superscripts are the digits and minus sign as superscripts.
var superscripts = strings.NewReplacer("-", "⁻", "0", "⁰", "1", "¹", "2", "²", "3", "³", "4", "⁴", "5", "⁵", "6", "⁶", "7", "⁷", "8", "⁸", "9", "⁹")

// fmtSci is a number that may be tiny (a δ) as people write it: 0.5, 1.01 × 10⁻⁷,
// 10⁻⁶; three significant digits.
func fmtSci(x float64) string {
	a := math.Abs(x)
	if x == 0 || math.IsNaN(x) || math.IsInf(x, 0) || (a >= 1e-3 && a < 1e6) {
		return strconv.FormatFloat(x, 'g', 4, 64)
	}
	e := math.Floor(math.Log10(a))
	m, _ := strconv.ParseFloat(strconv.FormatFloat(x/math.Pow(10, e), 'g', 3, 64), 64)
	if math.Abs(m) >= 10 {
		m, e = m/10, e+1
	}
	pow := "10" + superscripts.Replace(strconv.Itoa(int(e)))
	if m == 1 {
		return pow
	}
	return strconv.FormatFloat(m, 'g', 3, 64) + " × " + pow
}
