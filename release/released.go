package release

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"sanitizer/fault"
	"sanitizer/schema"
	"sanitizer/verify"
)

// releasedAsIs names the columns a release holds as they are: its sensitive and
// insensitive columns, in release order. The verifier measures each against the
// protected sensitive columns (verify.ReleasedMeasured).
func releasedAsIs(p *plan) []string {
	var out []string
	for _, i := range p.Kept {
		if c := p.Conf[i]; c != nil && (c.Role == schema.Sensitive || c.Role == schema.Insensitive) {
			out = append(out, p.Header[i])
		}
	}
	return out
}

// releasedDisclosure answers the columns released as they are that give a protected
// sensitive value away on their own (m.Released): with privacy.released-columns.check
// error, an error matching fault.ErrUnattainable that names them (nothing is then
// published); otherwise a warning per column in log, and nil.
func releasedDisclosure(cfg *schema.Config, m *verify.Measured, log *slog.Logger) error {
	var failing []string
	for _, r := range m.Released {
		if !r.Fails() {
			continue
		}
		failing = append(failing, fmt.Sprintf("%q gives %q away in %d of its %d values (%s of the released records)", r.Column, r.Sensitive, r.FailingGroups, r.Groups, sharePercent(r.Records, m.Rows)))
		if cfg.Privacy.ReleasedColumns != schema.ReleasedError && log != nil {
			log.Warn(ReleasedColumnWarning, "column", r.Column, "sensitive", r.Sensitive, "values", r.FailingGroups, "of", r.Groups, "records", r.Records)
		}
	}
	if len(failing) == 0 || cfg.Privacy.ReleasedColumns != schema.ReleasedError {
		return nil
	}
	return fault.Unattainable("privacy.released-columns: %w: %s; give it role quasi (with a hierarchy) or identifier; nothing published", ErrReleasedColumn, strings.Join(failing, "; "))
}

// ErrReleasedColumn is matched by the error of a release or check refused because a
// column released as it is gives a protected sensitive value away
// (privacy.released-columns.check: error); the error matches fault.ErrUnattainable
// too. A caller that treats a failed check as its own fault tells it apart by it.
var ErrReleasedColumn = errors.New("a column released as it is gives a protected sensitive value away (its records of one value fail the sensitive column's requirements)")

// ReleasedColumnWarning is the warning logged for a column released as it is that
// gives a protected sensitive value away.
const ReleasedColumnWarning = "column released as it is gives a sensitive value away: the records of some of its values fail the sensitive column's requirements (privacy.released-columns)"

// sharePercent writes n of total as a percentage.
func sharePercent(n, total int) string {
	if total == 0 {
		return "0%"
	}
	return fmt.Sprintf("%.3g%%", 100*float64(n)/float64(total))
}
