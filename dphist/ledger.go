package dphist

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math/big"
	"os"
	"strconv"
	"time"

	"sanitizer/publish"
	"sanitizer/schema"
)

// Ledger records the privacy budget spent on every dataset, across runs. It is a JSON
// file, rewritten atomically (a temporary file in the same folder, then a rename).
type Ledger struct {
	Datasets map[string]*Account `json:"datasets"`
}

// Account is one dataset's budget and what was spent of it.
type Account struct {
	EpsilonTotal float64 `json:"epsilon_total"`
	DeltaTotal   float64 `json:"delta_total"`
	Spends       []Spend `json:"spends"`
}

// Spend is one run's charge: the outputs it released and their composed ε and δ.
type Spend struct {
	Time    time.Time `json:"time"`
	Epsilon float64   `json:"epsilon"`
	Delta   float64   `json:"delta"`
	Outputs []string  `json:"outputs"`
}

// LoadLedger reads a ledger; a missing file is an empty ledger. A file that is not a
// ledger is bad input naming the file; so is a key that appears twice in one object,
// a key the ledger does not have, or one in another case ("Spends"), naming the key.
func LoadLedger(path string) (*Ledger, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &Ledger{Datasets: map[string]*Account{}}, nil
	}
	if err != nil {
		return nil, schema.BadInput("ledger: %w", err)
	}
	// encoding/json alone would keep the last of two equal keys and match keys in any
	// case: a spend could be dropped unseen.
	if err := checkStrict(data, ledgerShape); err != nil {
		return nil, schema.BadInput("ledger %s: %w", path, err)
	}
	var l Ledger
	if err := json.Unmarshal(data, &l); err != nil {
		return nil, schema.BadInput("ledger %s: not a ledger: %w", path, err)
	}
	if l.Datasets == nil {
		l.Datasets = map[string]*Account{}
	}
	for name, a := range l.Datasets {
		if a == nil {
			return nil, schema.BadInput("ledger %s: dataset %q has no account", path, name)
		}
		// A negative spend would hand budget back: a ledger holding one is refused.
		if !(a.EpsilonTotal > 0) || !(a.DeltaTotal >= 0 && a.DeltaTotal < 1) {
			return nil, schema.BadInput("ledger %s: dataset %q: totals ε=%g, δ=%g are not a budget", path, name, a.EpsilonTotal, a.DeltaTotal)
		}
		for i, s := range a.Spends {
			if !(s.Epsilon >= 0) || !(s.Delta >= 0 && s.Delta < 1) {
				return nil, schema.BadInput("ledger %s: dataset %q: spend %d (ε=%g, δ=%g) is not a spend", path, name, i+1, s.Epsilon, s.Delta)
			}
		}
	}
	return &l, nil
}

// Spent is what the account has spent: ε and δ composed sequentially (summed), as
// exact decimals so that ten spends of 0.1 are exactly 1.
func (a *Account) Spent() (eps, delta *big.Rat) {
	eps, delta = new(big.Rat), new(big.Rat)
	for _, s := range a.Spends {
		eps.Add(eps, decimal(s.Epsilon))
		delta.Add(delta, decimal(s.Delta))
	}
	return eps, delta
}

// decimal is x as the exact decimal its shortest representation writes.
func decimal(x float64) *big.Rat {
	r, ok := new(big.Rat).SetString(strconv.FormatFloat(x, 'g', -1, 64))
	if !ok {
		return new(big.Rat)
	}
	return r
}

// Charge records spend on dataset, whose totals are epsTotal and deltaTotal. A spend
// that would take the dataset past either total is refused with an error matching
// schema.ErrUnattainable, and the ledger is left as it was. A dataset's totals may be
// changed between runs only downwards: raising them would silently re-authorize
// spending, so it is refused (bad input).
func (l *Ledger) Charge(dataset string, epsTotal, deltaTotal float64, spend Spend) error {
	a := l.Datasets[dataset]
	if a == nil {
		a = &Account{EpsilonTotal: epsTotal, DeltaTotal: deltaTotal}
	} else if epsTotal > a.EpsilonTotal || deltaTotal > a.DeltaTotal {
		return schema.BadInput("dp.epsilon-total/delta-total: the ledger holds totals ε=%g, δ=%g for dataset %q; they may not be raised", a.EpsilonTotal, a.DeltaTotal, dataset)
	} else {
		a.EpsilonTotal, a.DeltaTotal = epsTotal, deltaTotal
	}
	eps, delta := a.Spent()
	eps.Add(eps, decimal(spend.Epsilon))
	delta.Add(delta, decimal(spend.Delta))
	if eps.Cmp(decimal(a.EpsilonTotal)) > 0 || delta.Cmp(decimal(a.DeltaTotal)) > 0 {
		e, _ := eps.Float64()
		d, _ := delta.Float64()
		return schema.Unattainable("dataset %q: this run would bring the spent budget to ε=%g, δ=%g, over the totals ε=%g, δ=%g", dataset, e, d, a.EpsilonTotal, a.DeltaTotal)
	}
	a.Spends = append(a.Spends, spend)
	l.Datasets[dataset] = a
	return nil
}

// Save writes the ledger to path atomically: readers see the old ledger or the new,
// never a part (see publish.WriteFile, which also removes the temporaries of Saves
// that were killed). Writers that may run at the same time must hold the ledger's
// lock, as Record does, or one's spends may be lost.
func (l *Ledger) Save(path string) error {
	data, err := json.MarshalIndent(l, "", "  ")
	if err != nil {
		return err
	}
	err = publish.WriteFile(path, publish.Options{Force: true}, func(f *os.File) error {
		_, err := f.Write(append(data, '\n'))
		return err
	})
	if err != nil {
		return fmt.Errorf("ledger: %w", err)
	}
	return nil
}

// Record charges spend to dataset in the ledger file at path: under an exclusive lock
// on path+".lock" it re-reads the ledger, charges it (see Charge), saves it (removing
// the temporary ledgers that killed runs left beside it) and returns the dataset's
// account as saved. A refused charge leaves the file as it was.
func Record(path, dataset string, epsTotal, deltaTotal float64, spend Spend) (*Account, error) {
	unlock, err := lockFile(path + ".lock")
	if err != nil {
		return nil, err
	}
	defer unlock()
	l, err := LoadLedger(path)
	if err != nil {
		return nil, err
	}
	if err := l.Charge(dataset, epsTotal, deltaTotal, spend); err != nil {
		return nil, err
	}
	if err := l.Save(path); err != nil {
		return nil, err
	}
	return l.Datasets[dataset], nil
}
