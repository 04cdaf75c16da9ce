package safepub

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"
)

// Purpose names what a sample is drawn for: each purpose has streams of its own, so
// that the search's sample and the released one are independent.
type Purpose uint8

// The purposes of a SafePub release's samples.
const (
	// PurposeSearch is the data-dependent search's own sample.
	PurposeSearch Purpose = iota + 1
	// PurposeRelease is the sample the release is made from.
	PurposeRelease
)

func (p Purpose) String() string {
	switch p {
	case PurposeSearch:
		return "search"
	case PurposeRelease:
		return "release"
	}
	return fmt.Sprintf("purpose(%d)", uint8(p))
}

// StreamBlock is the records one stream draws for: a table's part is sampled in blocks
// of this many records, each from its own stream, so that the blocks of every part
// can be drawn at once on any number of cores (or machines) with the same result.
const StreamBlock = 1 << 20

// Streams are a run's random streams for its samples: the stream of a purpose, a
// part and a block of that part is ChaCha8 (a cryptographically strong generator,
// math/rand/v2) keyed by HMAC-SHA256 of the purpose, the part and the block under a
// key of 32 bytes drawn once per run from the operating system's cryptographic
// source. Distinct (purpose, part, block) give independent streams; the key is the
// secret of the whole sample and is never written anywhere.
type Streams struct{ key [32]byte }

// NewStreams draws a run's key from src (crypto/rand.Reader in a release).
func NewStreams(src io.Reader) (Streams, error) {
	var s Streams
	if _, err := io.ReadFull(src, s.key[:]); err != nil {
		return s, fmt.Errorf("safepub: the sampling streams' key: reading the random source: %w", err)
	}
	return s, nil
}

// Stream is the stream of purpose, part and block.
func (s Streams) Stream(purpose Purpose, part, block int) *rand.ChaCha8 {
	mac := hmac.New(sha256.New, s.key[:])
	var msg [1 + 8 + 8]byte
	msg[0] = byte(purpose)
	binary.LittleEndian.PutUint64(msg[1:], uint64(part))
	binary.LittleEndian.PutUint64(msg[9:], uint64(block))
	mac.Write(msg[:])
	var seed [32]byte
	copy(seed[:], mac.Sum(nil))
	return rand.NewChaCha8(seed)
}

// SampleBlock draws the sample of block b of a part (records b·StreamBlock on, at most
// StreamBlock of them) into keep, which holds the block's records, from the block's
// stream: as Sample, from s.Stream(purpose, part, b).
func (p Params) SampleBlock(keep []bool, s Streams, purpose Purpose, part, b int) error {
	if len(keep) > StreamBlock {
		return fmt.Errorf("%w: a block of %d records, more than %d", ErrParams, len(keep), StreamBlock)
	}
	return p.SampleInto(keep, s.Stream(purpose, part, b))
}
