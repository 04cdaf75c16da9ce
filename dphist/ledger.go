package dphist

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"math/big"
	"os"
	"strconv"
	"time"

	"sanitizer/fault"
	"sanitizer/internal/strictjson"
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

// ledgerShape is the JSON form of Ledger: its keys, exactly as Save writes them.
var ledgerShape = &strictjson.Shape{Fields: map[string]*strictjson.Shape{
	"datasets": {Names: &strictjson.Shape{Fields: map[string]*strictjson.Shape{
		"epsilon_total": nil,
		"delta_total":   nil,
		"spends": {Elems: &strictjson.Shape{Fields: map[string]*strictjson.Shape{
			"time": nil, "epsilon": nil, "delta": nil, "outputs": nil,
		}}},
	}}},
}}

// LoadLedger reads a ledger; a missing file is an empty ledger. A file that is not a
// ledger is bad input naming the file; so is a key that appears twice in one object,
// a key the ledger does not have, or one in another case ("Spends"), naming the key;
// an account whose name the configuration would refuse (see
// schema.CheckDatasetName: "ward " beside "ward" would hide spends); and a file with
// more than one name (a hard link: every charge replaces the file by a rename, which
// would leave the other name holding the old spends, a second budget).
func LoadLedger(path string) (*Ledger, error) {
	data, err := readLedger(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &Ledger{Datasets: map[string]*Account{}}, nil
	}
	if err != nil {
		return nil, err
	}
	// encoding/json alone would keep the last of two equal keys and match keys in any
	// case: a spend could be dropped unseen.
	if err := strictjson.Check(data, ledgerShape); err != nil {
		if errors.Is(err, strictjson.ErrSyntax) {
			return nil, fault.BadInput("ledger %s: not a ledger: %w", path, err)
		}
		return nil, fault.BadInput("ledger %s: %w", path, err)
	}
	var l Ledger
	if err := json.Unmarshal(data, &l); err != nil {
		return nil, fault.BadInput("ledger %s: not a ledger: %w", path, err)
	}
	if l.Datasets == nil {
		l.Datasets = map[string]*Account{}
	}
	for name, a := range l.Datasets {
		if err := checkAccount(name, a); err != nil {
			return nil, fault.BadInput("ledger %s: %w", path, err)
		}
	}
	return &l, nil
}

// readLedger is the content of the ledger file at path: an error matching
// fs.ErrNotExist when there is none, bad input naming path when it cannot be read,
// is not a regular file or has more than one name.
func readLedger(path string) ([]byte, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	if err != nil {
		return nil, fault.BadInput("ledger: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fault.BadInput("ledger: %w", err)
	}
	if !st.Mode().IsRegular() {
		return nil, fault.BadInput("ledger %s: not a regular file", path)
	}
	if n := links(st); n > 1 {
		return nil, fault.BadInput("ledger %s: the file has %d names (hard links); every charge replaces it by a rename, which would leave the other names holding the old spends, a second budget: remove the other names", path, n)
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, fault.BadInput("ledger %s: %w", path, err)
	}
	return data, nil
}

// checkAccount refuses an account a that is no budget, or whose name the
// configuration would refuse. A negative spend would hand budget back.
func checkAccount(name string, a *Account) error {
	if err := schema.CheckDatasetName(name); err != nil {
		return fmt.Errorf("dataset %w (move its spends to the dataset's account by hand)", err)
	}
	if a == nil {
		return fmt.Errorf("dataset %q has no account", name)
	}
	if !isBudget(a.EpsilonTotal, a.DeltaTotal) {
		return fmt.Errorf("dataset %q: totals ε=%g, δ=%g are not a budget", name, a.EpsilonTotal, a.DeltaTotal)
	}
	for i, s := range a.Spends {
		if !isSpend(s.Epsilon, s.Delta) || !(s.Delta < 1) {
			return fmt.Errorf("dataset %q: spend %d (ε=%g, δ=%g) is not a spend", name, i+1, s.Epsilon, s.Delta)
		}
	}
	return nil
}

// isBudget reports whether ε and δ are totals: 0 < ε, finite; 0 ≤ δ < 1.
func isBudget(eps, delta float64) bool {
	return eps > 0 && eps <= math.MaxFloat64 && delta >= 0 && delta < 1
}

// isSpend reports whether ε and δ are finite and not negative.
func isSpend(eps, delta float64) bool {
	return eps >= 0 && eps <= math.MaxFloat64 && delta >= 0 && delta <= math.MaxFloat64
}

// Spent is what the account has spent: ε and δ composed sequentially (summed), as
// exact decimals so that ten spends of 0.1 are exactly 1. A spend that is not finite
// (LoadLedger and Charge let none in) counts as more than any budget, never as 0.
func (a *Account) Spent() (eps, delta *big.Rat) {
	eps, delta = new(big.Rat), new(big.Rat)
	for _, s := range a.Spends {
		eps.Add(eps, decimal(s.Epsilon))
		delta.Add(delta, decimal(s.Delta))
	}
	return eps, delta
}

// beyond is more than any float64: what a number that is not finite counts as.
var beyond = new(big.Rat).SetInt(new(big.Int).Lsh(big.NewInt(1), 1025))

// decimal is x as the exact decimal its shortest representation writes; a NaN or
// infinity is beyond (fail closed: it was once 0, which passed every budget).
func decimal(x float64) *big.Rat {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return new(big.Rat).Set(beyond)
	}
	r, ok := new(big.Rat).SetString(strconv.FormatFloat(x, 'g', -1, 64))
	if !ok {
		return new(big.Rat).Set(beyond)
	}
	return r
}

