package release

import (
	"sanitizer/schema"
	"sanitizer/verify"
)

// unitSpec sets what the verifier counts in persons for a release of p's
// configuration: the privacy unit (verify.Spec.Unit), and, when the release lets a
// person's records be linked (linkable), multirelational k-anonymity
// (verify.Spec.Linkable) and the pseudonym column, checked with the key when p has
// it (verify.Spec.Pseudonym; without it, that the pseudonyms and the persons are one
// to one). It sets nothing without a privacy unit.
func unitSpec(p *plan, spec *verify.Spec) {
	cfg := p.Config
	spec.Unit = unitColumn(cfg)
	spec.Linkable = linkable(cfg)
	spec.Pseudonym = pseudonymCheck(cfg, p.key)
}

// pseudonymCheck is the verifier's check of cfg's released pseudonym under key (nil:
// not known), nil when the release holds none.
func pseudonymCheck(cfg *schema.Config, key secret) *verify.PseudonymCheck {
	if !linkable(cfg) {
		return nil
	}
	return &verify.PseudonymCheck{Column: unitColumn(cfg), Key: verify.SecretKey(key)}
}
