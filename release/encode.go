package release

import (
	"context"
	"errors"
	"math/bits"
	"runtime"
	"slices"
	"strings"

	"golang.org/x/sync/errgroup"

	"sanitizer/fault"
	"sanitizer/generalize"
	"sanitizer/internal/safe"
	"sanitizer/schema"
	"sanitizer/table"
)

// dictionary numbers the distinct values of one column in order of first appearance.
// The number of every record is kept in chunks of 8 bits while the column has at most
// 256 values, 16 bits up to 65,536 and 32 bits beyond (earlier chunks are widened when
// the column outgrows them), so that pass 1 holds about what the encoded column will:
// no slice is ever copied to grow.
type dictionary struct {
	// listed, when not nil, is the hierarchy file that must list every value: a value
	// it does not is an error as soon as it appears.
	listed *generalize.Hierarchy
	index  map[string]int32
	cache  *[1 << dictCacheBits]cached // in front of index (lookup)
	// keys numbers the keys seen of a column given as keys (addKeys), keyCache in
	// front of it; keyText is a key's text.
	keys     map[int64]int32
	keyCache *[1 << dictCacheBits]keyCached
	keyText  func(int64) string
	// block is, for a batch given as indexes into its dictionary (addIndexes), the
	// number of each of that dictionary's values (−1: not met yet).
	block []int32
	// ids, instead of index, values and first, numbers the privacy unit's ids
	// compactly (idTable); emptyRow is then the first record whose id is empty (−1:
	// none).
	ids      *idTable
	emptyRow int
	values   []string
	first    []int // 0-based record of each value's first appearance
	w8       [][]uint8
	w16      [][]uint16
	w32      [][]int32
	n        int // records numbered
}

const dictChunk = 1 << 16

// widen converts the chunks to the width that holds c.
func (d *dictionary) widen(c int32) {
	switch {
	case c > 0xFFFF && d.w32 == nil:
		var w32 [][]int32
		for r := 0; r < d.n; r += dictChunk {
			ch := make([]int32, 0, dictChunk)
			for i := r; i < min(r+dictChunk, d.n); i++ {
				ch = append(ch, d.code(i))
			}
			w32 = append(w32, ch)
		}
		d.w8, d.w16, d.w32 = nil, nil, w32
	case c > 0xFF && d.w16 == nil && d.w32 == nil:
		for _, ch := range d.w8 {
			w := make([]uint16, len(ch), dictChunk)
			for i, v := range ch {
				w[i] = uint16(v)
			}
			d.w16 = append(d.w16, w)
		}
		d.w8 = nil
	}
}

// put records the number of the next record.
func (d *dictionary) put(c int32) {
	if c > 0xFF {
		d.widen(c)
	}
	last := d.n / dictChunk
	switch {
	case d.w32 != nil:
		if last == len(d.w32) {
			d.w32 = append(d.w32, make([]int32, 0, dictChunk))
		}
		d.w32[last] = append(d.w32[last], c)
	case d.w16 != nil || c > 0xFF:
		if last == len(d.w16) {
			d.w16 = append(d.w16, make([]uint16, 0, dictChunk))
		}
		d.w16[last] = append(d.w16[last], uint16(c))
	default:
		if last == len(d.w8) {
			d.w8 = append(d.w8, make([]uint8, 0, dictChunk))
		}
		d.w8[last] = append(d.w8[last], uint8(c))
	}
	d.n++
}

// code returns the number of record r.
func (d *dictionary) code(r int) int32 {
	switch {
	case d.w32 != nil:
		return d.w32[r/dictChunk][r%dictChunk]
	case d.w16 != nil:
		return int32(d.w16[r/dictChunk][r%dictChunk])
	}
	return int32(d.w8[r/dictChunk][r%dictChunk])
}

// leafCodes returns the leaf code of every record (leafOf maps a number to its leaf;
// nil: the numbers are the leaves) in the narrowest width for leaves, and frees the
// numbers chunk by chunk as it goes.
func (d *dictionary) leafCodes(leaves int, leafOf []int32) generalize.Codes {
	out := generalize.NewCodes(d.n, leaves)
	for r := range d.n {
		c := d.code(r)
		if leafOf != nil {
			c = leafOf[c]
		}
		out.Set(r, c)
		if (r+1)%dictChunk == 0 {
			k := r / dictChunk
			switch {
			case d.w32 != nil:
				d.w32[k] = nil
			case d.w16 != nil:
				d.w16[k] = nil
			default:
				d.w8[k] = nil
			}
		}
	}
	d.w8, d.w16, d.w32 = nil, nil, nil
	return out
}

