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
// below BetaBits. src is crypto/rand.Reader in a release; a read error is returned.
func (p Params) Sample(n int, src io.Reader) ([]bool, error) {
	if n < 0 || p.BetaBits == 0 || p.BetaBits > 1<<53 {
		return nil, fmt.Errorf("%w: a sample of %d records with β·2^53 = %d", ErrParams, n, p.BetaBits)
	}
	keep := make([]bool, n)
	buf := make([]byte, 8*min(n, sampleChunk))
	for lo := 0; lo < n; lo += sampleChunk {
		m := min(sampleChunk, n-lo)
		if _, err := io.ReadFull(src, buf[:8*m]); err != nil {
			return nil, fmt.Errorf("safepub: sampling: reading the random source: %w", err)
		}
		for i := range m {
			u := binary.LittleEndian.Uint64(buf[8*i:]) >> 11
			keep[lo+i] = u < p.BetaBits
		}
	}
	return keep, nil
}
