package release

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/big"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"sanitizer/fault"
	"sanitizer/job"
	"sanitizer/report"
	"sanitizer/schema"
)

// profitAmounts are ARX's config2 (TestAnonymizationProfitability): an adversary who
// re-identifies a record with probability 1/n attacks when 120/n > 20, n < 6, and an
// attacked record costs the publisher 3000/n against a benefit of 1200.
const profitAmounts = "publisher-benefit: 1200, publisher-loss: 3000, adversary-gain: 120, adversary-cost: 20"

// gameClass is a released class as the test measures it from the written file.
type gameClass struct {
	n   int     // released records
	pop int     // the population's records with its values (a research subset's)
	il  float64 // its records' entropy-based information loss
}

// releasedGame groups the release at out (Adult's quasi-identifiers, ';') into its
// classes and measures each with the test's own arithmetic: IL from the hierarchy files
// (the rows whose label at the node's level is the released value, over their rows),
// the population count from the input's records generalized to the node.
func releasedGame(t *testing.T, out, in string, node []report.NodeLevel) map[string]*gameClass {
	t.Helper()
	labels := adultLabels(t)
	level := map[string]int{}
	for _, n := range node {
		level[n.Column] = n.Level
	}
	under := func(q, v string) int {
		c := 0
		for _, row := range labels[q] {
			if row[level[q]] == v {
				c++
			}
		}
		return c
	}
	header, rows := readTable(t, out, ';')
	inHeader, inRows := readTable(t, in, ';')
	classes := map[string]*gameClass{}
	for _, r := range rows {
		key, num, den := "", 0.0, 0.0
		for _, q := range adultQI {
			v := r[slices.Index(header, q)]
			key += v + "\x1f"
			num += math.Log(float64(under(q, v)))
			den += math.Log(float64(len(labels[q])))
		}
		c := classes[key]
		if c == nil {
			c = &gameClass{il: num / den}
			classes[key] = c
		}
		c.n++
	}
	for _, r := range inRows {
		key := ""
		for _, q := range adultQI {
			key += labels[q][r[slices.Index(inHeader, q)]][level[q]] + "\x1f"
		}
		if c := classes[key]; c != nil {
			c.pop++
		}
	}
	return classes
}

// payoutOf is the publisher's expected payout per record of a class of information
// loss il whose records the adversary re-identifies with probability 1/n, under
// profitAmounts: 1200·(1 − il), less 3000/n when 120 > 20·n.
func payoutOf(il float64, n int) float64 {
	p := 1200 * (1 - il)
	if big.NewRat(120, 1).Cmp(big.NewRat(20*int64(n), 1)) > 0 {
		p -= 3000 * (1 / float64(n))
	}
	return p
}

// TestReleaseProfitability: on Adult, releases under the game-theoretic model with an
// attack (prosecutor, and a journalist against a research subset's population) hold
// only classes whose payout, measured by the test from the written file, is positive,
// some of them attacked; the report states the model and the verifier's least payout;
// check passes them, and refuses a release at the same node that keeps the classes the
// model suppresses. Without an attack every class holds the k above 120/20, 7.
func TestReleaseProfitability(t *testing.T) {
	modelsOnly(t)
	for _, c := range []struct {
		name, privacy string
		journalist    bool
	}{
		{"prosecutor", "privacy: {k: 1, suppression: 0.04, profitability: {attack: true, " + profitAmounts + "}}\nsearch: {metric: publisher-payout}", false},
		{"journalist", "privacy: {k: 1, suppression: 0.04, subset: {column: in_study}, profitability: {attacker: journalist, attack: true, " + profitAmounts + "}}\nsearch: {metric: publisher-payout}", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg, in, dir, _ := subsetFixture(t, c.privacy, studyFlag)
			out := filepath.Join(dir, "out.csv")
			rep, err := Release(context.Background(), cfg, job.Options{Input: in, Output: out})
			if err != nil {
				t.Fatal(err)
			}
			attacked, least := 0, math.Inf(1)
			for _, cl := range releasedGame(t, out, in, rep.Node) {
				n := cl.n
				if c.journalist {
					n = cl.pop
				}
				if p := payoutOf(cl.il, n); p <= 0 {
					t.Fatalf("a released class of %d records (%d of the population), IL %.4f, pays %g", cl.n, cl.pop, cl.il, p)
				}
				if n < 6 {
					attacked++
				}
				least = min(least, payoutOf(cl.il, n))
			}
			p := rep.Model.Profitability
			if p == nil || !p.Attack || p.AdversaryGain != 120 || rep.Verified.Payout == nil || !(rep.Verified.Payout.LeastPayout > 0) {
				t.Fatalf("report: model %+v, verified %+v", p, rep.Verified.Payout)
			}
			t.Logf("node %v: %d suppressed, %d attacked classes released, least payout %g", rep.Node, rep.Suppressed, attacked, rep.Verified.Payout.LeastPayout)
			if math.Abs(rep.Verified.Payout.LeastPayout-least) > 1e-9*least {
				t.Errorf("the verifier's least payout %.17g, the test's %.17g", rep.Verified.Payout.LeastPayout, least)
			}
			if attacked == 0 || rep.Suppressed == 0 {
				t.Errorf("%d attacked classes released, %d records suppressed: the test does not test the attack", attacked, rep.Suppressed)
			}
			if _, err := Check(context.Background(), cfg, job.Options{Input: in, Output: out}); err != nil {
				t.Fatalf("check: %v", err)
			}
			keptAll(t, cfg, c.privacy, in, rep.Node)
		})
	}
}

