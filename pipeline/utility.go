package pipeline

import (
	"encoding/binary"

	"sanitizer/generalize"
)

// releaseUtility measures a release with the utility metrics: a Mondrian release by its
// partitions, a full-domain release by its classes (the distinct generalized tuples of
// the records not suppressed). values gives numeric quasi-identifiers their values (nil
// entries: categorical).
func releaseUtility(t *generalize.Table, values [][]float64, levels []int, suppressed []bool, mres *generalize.Mondrian, k int) (generalize.Metrics, error) {
	if mres != nil {
		return generalize.Utility(t, mres.Class, mres.Covers, values, k)
	}
	class := make([]int32, t.Rows)
	ids := map[string]int32{}
	var covers [][]generalize.Cover
	key := make([]byte, 4*len(t.Columns))
	for r := range t.Rows {
		if suppressed[r] {
			class[r] = -1
			continue
		}
		for j, c := range t.Columns {
			binary.LittleEndian.PutUint32(key[4*j:], uint32(c.Hierarchy.Code(levels[j], c.Codes.At(r))))
		}
		id, ok := ids[string(key)]
		if !ok {
			id = int32(len(covers))
			ids[string(key)] = id
			cv := make([]generalize.Cover, len(t.Columns))
			for j, c := range t.Columns {
				cv[j] = generalize.Cover{Level: levels[j], Code: c.Hierarchy.Code(levels[j], c.Codes.At(r))}
			}
			covers = append(covers, cv)
		}
		class[r] = id
	}
	return generalize.Utility(t, class, covers, values, k)
}