// ErrTooLarge is matched by the error of a composition whose ε or δ add up to more
// than the largest float64, which neither a ledger nor a manifest can hold.
var ErrTooLarge = errors.New("more than the largest number a ledger or manifest can hold")

// Compose is the sequential composition of spends: their ε and δ summed as exact
// decimals (see Spent), each given as the least float64 whose shortest decimal is not
// below the sum, so that what is recorded is never less than what is spent. A spend
// that is negative or not finite is an error; a sum past the largest float64 is an
// error matching ErrTooLarge.
func Compose(spends []Spend) (eps, delta float64, err error) {
	for i, s := range spends {
		if !isSpend(s.Epsilon, s.Delta) {
			return 0, 0, fmt.Errorf("part %d: ε=%g, δ=%g is not a spend", i+1, s.Epsilon, s.Delta)
		}
	}
	e, d := (&Account{Spends: spends}).Spent()
	if eps, err = ceiling(e); err != nil {
		return 0, 0, fmt.Errorf("ε adds up to %s: %w", short(e), err)
	}
	if delta, err = ceiling(d); err != nil {
		return 0, 0, fmt.Errorf("δ adds up to %s: %w", short(d), err)
	}
	return eps, delta, nil
}

// short is r to four significant digits.
func short(r *big.Rat) string { return new(big.Float).SetRat(r).Text('g', 4) }

// ceiling is the least float64 whose shortest decimal is at least r ≥ 0; an error
// matching ErrTooLarge when there is none.
func ceiling(r *big.Rat) (float64, error) {
	f, _ := r.Float64()
	if !math.IsInf(f, 0) && decimal(f).Cmp(r) < 0 {
		f = math.Nextafter(f, math.Inf(1))
	}
	if math.IsInf(f, 0) {
		return 0, ErrTooLarge
	}
	return f, nil
}

// Charge records spend on dataset, whose totals are epsTotal and deltaTotal. A spend
// that would take the dataset past either total is refused with an error matching
// fault.ErrUnattainable, and the ledger is left as it was. A dataset's totals may be
// changed between runs only downwards: raising them would silently re-authorize
// spending, so it is refused (bad input). So are totals that are no budget, a spend
// that is negative or not finite, and a dataset name the configuration would refuse.
func (l *Ledger) Charge(dataset string, epsTotal, deltaTotal float64, spend Spend) error {
	if err := schema.CheckDatasetName(dataset); err != nil {
		return fault.BadInput("dataset: %w", err)
	}
	if !isBudget(epsTotal, deltaTotal) {
		return fault.BadInput("dp.epsilon-total/delta-total: ε=%g, δ=%g are not a budget", epsTotal, deltaTotal)
	}
	if !isSpend(spend.Epsilon, spend.Delta) {
		return fault.BadInput("dataset %q: the run's spend ε=%g, δ=%g is not a finite spend", dataset, spend.Epsilon, spend.Delta)
	}
	a := l.Datasets[dataset]
	if a == nil {
		a = &Account{EpsilonTotal: epsTotal, DeltaTotal: deltaTotal}
	} else if epsTotal > a.EpsilonTotal || deltaTotal > a.DeltaTotal {
		return fault.BadInput("dp.epsilon-total/delta-total: the ledger holds totals ε=%g, δ=%g for dataset %q; they may not be raised", a.EpsilonTotal, a.DeltaTotal, dataset)
	} else {
		a.EpsilonTotal, a.DeltaTotal = epsTotal, deltaTotal
	}
	eps, delta := a.Spent()
	eps.Add(eps, decimal(spend.Epsilon))
	delta.Add(delta, decimal(spend.Delta))
	if eps.Cmp(decimal(a.EpsilonTotal)) > 0 || delta.Cmp(decimal(a.DeltaTotal)) > 0 {
		e, _ := eps.Float64()
		d, _ := delta.Float64()
		return fault.Unattainable("dataset %q: this run would bring the spent budget to ε=%g, δ=%g, over the totals ε=%g, δ=%g", dataset, e, d, a.EpsilonTotal, a.DeltaTotal)
	}
	a.Spends = append(a.Spends, spend)
	l.Datasets[dataset] = a
	return nil
}

// Save writes the ledger to the file path atomically (path names the file itself, not
// a link to it: see File): readers see the old ledger or the new,
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
// on the file's ".lock" beside it (path resolved by File, so that every name of one
// ledger takes one lock) it re-reads the ledger, charges it (see Charge), saves it
// (removing the temporary ledgers that killed runs left beside it) and returns the
// dataset's account as saved. A refused charge leaves the file as it was.
func Record(path, dataset string, epsTotal, deltaTotal float64, spend Spend) (*Account, error) {
	file, err := File(path)
	if err != nil {
		return nil, err
	}
	unlock, err := lockFile(file + ".lock")
	if err != nil {
		return nil, err
	}
	defer unlock()
	l, err := LoadLedger(file)
	if err != nil {
		return nil, err
	}
	if err := l.Charge(dataset, epsTotal, deltaTotal, spend); err != nil {
		return nil, err
	}
	if err := l.Save(file); err != nil {
		return nil, err
	}
	return l.Datasets[dataset], nil
}
