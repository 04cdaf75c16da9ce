// Package diversity will hold the l-diversity variants (distinct, entropy, recursive
// (c,l)) evaluated on a class's sensitive histogram. Nothing is implemented yet: a
// configuration that asks for l-diversity is refused by the release.
package diversity
