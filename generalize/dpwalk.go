package generalize

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math/big"
	"math/bits"
	"slices"

	"sanitizer/fault"
	"sanitizer/internal/safe"
	"sanitizer/safepub"
)

// DPWalkOptions is SafePub's data-dependent search (Bild, Kuhn, Prasser 2018, section
// 4; ARX's DataDependentEDDPAlgorithm): the score, the k of the release, the ε the
// search spends on its sample and its steps, and the random source of the draws.
type DPWalkOptions struct {
	K       int      // every class of fewer sampled records is suppressed
	Score   DPScore  // what the draws prefer
	Epsilon *big.Rat // ε on the sample: FinalShare for the final choice, the rest for the steps
	Steps   int      // the walk's steps
	// Beta is the probability the sample was drawn with (nil: 1): the scores take its
	// records ÷ β as the input's size N.
	Beta   *big.Rat
	Random io.Reader
}

// FinalShare is the share of the search's ε that its final choice among the pivots
// spends; the walk's steps share the rest equally.
var FinalShare = big.NewRat(1, 4)

// DPWalk is the node SafePub's search chose, and how.
type DPWalk struct {
	Node   []int // a level per quasi-identifier, in the table's order
	Steps  int   // the steps the walk took (fewer than asked when no candidate was left)
	Pivots int   // the distinct nodes the final choice was drawn from
	// Path is the pivots in the order drawn, the top first (a node drawn again
	// appears again).
	Path [][]int
}

// SafePubWalk draws a node by SafePub's search on sample, a sample of the input drawn
// for the search alone, which its scores take as their whole dataset. From the top
// node, each step adds the pivot's direct specializations not yet among the
// candidates, removes the pivot, and draws the next pivot from the candidates by the
// exponential mechanism at (1 − FinalShare)·ε/Steps (ARX's walk, which may draw a node
// again once it is a candidate again); it stops early when no candidate is left. The
// node returned is drawn from the distinct pivots (the top included) by the
// exponential mechanism at FinalShare·ε, where SafePub and ARX take the pivot of the
// best score, which would read the sample once more without a budget. Every draw is
// exact (safepub.Exponential): ε-differentially private with respect to the sample,
// the scores having sensitivity 1 (DPScore), and so less with respect to the input
// (safepub.Params.Amplified).
func SafePubWalk(ctx context.Context, sample *Table, opt DPWalkOptions) (w *DPWalk, err error) {
	err = safe.Call(func() error {
		w, err = safePubWalk(ctx, sample, opt)
		return err
	})
	if err != nil {
		return nil, err
	}
	return w, nil
}

// safePubWalk is SafePubWalk, its panics not recovered.
func safePubWalk(ctx context.Context, sample *Table, opt DPWalkOptions) (*DPWalk, error) {
	if opt.K < 1 || opt.Steps < 1 || opt.Epsilon == nil || opt.Epsilon.Sign() <= 0 || opt.Random == nil {
		return nil, fmt.Errorf("SafePub's search: k %d, %d steps, ε %v, or no random source", opt.K, opt.Steps, opt.Epsilon)
	}
	lat := sample.lattice()
	if lat.TooLarge() {
		return nil, fault.BadInput("SafePub's search: the quasi-identifiers' hierarchies make a lattice of more than %d nodes", maxLatticeSize)
	}
	sc, err := newScorer(sample, opt)
	if err != nil {
		return nil, err
	}
	// The exponential mechanism at ε′ draws with weights exp(ε′·score/2).
	final := new(big.Rat).Mul(opt.Epsilon, FinalShare)
	finalScale := new(big.Rat).Quo(final, big.NewRat(2, 1))
	stepScale := new(big.Rat).Sub(opt.Epsilon, final)
	stepScale.Quo(stepScale, big.NewRat(2*int64(opt.Steps), 1))
	pivot := lat.Size() - 1 // the top: every level at its highest
	pivots := []int{pivot}
	visited := map[int]bool{pivot: true}
	var cand []int
	inCand := map[int]bool{}
	w := &DPWalk{Path: [][]int{lat.Levels(pivot, nil)}}
	for range opt.Steps {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		lat.Down(pivot, func(p int) {
			if !inCand[p] {
				inCand[p] = true
				cand = append(cand, p)
			}
		})
		delete(inCand, pivot)
		cand = removeNode(cand, pivot)
		if len(cand) == 0 {
			break
		}
		i, err := sc.draw(lat, cand, stepScale)
		if err != nil {
			return nil, err
		}
		pivot = cand[i]
		w.Steps++
		w.Path = append(w.Path, lat.Levels(pivot, nil))
		if !visited[pivot] {
			visited[pivot] = true
			pivots = append(pivots, pivot)
		}
	}
	i, err := sc.draw(lat, pivots, finalScale)
	if err != nil {
		return nil, err
	}
	w.Node, w.Pivots = lat.Levels(pivots[i], nil), len(pivots)
	return w, nil
}

// removeNode is nodes without node, in order.
func removeNode(nodes []int, node int) []int {
	for i, n := range nodes {
		if n == node {
			return append(nodes[:i], nodes[i+1:]...)
		}
	}
	return nodes
}

// scorer scores the nodes of one sample, each once.
type scorer struct {
	opt    DPWalkOptions
	sample *Table
	bottom *ClassTable
	scores map[int]*big.Rat
	levels []int
	size   *big.Rat // N: the sample's records ÷ β
	// dense and touched are denseClassesAt's count of every cell, and the cells it
	// counted.
	dense   []int64
	touched []int
}

