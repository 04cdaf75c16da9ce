package pgm

import (
	"math"
)

// mproj maps the cells of a "big" table over an attribute set B onto the
// cells of several "factor" tables over subsets of B. The big table is
// walked in row-major order as a sequence of runs of length inner; within a
// run, a factor's index advances by its run stride istr (usually 1, or 0
// when the factor does not depend on the run's attributes). An odometer over the outer blocks tracks each factor's base
// index. Attributes of size one are dropped and consecutive attributes with
// the same factor membership are merged, so runs are as long as possible.
type mproj struct {
	size   int   // cells of the big table
	inner  int   // run length
	nouter int   // number of runs
	dims   []int // outer block sizes, most significant first
	nf     int   // number of factors
	str    []int // str[d*nf+j]: stride of factor j in outer block d (0 if not a member)
	istr   []int // per factor: index step along the run
	fsize  []int // cells per factor table
}

// newMproj builds the map from the table over big to tables over subs,
// each a subset of big. Each table is laid out row-major in the order its
// attributes are listed (not necessarily sorted); sizes must fit in int.
func newMproj(dom Domain, big []int, subs [][]int) *mproj {
	nf := len(subs)
	p := &mproj{nf: nf, istr: make([]int, nf), fsize: make([]int, nf)}
	// stride of each attribute within each factor
	colStr := make([][]int, len(big)) // colStr[i][j]
	for i := range colStr {
		colStr[i] = make([]int, nf)
	}
	pos := make(map[int]int, len(big))
	for i, a := range big {
		pos[a] = i
	}
	for j, s := range subs {
		st := 1
		for k := len(s) - 1; k >= 0; k-- {
			colStr[pos[s[k]]][j] = st
			st *= dom[s[k]]
		}
		p.fsize[j] = st
	}
	type block struct {
		size int
		str  []int
	}
	var blocks []block
	size := 1
	for i, a := range big {
		if dom[a] == 1 {
			continue
		}
		size *= dom[a]
		if n := len(blocks); n > 0 {
			// Merge with the previous block when every factor either
			// lacks both attributes or holds them adjacently in the same
			// order (so the pair indexes like one attribute).
			same := true
			for j := 0; j < nf; j++ {
				prev, cur := blocks[n-1].str[j], colStr[i][j]
				if (prev == 0) != (cur == 0) || (cur > 0 && prev != cur*dom[a]) {
					same = false
					break
				}
			}
			if same {
				blocks[n-1].size *= dom[a]
				blocks[n-1].str = colStr[i]
				continue
			}
		}
		blocks = append(blocks, block{size: dom[a], str: colStr[i]})
	}
	p.size = size
	if len(blocks) == 0 {
		p.inner = 1
		p.nouter = 1
		return p
	}
	last := blocks[len(blocks)-1]
	p.inner = last.size
	copy(p.istr, last.str)
	blocks = blocks[:len(blocks)-1]
	p.nouter = size / p.inner
	p.dims = make([]int, len(blocks))
	p.str = make([]int, len(blocks)*nf)
	for d, b := range blocks {
		p.dims[d] = b.size
		copy(p.str[d*nf:], b.str)
	}
	return p
}

// start positions the odometer at run o.
func (p *mproj) start(o int, ctr, base []int) {
	nf := p.nf
	for j := 0; j < nf; j++ {
		base[j] = 0
	}
	for d := len(p.dims) - 1; d >= 0; d-- {
		x := o % p.dims[d]
		o /= p.dims[d]
		ctr[d] = x
		if x != 0 {
			st := p.str[d*nf : d*nf+nf]
			for j, s := range st {
				base[j] += x * s
			}
		}
	}
}

// advance moves the odometer to the next run.
func (p *mproj) advance(ctr, base []int) {
	nf := p.nf
	for d := len(p.dims) - 1; d >= 0; d-- {
		st := p.str[d*nf : d*nf+nf]
		ctr[d]++
		if ctr[d] < p.dims[d] {
			for j, s := range st {
				base[j] += s
			}
			return
		}
		ctr[d] = 0
		m := p.dims[d] - 1
		for j, s := range st {
			base[j] -= s * m
		}
	}
}

// scratch holds one worker's odometer state.
type scratch struct {
	ctr        []int
	base       []int
	tmp        []float64
	ones, rest []int
}

func newScratch(maxFactors int) *scratch {
	return &scratch{ctr: make([]int, maxCliqueAttrs), base: make([]int, maxFactors)}
}

