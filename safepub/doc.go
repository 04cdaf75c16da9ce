// Package safepub holds the arithmetic of SafePub (Bild, Kuhn, Prasser, "SafePub: A
// Truthful Data Anonymization Algorithm With Strong Privacy Guarantees", PoPETs 2018),
// built on Li, Qardaji and Su ("On sampling, anonymization, and differential
// privacy", ASIACCS 2012): a table sampled record by record with probability β and
// then k-anonymized by a strongly safe algorithm (a generalization fixed without
// looking at the data, every class of fewer than k records suppressed) is
// (ε, δ)-differentially private when β ≤ 1 − e^−ε and
//
//	δ ≥ d(k, β, ε) = max over n ≥ n_m of Σ_{j > γn} C(n, j) β^j (1 − β)^(n−j),
//	γ = (e^ε − 1 + β) / e^ε,  n_m = ⌈k/γ − 1⌉
//
// (Li et al., Theorem 5). Params computes β and the least such k with every rounding
// taken the safe way: bounds on e^ε from its series, β a multiple of 2^−53 below
// 1 − e^−ε (so that a 53-bit uniform integer samples with probability β exactly), the
// binomial tails summed upwards in binary floating point of 192 bits with the
// rounding directed up, and the search over n stopped by the Chernoff bound on the
// tail, itself bounded from above. Sample draws the sample with probability β
// exactly; Degree is ARX's fixed generalization by a share of each hierarchy's height;
// Exponential is the exponential mechanism of SafePub's search, drawn exactly from
// rational scores.
//
// It imports nothing of this module (docs/design.md's package table): the
// configuration (the degrees), the search (the exponential mechanism) and the release
// share it.
package safepub