// newScorer counts the sample's classes at its leaves, which every node's classes
// roll up from.
func newScorer(sample *Table, opt DPWalkOptions) (*scorer, error) {
	sc := &scorer{opt: opt, sample: sample, scores: map[int]*big.Rat{}, size: big.NewRat(int64(sample.Rows), 1)}
	if opt.Beta != nil {
		sc.size.Quo(sc.size, opt.Beta)
	}
	if sample.Rows > 0 {
		var err error
		if sc.bottom, err = countClasses(sample); err != nil {
			return nil, err
		}
	}
	return sc, nil
}

// draw draws an index of nodes by the exponential mechanism at scale (ε′/2 for
// scores of sensitivity 1).
func (sc *scorer) draw(lat *Lattice, nodes []int, scale *big.Rat) (int, error) {
	scores := make([]*big.Rat, len(nodes))
	for i, n := range nodes {
		s, err := sc.score(lat, n)
		if err != nil {
			return 0, err
		}
		scores[i] = s
	}
	i, err := safepub.Exponential(scores, scale, sc.opt.Random)
	if err != nil {
		return 0, fmt.Errorf("SafePub's search: %w", err)
	}
	return i, nil
}

// score is node n's score (computed once).
func (sc *scorer) score(lat *Lattice, n int) (*big.Rat, error) {
	if s, ok := sc.scores[n]; ok {
		return s, nil
	}
	sc.levels = lat.Levels(n, sc.levels)
	// The sample is the scores' whole dataset: they read nothing else of the input, so
	// that the search's privacy is amplified by the sampling.
	in := scoreInput{cols: sc.sample.Columns, levels: sc.levels, classes: sc.classesAt(sc.levels), k: int64(sc.opt.K), input: sc.size}
	s, err := dpScore(sc.opt.Score, in)
	if err != nil {
		return nil, err
	}
	sc.scores[n] = s
	return s, nil
}

// classesAt rolls the sample's classes up to levels.
func (sc *scorer) classesAt(levels []int) []nodeClass {
	ct := sc.bottom
	if ct.Len() == 0 {
		return nil
	}
	cols := sc.sample.Columns
	if out, ok := sc.denseClassesAt(levels); ok {
		return out
	}
	shift, packed := codeShifts(cols)
	codes := make([]int32, len(levels))
	var out []nodeClass
	add := func(at int, ok bool, j int) int {
		if !ok {
			at = len(out)
			out = append(out, nodeClass{codes: slices.Clone(codes)})
		}
		out[at].count += int64(ct.Count(j))
		return at
	}
	if packed { // the codes in one word: a map of integers
		index := make(map[uint64]int, 64)
		for j := range ct.Len() {
			var key uint64
			for i, c := range cols {
				codes[i] = c.Hierarchy.Code(levels[i], ct.Code(i, j))
				key |= uint64(codes[i]) << shift[i]
			}
			at, ok := index[key]
			index[key] = add(at, ok, j)
		}
		return out
	}
	index := map[string]int{}
	key := make([]byte, 0, 4*len(levels))
	for j := range ct.Len() {
		key = key[:0]
		for i, c := range cols {
			codes[i] = c.Hierarchy.Code(levels[i], ct.Code(i, j))
			key = binary.LittleEndian.AppendUint32(key, uint32(codes[i]))
		}
		at, ok := index[string(key)]
		index[string(key)] = add(at, ok, j)
	}
	return out
}

// maxDense bounds the cells of a node's dense count (the product of its columns'
// values at its levels).
const maxDense = 1 << 22

// denseClassesAt counts the sample's classes at levels in an array of every
// combination of the node's values, when there are at most maxDense of them (false:
// more); the array is the scorer's, cleared where it was counted.
func (sc *scorer) denseClassesAt(levels []int) ([]nodeClass, bool) {
	ct, cols := sc.bottom, sc.sample.Columns
	cells := 1
	for i, c := range cols {
		cells *= c.Hierarchy.Size(levels[i])
		if cells > maxDense {
			return nil, false
		}
	}
	if len(sc.dense) < cells {
		sc.dense = make([]int64, cells)
	}
	sc.touched = sc.touched[:0]
	for j := range ct.Len() {
		cell := 0
		for i, c := range cols {
			cell = cell*c.Hierarchy.Size(levels[i]) + int(c.Hierarchy.Code(levels[i], ct.Code(i, j)))
		}
		if sc.dense[cell] == 0 {
			sc.touched = append(sc.touched, cell)
		}
		sc.dense[cell] += int64(ct.Count(j))
	}
	out := make([]nodeClass, len(sc.touched))
	codes := make([]int32, len(out)*len(cols))
	for k, cell := range sc.touched {
		out[k] = nodeClass{count: sc.dense[cell], codes: codes[k*len(cols) : (k+1)*len(cols)]}
		sc.dense[cell] = 0
		for i := len(cols) - 1; i >= 0; i-- {
			size := cols[i].Hierarchy.Size(levels[i])
			out[k].codes[i] = int32(cell % size)
			cell /= size
		}
	}
	return out, true
}

// codeShifts is where each column's code goes in a word of all of them (its leaves'
// codes the widest), and whether they fit 64 bits.
func codeShifts(cols []Column) ([]uint, bool) {
	shift := make([]uint, len(cols))
	var at uint
	for i, c := range cols {
		shift[i] = at
		at += uint(bits.Len(uint(c.Hierarchy.Leaves())))
	}
	return shift, at <= 64
}
