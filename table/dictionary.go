package table

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"sanitizer/fault"
)

// ReleasedType is the type a Parquet or Arrow release writes a kept column of input
// type t as: t itself, but a dictionary-encoded column as its values' type. An input's
// dictionary may hold values no released record holds (values only suppressed records
// held, or no record), which a release must never carry: such a column is written as
// plain values, which a Parquet writer dictionary-encodes anew from the values written.
func ReleasedType(t arrow.DataType) arrow.DataType {
	if d, ok := t.(*arrow.DictionaryType); ok {
		return d.ValueType
	}
	return t
}

// Undictionary returns the values of the dictionary array a at rows (ascending
// indexes; nil: every row) as a plain array of its dictionary's type (string or large
// string), so that none of the dictionary's other values goes with them.
func Undictionary(a arrow.Array, rows []int) (arrow.Array, error) {
	d, ok := a.(*array.Dictionary)
	if !ok {
		return nil, fault.Internalf("a %s array where a dictionary array was expected", a.DataType())
	}
	switch dict := d.Dictionary().(type) {
	case *array.String:
		b := array.NewStringBuilder(memory.DefaultAllocator)
		defer b.Release()
		appendDictionaryValues(b, d, dict, rows)
		return b.NewArray(), nil
	case *array.LargeString:
		b := array.NewLargeStringBuilder(memory.DefaultAllocator)
		defer b.Release()
		appendDictionaryValues(b, d, dict, rows)
		return b.NewArray(), nil
	}
	return nil, fault.Internalf("a dictionary of %s values", d.Dictionary().DataType())
}

// appendDictionaryValues appends to b the values of d at rows (nil: every row), whose
// dictionary is dict.
func appendDictionaryValues[B interface {
	Append(string)
	AppendNull()
	Reserve(int)
}](b B, d *array.Dictionary, dict arrowValues[string], rows []int) {
	n := d.Len()
	if rows != nil {
		n = len(rows)
	}
	b.Reserve(n)
	for k := range n {
		i := k
		if rows != nil {
			i = rows[k]
		}
		if d.IsNull(i) {
			b.AppendNull()
			continue
		}
		v := d.GetValueIndex(i)
		if dict.IsNull(v) {
			b.AppendNull()
			continue
		}
		b.Append(dict.Value(v))
	}
}
