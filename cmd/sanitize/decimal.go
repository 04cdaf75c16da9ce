package main

import (
	"errors"
	"strconv"
)

// decimal is a flag's integer written in decimal digits only: pflag's own integer
// flags also read 0x10, 0o10 and 1_000, and read 010 as octal (8), so that a --seed
// written with a leading zero would silently name another table.
type decimal[T int | uint64] struct{ v *T }

// errNotDecimal is the error of a flag value that is not decimal digits.
var errNotDecimal = errors.New("not a decimal number")

// Set parses s as a decimal number that T holds.
func (d decimal[T]) Set(s string) error {
	neg := len(s) > 1 && s[0] == '-'
	digits := s
	if neg {
		digits = s[1:]
	}
	for _, r := range digits {
		if r < '0' || r > '9' {
			return errNotDecimal
		}
	}
	switch p := any(d.v).(type) {
	case *int:
		n, err := strconv.ParseInt(s, 10, strconv.IntSize)
		if err != nil {
			return err
		}
		*p = int(n)
	case *uint64:
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return err
		}
		*p = n
	}
	return nil
}

// String is the value in decimal.
func (d decimal[T]) String() string {
	if d.v == nil {
		return "0"
	}
	switch p := any(d.v).(type) {
	case *int:
		return strconv.Itoa(*p)
	case *uint64:
		return strconv.FormatUint(*p, 10)
	}
	return ""
}

// Type names the flag's value in the help.
func (decimal[T]) Type() string {
	var zero T
	if _, ok := any(zero).(int); ok {
		return "int"
	}
	return "uint"
}