// mulRun multiplies run r by factor table f (at base b, run stride is), or
// sets r to it when set is true.
func mulRun(r, f []float64, b, is int, set bool) {
	switch is {
	case 1:
		f = f[b : b+len(r)]
		if set {
			copy(r, f)
			return
		}
		for i := range r {
			r[i] *= f[i]
		}
	case 0:
		c := f[b]
		if set {
			for i := range r {
				r[i] = c
			}
			return
		}
		for i := range r {
			r[i] *= c
		}
	default:
		if set {
			for i := range r {
				r[i] = f[b+i*is]
			}
			return
		}
		for i := range r {
			r[i] *= f[b+i*is]
		}
	}
}

// addRun adds factor table f (at base b, run stride is) into run r, or sets
// r to it when set is true.
func addRun(r, f []float64, b, is int, set bool) {
	switch is {
	case 1:
		f = f[b : b+len(r)]
		if set {
			copy(r, f)
			return
		}
		for i := range r {
			r[i] += f[i]
		}
	case 0:
		c := f[b]
		if set {
			for i := range r {
				r[i] = c
			}
			return
		}
		for i := range r {
			r[i] += c
		}
	default:
		if set {
			for i := range r {
				r[i] = f[b+i*is]
			}
			return
		}
		for i := range r {
			r[i] += f[b+i*is]
		}
	}
}

// reduceRun adds run r into target table t at base b with run stride is.
func reduceRun(r, t []float64, b, is int) {
	switch is {
	case 1:
		t = t[b : b+len(r)]
		for i := range r {
			t[i] += r[i]
		}
	case 0:
		t[b] += sum(r)
	default:
		for i, x := range r {
			t[b+i*is] += x
		}
	}
}

// sum returns the sum of r, with four partial sums to shorten the
// dependency chain.
func sum(r []float64) float64 {
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(r); i += 4 {
		q := r[i : i+4 : i+4]
		s0 += q[0]
		s1 += q[1]
		s2 += q[2]
		s3 += q[3]
	}
	for ; i < len(r); i++ {
		s0 += r[i]
	}
	return (s0 + s1) + (s2 + s3)
}

// upKernel handles runs [lo,hi) of a clique in the upward pass: each run
// is the product of the broadcast factor tables srcs (factors
// 0..len(srcs)-1), stored into dst when dst is not nil, and summed into the
// factor table tgt (factor len(srcs)); when tgt is nil the run sums are
// accumulated and returned.
func (p *mproj) upKernel(dst []float64, srcs [][]float64, tgt []float64, lo, hi int, sc *scratch) float64 {
	ctr, base := sc.ctr, sc.base
	inner := p.inner
	ns := len(srcs)
	total := 0.0
	if cap(sc.tmp) < inner {
		sc.tmp = make([]float64, inner)
	}
	r := sc.tmp[:inner]
	// Factors constant along a run fold into one scalar; the common cases
	// of one or two factors advancing with the run are fused loops.
	ones, rest := sc.split(p.istr[:ns])
	tis := -1
	if tgt != nil {
		tis = p.istr[ns]
	}
	p.start(lo, ctr, base)
	for o := lo; o < hi; o++ {
		if dst != nil {
			r = dst[o*inner : o*inner+inner]
		}
		c := 1.0
		for j, f := range srcs {
			if p.istr[j] == 0 {
				c *= f[base[j]]
			}
		}
		fused := false
		switch {
		case len(rest) > 0 || len(ones) > 2:
			for i := range r {
				r[i] = c
			}
			for _, j := range ones {
				mulRun(r, srcs[j], base[j], 1, false)
			}
			for _, j := range rest {
				mulRun(r, srcs[j], base[j], p.istr[j], false)
			}
		case len(ones) == 0:
			for i := range r {
				r[i] = c
			}
		case len(ones) == 1:
			a := srcs[ones[0]][base[ones[0]]:][:len(r)]
			if tis == 1 {
				t := tgt[base[ns]:][:len(r)]
				for i := range r {
					v := c * a[i]
					r[i] = v
					t[i] += v
				}
				fused = true
			} else {
				for i := range r {
					r[i] = c * a[i]
				}
			}
		default:
			a := srcs[ones[0]][base[ones[0]]:][:len(r)]
			b := srcs[ones[1]][base[ones[1]]:][:len(r)]
			if tis == 1 {
				t := tgt[base[ns]:][:len(r)]
				for i := range r {
					v := c * a[i] * b[i]
					r[i] = v
					t[i] += v
				}
				fused = true
			} else {
				for i := range r {
					r[i] = c * a[i] * b[i]
				}
			}
		}
		if !fused {
			if tgt != nil {
				reduceRun(r, tgt, base[ns], tis)
			} else {
				total += sum(r)
			}
		}
		p.advance(ctr, base)
	}
	return total
}