func newDictionary() *dictionary { return &dictionary{index: map[string]int32{}} }

// valueKey is a value's length and its first and last 8 bytes (fewer for a shorter
// one): all of a value of up to 16 bytes, which it tells from every other value.
type valueKey struct {
	n      int
	w0, w1 uint64
}

// keyOf is v's valueKey.
func keyOf(v string) valueKey {
	n := len(v)
	if n >= 8 {
		return valueKey{n, le64(v[:8]), le64(v[n-8:])}
	}
	var w uint64
	for i := range n {
		w |= uint64(v[i]) << (8 * i)
	}
	return valueKey{n, w, 0}
}

// le64 reads 8 bytes as a little-endian word.
func le64(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// slot is the key's place in a dictionary's cache.
func (k valueKey) slot() uint {
	x := k.w0 ^ bits.RotateLeft64(k.w1, 29) ^ uint64(k.n)*0x9e3779b97f4a7c15
	x ^= x >> 31
	return uint((x * 0xbf58476d1ce4e5b9) >> (64 - dictCacheBits))
}

// dictCacheBits sizes a dictionary's cache: 1,024 values recently numbered, by key.
const dictCacheBits = 10

// cached is a value in a dictionary's cache and its number (−1: an empty slot).
type cached struct {
	key  valueKey
	code int32
}

// lookup returns the number of v if the dictionary has it, from the cache in front of
// the index: a value of up to 16 bytes is told by its key alone, a longer one is
// compared too. The cache is filled as values are looked up.
func (d *dictionary) lookup(v string) (int32, bool) {
	if d.ids != nil {
		c, ok, _ := d.ids.find(v)
		return c, ok
	}
	if d.cache == nil {
		d.cache = new([1 << dictCacheBits]cached)
		for i := range d.cache {
			d.cache[i].code = -1
		}
	}
	k := keyOf(v)
	e := &d.cache[k.slot()]
	if e.code >= 0 && e.key == k && (k.n <= 16 || d.values[e.code] == v) {
		return e.code, true
	}
	c, ok := d.index[v]
	if ok {
		*e = cached{k, c}
	}
	return c, ok
}

// add numbers field col of the records of b (given as text, or as keys when b has
// them); nullAs is what a null reads as (nil: a null is an error, which names the
// record).
func (d *dictionary) add(b *table.Batch, col int, nullAs *string, emptyNull bool) error {
	switch {
	case b.Dict != nil && b.Dict[col] != nil:
		return d.addIndexes(b, col, nullAs)
	case b.Keys != nil && b.Keys[col] != nil:
		return d.addKeys(b, col, nullAs)
	}
	for i := range b.N {
		v := b.Fields[i*b.Width+col]
		if b.Null(i, col) || (emptyNull && v == "") {
			if nullAs == nil {
				return errNull(b.First + i)
			}
			v = *nullAs
		}
		c, err := d.number(v, b.First+i)
		if err != nil {
			return err
		}
		d.put(c)
	}
	return nil
}

// number returns the number of value v, first seen at record row if it is new.
func (d *dictionary) number(v string, row int) (int32, error) {
	if d.ids != nil {
		c, added, err := d.ids.number(v)
		if added && v == "" {
			d.emptyRow = row
		}
		return c, err
	}
	c, ok := d.lookup(v)
	if ok {
		return c, nil
	}
	if d.listed != nil {
		if _, ok := d.listed.Leaf(v); !ok {
			return 0, errUnlisted(row)
		}
	}
	v = strings.Clone(v) // not the input's block the field may point into
	c = int32(len(d.values))
	d.index[v] = c
	d.values = append(d.values, v)
	d.first = append(d.first, row)
	return c, nil
}

// addKeys is add for a column b gives as keys (table.AsKey): a key is looked up among
// the keys seen, and only a new one is turned into its text (d.keyText) and numbered
// as text is, so that a null read as a value's text gets that value's number.
func (d *dictionary) addKeys(b *table.Batch, col int, nullAs *string) error {
	if d.keys == nil {
		d.keys = map[int64]int32{}
		d.keyCache = new([1 << dictCacheBits]keyCached)
	}
	for i, k := range b.Keys[col][:b.N] {
		var (
			c   int32
			err error
		)
		switch e := &d.keyCache[keySlot(k)]; {
		case b.Null(i, col):
			if nullAs == nil {
				return errNull(b.First + i)
			}
			c, err = d.number(*nullAs, b.First+i)
		case e.set && e.key == k:
			c = e.code
		default:
			var ok bool
			if c, ok = d.keys[k]; !ok {
				if c, err = d.number(d.keyText(k), b.First+i); err != nil {
					return err
				}
				d.keys[k] = c
			}
			*e = keyCached{k, c, true}
		}
		if err != nil {
			return err
		}
		d.put(c)
	}
	return nil
}

// addIndexes is add for a column b gives as indexes into the batch's dictionary of its
// values (a dictionary-encoded Parquet column asked for as keys): each value of that
// dictionary is numbered as text is, once, at the first record that holds it, and
// every record's number is then found by its index.
func (d *dictionary) addIndexes(b *table.Batch, col int, nullAs *string) error {
	dict := b.Dict[col]
	d.block = slices.Grow(d.block[:0], len(dict))[:len(dict)]
	for k := range d.block {
		d.block[k] = -1
	}
	for i, k := range b.Index[col][:b.N] {
		var (
			c   int32
			err error
		)
		switch {
		case b.Null(i, col):
			if nullAs == nil {
				return errNull(b.First + i)
			}
			c, err = d.number(*nullAs, b.First+i)
		case d.block[k] >= 0:
			c = d.block[k]
		default:
			c, err = d.number(dict[k], b.First+i)
			d.block[k] = c
		}
		if err != nil {
			return err
		}
		d.put(c)
	}
	return nil
}

// keyCached is a key in a dictionary's key cache and its number.
type keyCached struct {
	key  int64
	code int32
	set  bool
}

// keySlot is k's place in a dictionary's key cache.
func keySlot(k int64) uint {
	return uint((uint64(k) * 0x9e3779b97f4a7c15) >> (64 - dictCacheBits))
}

// errNull is a null where the configuration gives no value for it, at a record.
type errNull int

func (e errNull) Error() string { return "null" }

// errUnlisted is a value its hierarchy file does not list, at a record.
type errUnlisted int

func (e errUnlisted) Error() string { return "value not listed" }

// unlistedError names the file, row, column and hierarchy of a value the hierarchy
// file does not list, never the value.
func unlistedError(p *plan, row int, name string, h *generalize.Hierarchy) error {
	return p.Config.Errorf(hierarchyKey(p.Config, name), "%s: column %q: value not listed in hierarchy %s", p.At(row), name, h.Source())
}

// nullError names the file, row and column of a null the configuration gives no value
// for, at the column's key.
func nullError(p *plan, row int, name string) error {
	return p.Config.Errorf("columns."+name+".null-as", "%s: column %q: null value (set columns.%s.null-as to the value a null stands for)", p.At(row), name, name)
}

// encode is pass 1: it streams the quasi-identifier columns of the input, numbers their
// values (one goroutine per column), then turns the numbers into leaf codes of each
// column's hierarchy. fileHier holds the hierarchies loaded from files (nil for
// builders). The raw values are dropped once encoded.
//
// The sensitive columns that l-diversity or t-closeness protect (prot) are read in the
// same pass, numbered as their distance needs and added to the table. So are the held
// columns (see heldColumn), for pass 2.
func encode(ctx context.Context, p *plan, src table.Source, fileHier []*generalize.Hierarchy, prot []*protected, held []*heldColumn, sub *subsetFlags) (*generalize.Table, error) {
	r := newPass1Reader(p, src, fileHier, prot, held, sub)
	g, ctx := errgroup.WithContext(ctx)
	in := make(chan *table.Batch, 4)
	g.Go(safe.Go(func() error { return table.StreamAs(ctx, src, r.cols, r.forms(), in) }))
	for i := range r.q {
		g.Go(safe.Go(func() error { return r.readKey(i) }))
	}
	for k, h := range held {
		g.Go(safe.Go(func() error { return r.readHeld(k, h) }))
	}
	if sub != nil {
		g.Go(safe.Go(func() error { return r.readSubset(sub) }))
	}
	g.Go(safe.Go(func() error { return r.fanOut(ctx, in) }))
	if err := g.Wait(); err != nil {
		return nil, err
	}
	if src.Rows() == 0 {
		return nil, fault.BadInput("%s: no records", p.Input)
	}
	return r.table(src.Rows(), prot, fileHier)
}

// pass1Reader is pass 1's reading of the input: the columns it reads (the
// quasi-identifiers, the protected sensitive columns, the held columns, a research
// subset's flags, in that order), a channel of batches for each, and what each
// column's reader found.
type pass1Reader struct {
	p       *plan
	cols    []int           // input positions
	confs   []schema.Column // of the first q (the keyed columns)
	q       int             // quasi-identifiers, protected columns and the unit: read as keys
	unit    int             // the privacy unit's keyed column (−1: none)
	dicts   []*dictionary   // per keyed column, its values numbered
	colErr  []error         // p.collect: each keyed column's first error
	heldErr []error         // p.collect: each held column's first error
	chans   []chan *table.Batch
}

// newPass1Reader lays out pass 1's columns and their dictionaries and channels.
func newPass1Reader(p *plan, src table.Source, fileHier []*generalize.Hierarchy, prot []*protected, held []*heldColumn, sub *subsetFlags) *pass1Reader {
	r := &pass1Reader{p: p, cols: slices.Clone(p.Quasi), confs: slices.Clone(p.QuasiCfg), unit: -1}
	for _, s := range prot {
		r.cols, r.confs = append(r.cols, s.pos), append(r.confs, *s.conf)
	}
	if u := p.Config.Privacy.Unit; u != nil {
		// Its position was checked by loadTable; a null is an error (no null-as).
		r.unit = len(r.cols)
		r.cols, r.confs = append(r.cols, slices.Index(p.Header, u.Column)), append(r.confs, schema.Column{Name: u.Column, Role: schema.Identifier})
	}
	r.q = len(r.cols)
	for _, h := range held {
		r.cols = append(r.cols, h.pos)
	}
	if sub != nil {
		r.cols = append(r.cols, sub.pos)
	}
	r.dicts, r.colErr, r.heldErr = make([]*dictionary, r.q), make([]error, r.q), make([]error, len(held))
	srcCols := src.Columns()
	for i := range r.q {
		r.dicts[i] = newDictionary()
		if i == r.unit {
			r.dicts[i] = &dictionary{ids: newIDTable(), emptyRow: -1}
		}
		r.dicts[i].keyText = srcCols[r.cols[i]].KeyText
		if i < len(fileHier) {
			r.dicts[i].listed = fileHier[i] // pass 1 stops at the first value not listed
		}
	}
	r.chans = make([]chan *table.Batch, len(r.cols))
	for i := range r.chans {
		r.chans[i] = make(chan *table.Batch, 4)
	}
	return r
}

// forms are the forms the source streams the columns in: the keyed columns as keys
// where the source has them.
func (r *pass1Reader) forms() []table.Form {
	forms := make([]table.Form, len(r.cols))
	for i := range r.q {
		forms[i] = table.AsKey
	}
	return forms
}

// readKey numbers the values of keyed column i as its batches come. Its first error
// ends the run, or (p.collect) is kept while the other columns read on.
func (r *pass1Reader) readKey(i int) error {
	col := r.confs[i]
	for b := range r.chans[i] {
		if r.colErr[i] != nil {
			continue // p.collect: the column is at fault, the others read on
		}
		// A person's id must be there: an empty one reads as a null, which is an error.
		emptyNull := r.p.EmptyNull[r.cols[i]] || i == r.unit
		if err := r.dicts[i].add(b, i, col.Null, emptyNull); err != nil {
			var (
				en errNull
				eu errUnlisted
			)
			switch {
			case errors.As(err, &en) && i == r.unit:
				err = unitMissing(r.p, int(en), col.Name)
			case errors.As(err, &en):
				err = nullError(r.p, int(en), col.Name)
			case errors.As(err, &eu):
				err = unlistedError(r.p, int(eu), col.Name, r.dicts[i].listed)
			}
			if !r.p.collect {
				return err
			}
			r.colErr[i] = err
			continue
		}
		if i == 0 {
			r.p.progress.AddRead(b.N)
		}
	}
	return nil
}

// readHeld holds held column k's values as its batches come, until it lets them go
// (pass 2 then reads them).
func (r *pass1Reader) readHeld(k int, h *heldColumn) error {
	f := r.q + k
	for b := range r.chans[f] {
		if h.d == nil {
			continue // let go: pass 2 reads it
		}
		if err := h.add(r.p, b, f); errors.Is(err, errLetGo) {
			h.letGo()
		} else if err != nil {
			if !r.p.collect {
				return err
			}
			r.heldErr[k] = err
			h.letGo()
		}
	}
	h.finish()
	return nil
}

// readSubset reads the research subset's flags as their batches come.
func (r *pass1Reader) readSubset(sub *subsetFlags) error {
	f := len(r.cols) - 1
	for b := range r.chans[f] {
		if err := sub.add(r.p, b, f); err != nil {
			return err
		}
	}
	return nil
}

// fanOut hands every batch the source streams to every column's reader, and closes
// their channels at the end.
func (r *pass1Reader) fanOut(ctx context.Context, in <-chan *table.Batch) error {
	defer func() {
		for _, c := range r.chans {
			close(c)
		}
	}()
	for b := range in {
		for _, c := range r.chans {
			select {
			case c <- b:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
	return nil
}

// table is the encoded table of rows records from the columns read: each
// quasi-identifier's codes at its hierarchy's leaves and each protected column's
// numbers. With p.collect, it holds the columns read without error, and the error
// lists every column's.
func (r *pass1Reader) table(rows int, prot []*protected, fileHier []*generalize.Hierarchy) (*generalize.Table, error) {
	p := r.p
	t := &generalize.Table{Rows: rows}
	var errs schema.ErrorList
	cols, colErrs, err := r.quasiColumns(fileHier)
	if err != nil {
		return nil, err
	}
	for i, c := range cols {
		if err := colErrs[i]; err != nil {
			if !p.collect {
				return nil, err
			}
			errs.Add(err)
			continue
		}
		t.Columns = append(t.Columns, c)
	}
	for i, s := range prot {
		err := r.colErr[len(p.Quasi)+i]
		if err == nil {
			err = addSensitive(t, p, s, r.dicts[len(p.Quasi)+i])
		}
		if err != nil && !p.collect {
			return nil, err
		}
		errs.Add(err)
	}
	if r.unit >= 0 {
		err := r.colErr[r.unit]
		if err == nil {
			err = addUnit(t, p, r.confs[r.unit].Name, r.dicts[r.unit])
		}
		if err != nil && !p.collect {
			return nil, err
		}
		errs.Add(err)
		r.dicts[r.unit] = nil
	}
	for _, err := range r.heldErr {
		errs.Add(err)
	}
	return t, errs.Err()
}

// addUnit adds the privacy unit, whose ids d numbers, to t: every record's person. An
// id that is empty (read as a value, as Parquet's and Arrow's strings are) is refused
// as a missing one is.
func addUnit(t *generalize.Table, p *plan, name string, d *dictionary) error {
	if d.emptyRow >= 0 {
		return unitMissing(p, d.emptyRow, name)
	}
	t.Unit = &generalize.Unit{Persons: d.ids.len(), Codes: d.leafCodes(d.ids.len(), nil)}
	if p.seriesKey != nil {
		var err error
		if p.persons, err = personDigests(p.seriesKey, d.ids); err != nil {
			return fault.Internalf("the persons' digests: %w", err)
		}
	}
	return nil
}

// unitMissing is the error of a record without its person's id, naming the file, the
// record and the column.
func unitMissing(p *plan, row int, name string) error {
	return p.Config.Errorf("privacy.privacy-unit.column", "%s: column %q: no person id: with privacy.privacy-unit every record must name its person", p.At(row), name)
}

// quasiColumns returns every quasi-identifier's column of the table, or its error
// (the first the pass found in it, or its hierarchy's), in the plan's order. The
// columns are made on as many goroutines as there are cores, a column each: every
// column's codes take a pass over all records (0.5 s for 10M records and 8 columns on
// one core), and at most one column per core holds its dictionary's numbers and its
// codes at once. The error returned is a panic's.
func (r *pass1Reader) quasiColumns(fileHier []*generalize.Hierarchy) ([]generalize.Column, []error, error) {
	p := r.p
	cols := make([]generalize.Column, len(p.QuasiCfg))
	errs := make([]error, len(p.QuasiCfg))
	var g errgroup.Group
	g.SetLimit(runtime.GOMAXPROCS(0))
	for i, col := range p.QuasiCfg {
		if errs[i] = r.colErr[i]; errs[i] != nil {
			continue
		}
		d := r.dicts[i]
		r.dicts[i] = nil
		g.Go(safe.Go(func() error {
			cols[i], errs[i] = quasiColumn(p, col, d, fileHier[i])
			return nil
		}))
	}
	if err := g.Wait(); err != nil {
		return nil, nil, err
	}
	return cols, errs, nil
}

// quasiColumn is quasi-identifier col, whose values d numbers: its hierarchy and its
// records' leaf codes; fromFile is its hierarchy file's (nil: built from the values).
func quasiColumn(p *plan, col schema.Column, d *dictionary, fromFile *generalize.Hierarchy) (generalize.Column, error) {
	h, leafOf, err := hierarchyFor(p, col, d, fromFile)
	if err != nil {
		return generalize.Column{}, err
	}
	return generalize.Column{Name: col.Name, Hierarchy: h, Codes: d.leafCodes(h.Leaves(), leafOf)}, nil
}

// addSensitive adds protected column s, whose values d numbers, to t, with the input's
// count of each value.
func addSensitive(t *generalize.Table, p *plan, s *protected, d *dictionary) error {
	if err := s.buildHierarchy(p, d); err != nil {
		return err
	}
	if err := s.number(func(i int) string { return p.At(d.first[i]) }, d.values); err != nil {
		return err
	}
	num := make([]int32, len(d.values))
	for c, v := range d.values {
		num[c] = s.index[v]
	}
	codes := d.leafCodes(len(s.values), num)
	s.counts = make([]int64, len(s.values))
	for r := range t.Rows {
		s.counts[codes.At(r)]++
	}
	t.Sensitive = append(t.Sensitive, generalize.Sensitive{Name: s.conf.Name, Values: len(s.values), Codes: codes, Tree: s.tree})
	return nil
}

// hierarchyFor returns the hierarchy of a quasi-identifier and, for a file hierarchy,
// the leaf code of every dictionary value (nil when the dictionary codes are the leaf
// codes, as for built hierarchies). Errors name the column, the hierarchy and the row,
// never the value.
func hierarchyFor(p *plan, col schema.Column, d *dictionary, fromFile *generalize.Hierarchy) (*generalize.Hierarchy, []int32, error) {
	if fromFile != nil {
		leafOf := make([]int32, len(d.values))
		for c, v := range d.values {
			leaf, ok := fromFile.Leaf(v)
			if !ok {
				return nil, nil, unlistedError(p, d.first[c], col.Name, fromFile)
			}
			leafOf[c] = leaf
		}
		return fromFile, leafOf, nil
	}
	h, err := buildColumnHierarchy(col, d.values)
	if err != nil {
		var ve *generalize.ValueError
		if errors.As(err, &ve) {
			return nil, nil, p.Config.Errorf("columns."+col.Name+".hierarchy", "%s: column %q: %s", p.At(d.first[ve.Index]), col.Name, ve.Msg)
		}
		return nil, nil, err
	}
	return h, nil, nil
}

// buildColumnHierarchy builds the hierarchy col's configuration describes (intervals, a
// mask or dates) over values, the column's distinct values: value i is leaf i. A value
// the builder cannot read is a *generalize.ValueError naming its index, never the
// value. A release on another engine builds it from every part's values alike.
func buildColumnHierarchy(col schema.Column, values []string) (*generalize.Hierarchy, error) {
	spec := col.Hierarchy
	source := "columns." + col.Name + ".hierarchy"
	switch {
	case spec == nil:
	case spec.Intervals != nil:
		return generalize.BuildIntervals(source+".intervals", values, col.Type, spec.Intervals)
	case spec.Mask != nil:
		return generalize.BuildMask(source+".mask", values, *spec.Mask)
	case spec.Date != nil:
		return generalize.BuildDate(source+".date", values, spec.Date)
	}
	return nil, fault.BadInput("%s: no hierarchy", source)
}
