package verify

import (
	"fmt"
	"hash/maphash"
	"maps"
	"slices"
	"sync"
)

// DictionaryUse holds a release to carrying only the values its records hold: every
// value of every dictionary of every column (a Parquet column chunk's dictionary page,
// an Arrow dictionary batch), in every file of the release, must be the value of one
// of the release's records in that column. A dictionary entry no record uses may be a
// value only a suppressed record had (a writer that copied an input's dictionary
// whole). A dictionary shared by several chunks or parts (a release's labels) may hold
// a value only another chunk's or part's records hold: what counts is the release.
//
// The files of the release report to it as they are read (ParquetFile and ArrowFile's
// RequireUsedDictionaries): for each dictionary, the values its records used and the
// values they did not; Check then decides, once every record has been read. A value
// counts as held when records reached it through a dictionary: one held only by a
// plain-encoded page of another chunk is not seen, and is taken as unused (a
// violation, never a value let pass). Memory grows with the dictionaries' distinct
// values, which writers bound (a Parquet dictionary page falls back to plain pages
// past a size), eight bytes each: values are kept as 64-bit hashes (a value taken for
// another by a collision, one chance in 2⁶⁴ per pair, is the only way one could pass).
type DictionaryUse struct {
	mu   sync.Mutex
	seed maphash.Seed
	cols map[string]*columnUse
}

// columnUse is what the dictionaries of one column hold, by the values' hashes.
type columnUse struct {
	held   map[uint64]struct{} // values records used
	unused map[uint64]struct{} // values a dictionary held that its records did not use
	opaque int                 // dictionary entries whose values were never read
}

// NewDictionaryUse starts the dictionaries' account of one release.
func NewDictionaryUse() *DictionaryUse {
	return &DictionaryUse{seed: maphash.MakeSeed(), cols: map[string]*columnUse{}}
}

// column is the account of the named column.
func (u *DictionaryUse) column(name string) *columnUse {
	c := u.cols[name]
	if c == nil {
		c = &columnUse{held: map[uint64]struct{}{}, unused: map[uint64]struct{}{}}
		u.cols[name] = c
	}
	return c
}

// dictionary records one dictionary of column col with n entries: value(i) is entry
// i's text (ok false for a null entry, which holds no value), used(i) whether a record
// used it.
func (u *DictionaryUse) dictionary(col string, n int, value func(i int) (string, bool, error), used func(i int) bool) error {
	held, unused := make([]uint64, 0, n), []uint64(nil)
	for i := range n {
		v, ok, err := value(i)
		if err != nil {
			return fmt.Errorf("dictionary: %w", err)
		}
		switch h := maphash.String(u.seed, v); {
		case !ok:
		case used(i):
			held = append(held, h)
		default:
			unused = append(unused, h)
		}
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	c := u.column(col)
	for _, h := range held {
		c.held[h] = struct{}{}
	}
	for _, h := range unused {
		c.unused[h] = struct{}{}
	}
	return nil
}

// unread records n dictionary entries of column col (col "" when the file does not say
// which) whose values were never read: a dictionary no record refers to.
func (u *DictionaryUse) unread(col string, n int) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.column(col).opaque += n
}

// Check reports a *Violation naming the first column (in name order) one of whose
// dictionaries holds a value no record of the release holds, and how many such values
// there are; never the values.
func (u *DictionaryUse) Check() error {
	u.mu.Lock()
	defer u.mu.Unlock()
	for _, name := range slices.Sorted(maps.Keys(u.cols)) {
		c := u.cols[name]
		missing := 0
		for v := range c.unused {
			if _, ok := c.held[v]; !ok {
				missing++
			}
		}
		where := fmt.Sprintf("column %q", name)
		if name == "" {
			where = "a dictionary of no column the records read"
		}
		switch {
		case c.opaque > 0:
			return &Violation{Msg: fmt.Sprintf("%s: %d dictionary entries that no record refers to: a release may carry only the values its records hold", where, c.opaque)}
		case missing > 0:
			return &Violation{Msg: fmt.Sprintf("%s: its dictionaries hold %d values that no released record holds: a release may carry only the values its records hold", where, missing)}
		}
	}
	return nil
}
