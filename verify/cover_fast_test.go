package verify

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// masksByChars is masks as first written: split into characters, the longest common
// prefix, then stars only.
func masksByChars(released, original string) bool {
	rs, vs := chars(released), chars(original)
	if len(rs) != len(vs) || len(rs) == 0 {
		return false
	}
	p := 0
	for p < len(rs) && rs[p] == vs[p] {
		p++
	}
	for _, c := range rs[p:] {
		if c != top {
			return false
		}
	}
	return true
}

// TestMasksRight: the mask check from the right that does not split its strings agrees
// with the one that does, on strings of digits, stars, a two-byte rune and bytes that
// are not UTF-8.
func TestMasksRight(t *testing.T) {
	alphabet := []string{"1", "2", "*", "é", "\xff", "\xc3", "\xa9"}
	rng := rand.New(rand.NewPCG(1, 2))
	word := func() string {
		var b strings.Builder
		for range rng.IntN(5) {
			b.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		return b.String()
	}
	for range 200000 {
		o := word()
		r := o
		if rng.IntN(2) == 0 {
			cs := chars(o)
			for i := len(cs) - rng.IntN(len(cs)+1); i < len(cs); i++ {
				cs[i] = top
			}
			r = strings.Join(cs, "")
		} else if rng.IntN(2) == 0 {
			r = word()
		}
		if got, want := masksRight(r, o), masksByChars(r, o); got != want {
			t.Fatalf("masksRight(%q, %q) = %v, want %v", r, o, got, want)
		}
	}
}

// TestIntegerRangeFast: integer ranges checked in 64 bits agree with the same check in
// big numbers, near and beyond the 64-bit limits and on text that is no integer.
func TestIntegerRangeFast(t *testing.T) {
	values := []string{"0", "7", "07", "+7", "-7", "20", "-0", "x", "", "1.5",
		"9223372036854775807", "9223372036854775808", "-9223372036854775808", "-9223372036854775809", "99999999999999999999"}
	k := integerKind.cached()
	for _, lo := range values {
		for _, hi := range values {
			for _, v := range values {
				released := "[" + lo + "," + hi + "]"
				got, gotErr := k.inRange(released, v)
				l, lok := k.parse(lo)
				x, xok := k.parse(v)
				want, wantErr := k.holds(l, lok, hi, false, x, xok)
				if got != want || (gotErr == nil) != (wantErr == nil) || (gotErr != nil && gotErr.Error() != wantErr.Error()) {
					t.Errorf("inRange(%q, %q) = %v, %v; in big numbers %v, %v", released, v, got, gotErr, want, wantErr)
				}
			}
		}
	}
}

// dayByTime is parseDay as the time package reads a date.
func dayByTime(s string) (int64, bool) {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil || len(s) != len(time.DateOnly) {
		return 0, false
	}
	return int64(math.Floor(float64(t.Unix()) / 86400)), true
}

// TestParseDay: parseDay agrees with the time package on every day of 1600–2400, on
// the first years and the last, and on near-dates that are not dates.
func TestParseDay(t *testing.T) {
	check := func(s string) {
		t.Helper()
		got, ok := parseDay(s)
		want, wok := dayByTime(s)
		if ok != wok || got != want {
			t.Fatalf("parseDay(%q) = %d, %v; the time package: %d, %v", s, got, ok, want, wok)
		}
	}
	step := 1 // every day
	if testing.Short() {
		step = 13 // the race run (parseDay starts no goroutine): every 13th day
	}
	for d := time.Date(1600, 1, 1, 0, 0, 0, 0, time.UTC); d.Year() < 2400; d = d.AddDate(0, 0, step) {
		check(d.Format(time.DateOnly))
	}
	for _, s := range []string{
		"0000-01-01", "0000-02-29", "0001-02-29", "0004-02-29", "1900-02-29", "2000-02-29",
		"9999-12-31", "2023-00-10", "2023-13-01", "2023-04-31", "2023-04-00", "2023-4-01",
		"2023-04-1", "+023-04-01", "-023-04-01", "2023/04/01", "2023-04-01 ", " 2023-04-01",
		"20230401", "2023-04-01T00:00:00Z", "", "2023-04-0a", "２０２３-04-01", "2023-\xff4-01",
	} {
		check(s)
	}
}

// FuzzParseDay: parseDay reads a released or original date as the time package does.
func FuzzParseDay(f *testing.F) {
	for _, s := range []string{"2019-01-03", "0000-02-29", "2023-02-29", "1999-12-31", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := parseDay(s)
		want, wok := dayByTime(s)
		if ok != wok || got != want {
			t.Fatalf("parseDay(%q) = %d, %v; the time package: %d, %v", s, got, ok, want, wok)
		}
	})
}
