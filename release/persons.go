package release

import "sanitizer/schema"

// unitColumn is the input column whose value identifies the person a record is about
// (privacy.privacy-unit.column; "" when the configuration names none: one record is
// one person). The release's verification and check count persons by it
// (verify.Spec.Unit).
func unitColumn(cfg *schema.Config) string {
	if cfg.Privacy.Unit == nil {
		return ""
	}
	return cfg.Privacy.Unit.Column
}

// linkable reports whether the release lets a person's records be linked (a pseudonym
// of the unit's id): the search must then meet multirelational k-anonymity too.
func linkable(cfg *schema.Config) bool {
	return cfg.Privacy.Unit != nil && cfg.Privacy.Unit.Pseudonym != nil
}
