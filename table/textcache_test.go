package table

import (
	"strconv"
	"testing"
	"unsafe"
)

func TestTextCacheStrings(t *testing.T) {
	c := newTextCache()
	buf := []byte("F")
	view := unsafe.String(&buf[0], len(buf)) // like a library string into its buffer
	a := c.str(view)
	buf[0] = 'M' // the buffer is reused
	if a != "F" {
		t.Fatalf("the copy changed with the buffer: %q", a)
	}
	b := c.str(view) // "M" now
	if b != "M" || a != "F" {
		t.Fatalf("got %q then %q, want F then M", a, b)
	}
	// A repeated value is the same copy, not a new one.
	x, y := c.str(string([]byte("ward 7"))), c.str(string([]byte("ward 7")))
	if x != "ward 7" || unsafe.StringData(x) != unsafe.StringData(y) {
		t.Fatalf("a repeated value was copied twice")
	}
	// Many distinct values: every one comes back right, whatever they evict.
	for i := range 3 * textSlots {
		s := "v" + strconv.Itoa(i%(textSlots+7))
		if got := c.str(s); got != s {
			t.Fatalf("value %d: got %q, want %q", i, got, s)
		}
	}
	var nilCache *textCache
	if got := nilCache.str(view); got != "M" {
		t.Fatalf("without a cache: %q", got)
	}
}

func TestTextCacheNumbers(t *testing.T) {
	c := newTextCache()
	calls := 0
	format := func(v int64) string { calls++; return FormatInt(v) }
	for _, v := range []int64{5, 5, 5 + textSlots, 5, -3, -3, 1 << 40, 5 + textSlots} {
		if got := c.num(v, format); got != FormatInt(v) {
			t.Fatalf("num(%d) = %q", v, got)
		}
	}
	// 5, 5+4096 (evicts 5), 5 (evicts it back), −3, 2^40, 5+4096: six formats.
	if calls != 6 {
		t.Errorf("%d values formatted, want 6", calls)
	}
	if got := c.num(17, FormatDate); got != "1970-01-18" {
		t.Errorf("a date: %q", got)
	}
}

func TestTextCacheTurnsOff(t *testing.T) {
	// Values that never repeat: after one window the cache is bypassed.
	c := newTextCache()
	for i := range textWindow {
		if s := strconv.Itoa(i); c.str(s) != s {
			t.Fatal("wrong value")
		}
	}
	if !c.off {
		t.Fatal("still on after a window without a hit")
	}
	if s := c.str("after"); s != "after" {
		t.Fatalf("bypassed: %q", s)
	}
	// Values that repeat keep it on.
	c = newTextCache()
	for i := range 3 * textWindow {
		if s := strconv.Itoa(i % 10); c.str(s) != s {
			t.Fatal("wrong value")
		}
	}
	if c.off {
		t.Fatal("turned off although values repeat")
	}
}
