package safepub

import (
	"encoding/binary"
	"fmt"
	"io"
)

// sampleChunk is the records whose random words Sample reads at once.
const sampleChunk = 4096

// Sample draws SafePub's sample of a table of n records: record i is kept (keep[i])
// with probability exactly BetaBits/2^53, independently of every other, when a
// uniform integer below 2^53 (the top 53 bits of 8 bytes of src, little-endian) is
// below BetaBits. A read error is returned.
func (p Params) Sample(n int, src io.Reader) ([]bool, error) {
	if n < 0 {
		return nil, fmt.Errorf("%w: a sample of %d records", ErrParams, n)
	}
	keep := make([]bool, n)
	if err := p.SampleInto(keep, src); err != nil {
		return nil, err
	}
	return keep, nil
}

// SampleInto is Sample of len(keep) records, drawn into keep.
func (p Params) SampleInto(keep []bool, src io.Reader) error {
	if p.BetaBits == 0 || p.BetaBits > 1<<53 {
		return fmt.Errorf("%w: a sample with β·2^53 = %d", ErrParams, p.BetaBits)
	}
	n := len(keep)
	buf := make([]byte, 8*min(n, sampleChunk))
	for lo := 0; lo < n; lo += sampleChunk {
		m := min(sampleChunk, n-lo)
		if _, err := io.ReadFull(src, buf[:8*m]); err != nil {
			return fmt.Errorf("safepub: sampling: reading the random source: %w", err)
		}
		for i := range m {
			u := binary.LittleEndian.Uint64(buf[8*i:]) >> 11
			keep[lo+i] = u < p.BetaBits
		}
	}
	return nil
}