// split sorts factor indices by run stride: those advancing by one, and
// the others that are not constant along a run.
func (sc *scratch) split(istr []int) (ones, rest []int) {
	ones, rest = sc.ones[:0], sc.rest[:0]
	for j, is := range istr {
		switch is {
		case 0:
		case 1:
			ones = append(ones, j)
		default:
			rest = append(rest, j)
		}
	}
	sc.ones, sc.rest = ones, rest
	return ones, rest
}

// accKernel writes into each run of dst the broadcast sum of srcs.
func (p *mproj) accKernel(dst []float64, srcs [][]float64, lo, hi int, sc *scratch) {
	ctr, base := sc.ctr, sc.base
	inner := p.inner
	p.start(lo, ctr, base)
	for o := lo; o < hi; o++ {
		r := dst[o*inner : o*inner+inner]
		if len(srcs) == 0 {
			for i := range r {
				r[i] = 0
			}
		}
		for j, f := range srcs {
			addRun(r, f, base[j], p.istr[j], j == 0)
		}
		p.advance(ctr, base)
	}
}

// maxKernel raises each cell of tgt (factor fi, pre-filled with -Inf) to
// the maximum of src over the cells mapping to it.
func (p *mproj) maxKernel(src, tgt []float64, fi int, sc *scratch) {
	ctr, base := sc.ctr, sc.base
	inner := p.inner
	p.start(0, ctr, base)
	is := p.istr[fi]
	for o := 0; o < p.nouter; o++ {
		r := src[o*inner : o*inner+inner]
		b := base[fi]
		for i, x := range r {
			if k := b + i*is; x > tgt[k] {
				tgt[k] = x
			}
		}
		p.advance(ctr, base)
	}
}

// expShiftKernel replaces each cell of dst by exp(dst − shift[s]), where s
// is its cell in factor fi, and sums the results into tgt over factor fi.
func (p *mproj) expShiftKernel(dst, shift, tgt []float64, fi int, sc *scratch) {
	ctr, base := sc.ctr, sc.base
	inner := p.inner
	p.start(0, ctr, base)
	is := p.istr[fi]
	for o := 0; o < p.nouter; o++ {
		r := dst[o*inner : o*inner+inner]
		b := base[fi]
		for i, x := range r {
			r[i] = math.Exp(x - shift[b+i*is])
		}
		reduceRun(r, tgt, b, is)
		p.advance(ctr, base)
	}
}

// downKernel handles runs [lo,hi) of a clique in the downward pass: each
// run of dst is multiplied by the factor table scale (factor index
// len(tgts)), or by the scalar when scale is nil, and then summed into each
// target table tgts[j] (factor j).
func (p *mproj) downKernel(dst []float64, tgts [][]float64, scale []float64, scalar float64, lo, hi int, sc *scratch) {
	ctr, base := sc.ctr, sc.base
	inner := p.inner
	nt := len(tgts)
	sis := 0
	if scale != nil {
		sis = p.istr[nt]
	}
	p.start(lo, ctr, base)
	for o := lo; o < hi; o++ {
		r := dst[o*inner : o*inner+inner]
		switch {
		case scale == nil:
			for i := range r {
				r[i] *= scalar
			}
		case sis == 0:
			c := scale[base[nt]]
			for i := range r {
				r[i] *= c
			}
		default:
			mulRun(r, scale, base[nt], sis, false)
		}
		s, haveSum := 0.0, false
		for j, t := range tgts {
			switch is := p.istr[j]; is {
			case 0:
				if !haveSum {
					s, haveSum = sum(r), true
				}
				t[base[j]] += s
			case 1:
				t = t[base[j]:][:len(r)]
				for i, x := range r {
					t[i] += x
				}
			default:
				b := base[j]
				for i, x := range r {
					t[b+i*is] += x
				}
			}
		}
		p.advance(ctr, base)
	}
}

// sumKernel adds every cell of src into tgt over factor 0 (tgt must be
// zeroed by the caller).
func (p *mproj) sumKernel(src, tgt []float64, sc *scratch) {
	ctr, base := sc.ctr, sc.base
	inner := p.inner
	p.start(0, ctr, base)
	is := p.istr[0]
	for o := 0; o < p.nouter; o++ {
		reduceRun(src[o*inner:o*inner+inner], tgt, base[0], is)
		p.advance(ctr, base)
	}
}

// prodKernel multiplies the broadcast factor tables srcs (factors
// 0..len(srcs)-1) cell by cell over the big table and sums the products
// into tgt (factor len(srcs)), which the caller zeroes.
func (p *mproj) prodKernel(srcs [][]float64, tgt []float64, sc *scratch) {
	p.upKernel(nil, srcs, tgt, 0, p.nouter, sc)
}
