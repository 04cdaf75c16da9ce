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
