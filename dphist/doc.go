// Package dphist will hold the differentially private outputs: noise mechanisms,
// budget accounting, histograms, marginals, synthetic records and the ledger. Nothing
// is implemented yet.
package dphist
