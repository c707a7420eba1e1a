package qa

import (
	"github.com/quarryhq/quarry/internal/followup"
	"github.com/quarryhq/quarry/kb/analyze"
)

// entities are the names a question asks about: runs of capitalised words
// (connectors allowed inside) and numbers, each as its search terms. A
// knowledge base that holds none of them cannot answer, whatever else
// matches ("Who designed the Sydney Opera House?" over a corpus about
// operas and houses).
func entities(q string) [][]string {
	var out [][]string
	for _, n := range followup.Names(q) {
		if ts := analyze.Terms(n); len(ts) > 0 {
			out = append(out, ts)
		}
	}
	return out
}

// entityCover is the share of the entities whose terms all appear in one
// candidate sentence (with its source's title).
func entityCover(ents [][]string, cands []candidate) float64 {
	if len(ents) == 0 {
		return -1
	}
	found := 0
	for _, e := range ents {
		for _, c := range cands {
			all := true
			for _, t := range e {
				if !c.terms[t] {
					all = false
					break
				}
			}
			if all {
				found++
				break
			}
		}
	}
	return float64(found) / float64(len(ents))
}