// keptAll releases the input at node under k = 1 alone, so that the classes the model
// suppresses are kept, and checks that check refuses it under cfg.
func keptAll(t *testing.T, cfg *schema.Config, privacy, in string, node []report.NodeLevel) {
	t.Helper()
	var pin []string
	for _, n := range node {
		pin = append(pin, fmt.Sprintf("%s: %d", n.Column, n.Level))
	}
	bounds := "{" + strings.Join(pin, ", ") + "}"
	weak := strings.SplitN(privacy, "\n", 2)[0]
	start, end := strings.Index(weak, "profitability: {"), strings.LastIndex(weak, "}}")
	weak = weak[:start] + "k-map: {k: 1}" + weak[end+1:]
	if !strings.Contains(privacy, "subset") {
		weak = "privacy: {k: 1, suppression: 0.04}"
	}
	weakCfg, _, dir, _ := subsetFixture(t, weak+"\nsearch: {min-levels: "+bounds+", max-levels: "+bounds+"}", studyFlag)
	kept := filepath.Join(dir, "kept.csv")
	if _, err := Release(context.Background(), weakCfg, job.Options{Input: in, Output: kept}); err != nil {
		t.Fatal(err)
	}
	_, err := Check(context.Background(), cfg, job.Options{Input: in, Output: kept})
	if !errors.Is(err, fault.ErrUnattainable) || !strings.Contains(err.Error(), "payout") {
		t.Fatalf("check of a release keeping the classes the model suppresses: %v", err)
	}
	if strings.Contains(err.Error(), "Private") || strings.Contains(err.Error(), "Bachelors") {
		t.Errorf("the refusal shows a value: %v", err)
	}
}

// TestReleaseProfitabilityNoAttack: without an attack the model is k-anonymity
// (prosecutor) or k-map against the population (journalist) with k = 7, the least
// integer above 120/20: every released class holds 7 records (7 of the population),
// and the report says so.
func TestReleaseProfitabilityNoAttack(t *testing.T) {
	modelsOnly(t)
	for _, journalist := range []bool{false, true} {
		privacy := "privacy: {suppression: 0.04, profitability: {" + profitAmounts + "}}"
		if journalist {
			privacy = "privacy: {suppression: 0.04, subset: {column: in_study}, profitability: {attacker: journalist, " + profitAmounts + "}}"
		}
		t.Run(strconv.FormatBool(journalist), func(t *testing.T) {
			cfg, in, dir, _ := subsetFixture(t, privacy, studyFlag)
			out := filepath.Join(dir, "out.csv")
			rep, err := Release(context.Background(), cfg, job.Options{Input: in, Output: out})
			if err != nil {
				t.Fatal(err)
			}
			if p := rep.Model.Profitability; p == nil || p.NoAttackK != 7 {
				t.Fatalf("report: %+v", p)
			}
			for _, cl := range releasedGame(t, out, in, rep.Node) {
				n := cl.n
				if journalist {
					n = cl.pop
				}
				if n < 7 {
					t.Fatalf("a released class of %d records, %d of the population", cl.n, cl.pop)
				}
			}
			if _, err := Check(context.Background(), cfg, job.Options{Input: in, Output: out}); err != nil {
				t.Fatalf("check: %v", err)
			}
		})
	}
}
