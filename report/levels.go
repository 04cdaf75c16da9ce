package report

import "fmt"

// LevelOf is how every output (stdout, the HTML pages, the docs) says a quasi-identifier's
// generalization level: "level 2 of 0–4", the level chosen and the hierarchy's range of
// levels, 0 the original values and the top (levels − 1, as NodeLevel.Levels and
// QuasiRelease.Levels count them) every value as *.
func LevelOf(level, levels int) string {
	return fmt.Sprintf("level %d of 0–%d", level, levels-1)
}
