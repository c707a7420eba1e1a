package research

import "github.com/quarryhq/quarry/internal/jsonx"

// Public is the research as shown to users and clients: source texts and
// checkpoint-only fields left out, and every list present ([] when empty,
// never null).
func Public(r *Research) *Research {
	v := *r
	v.Sources = make([]Source, len(r.Sources))
	for i, s := range r.Sources {
		s.Content = ""
		v.Sources[i] = s
	}
	v.SubQuestions = make([]SubQuestion, len(r.SubQuestions))
	for i, sq := range r.SubQuestions {
		sq.Hits = nil
		v.SubQuestions[i] = sq
	}
	jsonx.EmptySlices(&v)
	return &v
}
