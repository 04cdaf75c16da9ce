package release

// Pseudonymizer writes the keyed pseudonyms of person ids exactly as Release writes
// the privacy unit's column (privacy.privacy-unit.pseudonym), for another engine (the
// beam module). It never gives its key away: it has no method that returns it, and it
// prints as its key does (a placeholder). For one goroutine at a time.
type Pseudonymizer struct {
	z *pseudonymizer
}

// Pseudonymizer reads the pseudonym key file at path as Release reads
// privacy.privacy-unit.pseudonym.key-file: a regular file readable by its owner only,
// whose whole content, at least 32 bytes, is the key. A file that cannot serve is bad
// input at the key-file key of the Engine's configuration, naming the path and what is
// wrong, never the content.
func (e Engine) Pseudonymizer(path string) (*Pseudonymizer, error) {
	key, err := readKeyFile(path)
	if err != nil {
		return nil, e.Config.Wrap(keyFileKey, err)
	}
	return &Pseudonymizer{z: newPseudonymizer(key)}, nil
}

// Append appends the pseudonym of id to dst.
func (p *Pseudonymizer) Append(dst []byte, id string) []byte { return p.z.append(dst, id) }

// String is the placeholder the key prints as.
func (p *Pseudonymizer) String() string { return secretText }
