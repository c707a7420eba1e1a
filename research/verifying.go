package research

import (
	"fmt"
	"sort"
	"strings"

	"github.com/quarryhq/quarry/internal/textseg"
	"github.com/quarryhq/quarry/research/verify"
)

// verify runs the verifying stage: facts from every source read, checked
// against each other (package verify). It is deterministic and cheap, so a
// resumed research simply runs it again.
func (x *run) verify() {
	r := x.r
	t0 := x.rn.now()
	defer x.timed(StageVerifying, t0)
	x.setStatus(StatusProcessing, StageVerifying)
	claims := map[string][]verify.Claim{}
	seen := map[string]bool{}
	for _, rd := range r.Rounds {
		if rd.Analysis == nil {
			continue
		}
		for _, c := range rd.Analysis.Claims {
			// A quote reported again in a later round is one claim.
			k := c.SourceID + "\x00" + strings.ToLower(textseg.OneLine(c.Text))
			if !seen[k] {
				seen[k] = true
				claims[c.SourceID] = append(claims[c.SourceID], c.Claim)
			}
		}
	}
	srcs := make([]verify.Source, len(r.Sources))
	given := 0
	for i, s := range r.Sources {
		srcs[i] = verify.Source{ID: s.ID, Domain: s.Domain, Credibility: s.Credibility, Published: s.Published, Content: s.Content, Claims: claims[s.ID]}
		given += len(claims[s.ID])
	}
	res := verify.Run(srcs)
	r.Facts, r.Discrepancies, r.RejectedClaims = res.Facts, res.Discrepancies, res.Rejected
	if n := len(res.Rejected); n > 0 {
		x.warn(fmt.Sprintf("verifying: %d of %d facts the model reported were rejected (first: %s: %q)", n, given, res.Rejected[0].Reason, clip(res.Rejected[0].Text, 80)))
	}
	if r.Facts == nil {
		r.Facts = []verify.Fact{}
	}
	if r.Discrepancies == nil {
		r.Discrepancies = []verify.Discrepancy{}
	}
	verified, model := 0, 0
	for _, f := range r.Facts {
		if f.Verified {
			verified++
		}
		if f.Method == verify.MethodModel {
			model++
		}
	}
	x.message(AgentReflector, AgentWriter, MsgNotification, fmt.Sprintf("verified %d of %d facts (%d from the model, %d extractive); %d discrepancies", verified, len(r.Facts), model, len(r.Facts)-model, len(r.Discrepancies)))
}

// conflicts renders the discrepancies with citations to the sources on
// each side, registering those sources as references.
func (x *run) conflicts(c *citer) []Conflict {
	facts := map[string]verify.Fact{}
	for _, f := range x.r.Facts {
		facts[f.ID] = f
	}
	var out []Conflict
	for _, d := range x.r.Discrepancies {
		var claims []string
		for _, id := range d.FactIDs {
			f := facts[id]
			claims = append(claims, fmt.Sprintf("“%s” %s", f.Text, c.render("[cite:"+f.SourceID+"]")))
		}
		text := strings.Join(claims, "; ") + ". Resolution: " + d.Resolution + "."
		out = append(out, Conflict{DiscrepancyID: d.ID, Topic: d.Topic, Strategy: d.Strategy, Text: text, Confidence: d.Confidence})
	}
	return out
}

// metadata counts what the report rests on.
func (x *run) metadata(rep *Report) Metadata {
	r := x.r
	m := Metadata{SourcesByKind: map[string]int{}, Sources: len(r.Sources), References: len(rep.References), Facts: len(r.Facts), Discrepancies: len(r.Discrepancies)}
	for _, s := range r.Sources {
		m.SourcesByKind[s.Kind]++
	}
	for _, f := range r.Facts {
		if f.Verified {
			m.VerifiedFacts++
		}
	}
	if m.Facts > 0 {
		m.VerificationRate = float64(m.VerifiedFacts) / float64(m.Facts)
	}
	// Words of prose: rendered [n] citations are not words.
	words := len(strings.Fields(citeGroup.ReplaceAllString(rep.Summary, "")))
	for _, s := range rep.Sections {
		words += len(strings.Fields(citeGroup.ReplaceAllString(s.Body, "")))
	}
	m.WordCount = words
	return m
}

// QualityScore rates a report 0–1 from its length, its sources and how
// much of its evidence was verified:
//
//	0.4 × min(1, words / 1500) + 0.3 × min(1, references / 10) + 0.3 × verification rate
func QualityScore(m Metadata) float64 {
	q := 0.4*min(1, float64(m.WordCount)/1500) + 0.3*min(1, float64(m.References)/10) + 0.3*m.VerificationRate
	return float64(int(q*100+0.5)) / 100
}

func kinds(m map[string]int) string {
	if len(m) == 0 {
		return "none"
	}
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	parts := make([]string, len(ks))
	for i, k := range ks {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return strings.Join(parts, ", ")
}
