package verify

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestCheckSensitiveDeterministic: the weakest class's measured entropy l is the same
// bit for bit however the histograms' maps happen to be iterated (the report gives it).
func TestCheckSensitiveDeterministic(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const values = 60
	sc := Sensitive{Column: "diag", Values: make([]string, values), Reference: make([]int64, values)}
	for v := range values {
		sc.Values[v] = fmt.Sprintf("d%d", v)
		sc.Reference[v] = 1
	}
	hist := map[int32]int64{}
	for v := range values {
		hist[int32(v)] = 1 + rng.Int64N(1000)
	}
	want, err := checkSensitive(sc, []map[int32]int64{hist})
	if err != nil {
		t.Fatal(err)
	}
	for range 50 {
		got, err := checkSensitive(sc, []map[int32]int64{hist})
		if err != nil {
			t.Fatal(err)
		}
		if got.MinEntropyL != want.MinEntropyL {
			t.Fatalf("entropy l %v, then %v, for the same histogram", want.MinEntropyL, got.MinEntropyL)
		}
	}
}
