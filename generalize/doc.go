// Package generalize holds the k/l/t release's generalization: the quasi-identifiers'
// hierarchies, the input encoded as leaf codes, its equivalence classes and their
// class tables, the lattice of full-domain generalizations and the optimal search over
// it, Mondrian's multidimensional partitioning, the privacy models decided class by
// class or on the release as a whole, the metrics the search minimizes, and the
// utility measures of a release.
//
// It imports, of this module, only schema (the configuration's column types and
// limits), fault (the error kinds), the models' arithmetic (diversity, closeness, risk),
// internal/readfile and internal/safe: it reads no file but a hierarchy file, writes
// nothing, and knows nothing of formats, flags or reports (docs/design.md's package
// table).
//
// Its files:
//
//   - hierarchy.go, hierfile.go, builders.go: hierarchies, read from ARX's files or
//     built (intervals, masks, dates).
//   - table.go, codes.go, tally.go: the encoded table (per-record leaf codes of the
//     quasi-identifiers, the sensitive columns' values) and the counts per value it
//     and a class table give.
//   - classes.go: a node's equivalence classes and the roll-up that counts them from
//     the records or from a more specific node's classes (radix-partitioned when
//     large).
//   - classtable.go, classcodec.go, cut.go, sizes.go: class tables (the classes of an
//     input's most specific node, to merge across parts, search and recode), their
//     binary codec, the cut that counts them at minimum levels, and class-size
//     distributions.
//   - lattice.go, order.go: the lattice of nodes and the search's order of them.
//   - search.go: Search, its Options and Result, the searcher of one table, and what
//     a chosen node publishes (NodeClasses, Suppressed).
//   - traversal.go: the run of a search over the lattice (batches, tags, the
//     bisection that resolves unknown nodes, bounds, the final accounting).
//   - nodes.go: the search's state of every node (status, flags, bound, height).
//   - evaluate.go: one node's evaluation: its classes counted and every requirement
//     checked on them.
//   - cache.go: the class tables kept as sources of later roll-ups.
//   - models.go, presence.go, risks.go: l-diversity, t-closeness and β-likeness;
//     δ-presence and k-map against a population; the risk-based models; and which of
//     them are monotone under generalization.
//   - metric.go, objective.go, entropy.go, floor.go: the metrics the search
//     minimizes, their bounds and floors.
//   - mondrian.go: Mondrian.
//   - utility.go: the utility measures of a release (loss, NCP, discernibility,
//     average class size, non-uniform entropy).
package generalize
