// Package dphist holds the differentially private outputs: the noise mechanisms
// (Google's differential-privacy library, never a hand-written sampler), the
// sensitivities and contribution bounds of privacy units, histograms counted from
// encoded columns, marginals made consistent, per-group aggregates, the exponential
// mechanism, zCDP accounting, synthetic records fitted to noisy marginals, and the
// budget ledger. It knows nothing of files besides the ledger's own.
//
// It imports, of this module, only dphist/pgm (the graphical models behind the
// synthetic records), schema (the DP configuration, dataset names), fault (the error
// kinds), publish (to replace the ledger) and internal/safe: it reads no input, knows nothing
// of formats, flags or reports, and never imports the k/l/t release's packages
// (docs/design.md's package table).
//
// Its files:
//
//   - mechanism.go, select.go: the Laplace and Gaussian mechanisms over the library,
//     the exponential mechanism (Select) and Gaussian noise of a given σ.
//   - sensitivity.go, bound.go, units.go: the (L0, L∞) sensitivity of counts, the
//     contribution bounds a privacy unit is held to (Bound), and whether the unit
//     hashes name units exactly (SameUnits).
//   - histogram.go, consistent.go, aggregate.go: histograms and their noisy counts,
//     least-squares consistent marginals, per-group statistics of a numeric column.
//   - zcdp.go: ρ-zCDP and its conversions to and from (ε, δ).
//   - synthetic.go: synthetic records (AIM, MST) from a model of noisy marginals.
//   - ledger.go, ledgerfile.go, lock_*.go: the budget ledger, its file, its
//     strict JSON reading and its lock.
package dphist
