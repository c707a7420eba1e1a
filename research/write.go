package research

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/quarryhq/quarry/internal/textclean"
	"github.com/quarryhq/quarry/llm"
	"github.com/quarryhq/quarry/research/verify"
)

// DerivedMark opens a sentence the offline writer computed from two
// quoted values (which came first), rather than quoted.
const DerivedMark = "Derived from the quotes below:"

// write runs the writer and renders its draft.
func (x *run) write(ctx context.Context) error {
	r := x.r
	t0 := x.rn.now()
	defer x.timed(StageSynthesizing, t0)
	x.setStatus(StatusProcessing, StageSynthesizing)
	x.agent(AgentWriter, AgentThinking, 0, "writing the report", "")
	in := WriteInput{Question: r.Question, History: r.History, Plan: r.Plan, SubQuestions: r.SubQuestions, Sources: x.sourceMap(), Learnings: r.Learnings,
		CharsPerSource: 1200}
	facts := r.Facts
	// An engine that ranks the evidence itself while writing (the offline
	// one) is not made to rank it twice.
	if _, ranks := x.rn.Engine.(Ranker); x.rn.Ranker != nil && !ranks {
		// No evidence (nothing the question names was read) leaves the
		// writer every source: the offline engine says the question is
		// unanswered, a model may still read what a lexical ranking
		// missed (another spelling, another language).
		if ev := x.rn.Ranker.Evidence(r.Question, ReadOrder(OrderedSubQuestions(r.SubQuestions), in.Sources), in.Sources); len(ev) > 0 {
			in.Evidence = ev
			facts = factsOf(r.Facts, ev)
			in.Learnings = learningsOf(r.Learnings, ev)
		}
	}
	in.Facts = writerFacts(facts)
	eng := x.rn.Engine
	var notes []string
	if b := x.budget(); b.max > 0 {
		left := b.left()
		in.MaxTokens = min(4096, left/3)
		n := len(r.Sources) // the sources the writer is shown
		if in.Evidence != nil {
			n = len(in.Evidence)
		}
		n = max(1, n)
		factTokens := 0
		for _, f := range in.Facts {
			factTokens += (len(f.Text) + 12) / 3
		}
		// Half of what is left, so one structured-output retry still fits.
		in.CharsPerSource = min(in.CharsPerSource, max(0, left/2-in.MaxTokens-1000-factTokens)*3/n)
		if in.MaxTokens < 500 && x.rn.Fallback != nil {
			eng = x.rn.Fallback
			notes = append(notes, fmt.Sprintf("The token budget left %d tokens for writing, too few for %s; this report was assembled extractively from the cited sources.", left, x.rn.Engine.Name()))
		}
	}
	draft, usage, err := eng.Write(ctx, in)
	x.addUsage(StageSynthesizing, usage)
	if err != nil && x.rn.Fallback != nil && eng != x.rn.Fallback && !errors.Is(ctx.Err(), context.Canceled) {
		x.warn(fmt.Sprintf("%s could not write the report (%v); writing it extractively", eng.Name(), err))
		notes = append(notes, fmt.Sprintf("%s could not write this report (%v); it was assembled extractively from the cited sources.", eng.Name(), err))
		eng = x.rn.Fallback
		draft, usage, err = eng.Write(context.WithoutCancel(ctx), in)
		x.addUsage(StageSynthesizing, usage)
	}
	if err != nil {
		x.emit(Event{Type: EventAgent, Agent: &AgentState{Agent: AgentWriter, Status: AgentFailed, Error: err.Error()}})
		return fmt.Errorf("write: %w", err)
	}
	rep := x.render(draft, in.Sources, in.Facts, eng.Name(), notes)
	r.Report = rep
	ck, passed := check(rep, r.Sources)
	if j, ok := eng.(Judge); ok && len(passed) > 0 {
		x.judge(ctx, j, eng.Name(), &ck, passed)
	}
	r.Checks = &ck
	if len(ck.Unsupported) > 0 {
		x.warn(fmt.Sprintf("citation check: %d of %d cited passages are not supported by their sources", len(ck.Unsupported), ck.CitedPassages))
	}
	x.agent(AgentWriter, AgentCompleted, 1, "", fmt.Sprintf("%d sections, %d references", len(rep.Sections), len(rep.References)))
	x.emit(Event{Type: EventReport, Report: &ReportReady{Title: rep.Title, Sections: len(rep.Sections), References: len(rep.References)}})
	return nil
}

// ReadOrder lists the sources read, in the order the sub-questions, as
// OrderedSubQuestions lists them, found them.
func ReadOrder(ordered []SubQuestion, sources map[string]*Source) []string {
	var out []string
	seen := map[string]bool{}
	for _, sq := range ordered {
		for _, id := range sq.SourceIDs {
			if sources[id] != nil && !seen[id] {
				seen[id] = true
				out = append(out, id)
			}
		}
	}
	return out
}

// learningsOf keeps the learnings' citations of the given sources, and the
// learnings left with one: a writer shown the evidence only is not handed
// ids of sources it was not shown.
func learningsOf(ls []Learning, ids []string) []Learning {
	in := idSet(ids)
	var out []Learning
	for _, l := range ls {
		var keep []string
		for _, id := range l.SourceIDs {
			if in[id] {
				keep = append(keep, id)
			}
		}
		if len(keep) > 0 {
			l.SourceIDs = keep
			out = append(out, l)
		}
	}
	return out
}

// factsOf keeps the facts taken from the given sources.
func factsOf(facts []verify.Fact, ids []string) []verify.Fact {
	in := idSet(ids)
	var out []verify.Fact
	for _, f := range facts {
		if in[f.SourceID] {
			out = append(out, f)
		}
	}
	return out
}

func idSet(ids []string) map[string]bool {
	m := make(map[string]bool, len(ids))
	for _, id := range ids {
		m[id] = true
	}
	return m
}

// OrderedSubQuestions lists root sub-questions by priority, each followed
// by its descendants.
func OrderedSubQuestions(sqs []SubQuestion) []SubQuestion {
	children := map[string][]SubQuestion{}
	var roots []SubQuestion
	for _, sq := range sqs {
		if sq.ParentID == "" {
			roots = append(roots, sq)
		} else {
			children[sq.ParentID] = append(children[sq.ParentID], sq)
		}
	}
	sort.SliceStable(roots, func(i, j int) bool { return roots[i].Priority < roots[j].Priority })
	var out []SubQuestion
	var walk func(sq SubQuestion)
	walk = func(sq SubQuestion) {
		out = append(out, sq)
		for _, c := range children[sq.ID] {
			walk(c)
		}
	}
	for _, r := range roots {
		walk(r)
	}
	return out
}

// judge has the engine that wrote the report judge the passages the
// lexical check passed, within the token budget; what it could not judge
// keeps the lexical verdict, and a warning says so.
func (x *run) judge(ctx context.Context, j Judge, name string, ck *Checks, passed []cited) {
	t0 := x.rn.now()
	defer func() {
		// The judge runs inside the writer's stage: its time is counted
		// under checking only, not twice.
		d := x.rn.now().Sub(t0).Seconds()
		x.mu.Lock()
		x.r.Timings.Stages[stageChecking] += d
		x.r.Timings.Stages[StageSynthesizing] -= d
		x.mu.Unlock()
	}()
	x.agent(AgentReflector, AgentThinking, 0, fmt.Sprintf("judging %d cited passages", len(passed)), "")
	fits := func(n int) bool { b := x.budget(); return b.max == 0 || n <= b.left() }
	needed, unjudged, err := judgeChecks(ctx, j, ck, passed, fits, func(u llm.Usage) { x.addUsage(stageChecking, u) })
	if ck.Judged > 0 {
		ck.Judge, ck.Method = name, ck.Method+judgeMethod
	}
	switch {
	case err != nil:
		x.warn(fmt.Sprintf("citation judge %s failed (%v); %d of %d passages were checked lexically only", name, err, unjudged, needed))
	case unjudged > 0:
		x.warn(fmt.Sprintf("citation judge %s gave no verdict on %d of %d passages (token budget or missing verdicts); they were checked lexically only", name, unjudged, needed))
	}
	x.agent(AgentReflector, AgentCompleted, 1, "", fmt.Sprintf("judged %d passages; %d supported of %d cited", ck.Judged, ck.Supported, ck.CitedPassages))
}

// Report length targets, met as far as the evidence allows:
// an executive summary of 200–500 words, sections of at least 300 words
// drawing on at least 3 sources.
const (
	SummaryMinWords   = 200
	SummaryMaxWords   = 500
	SectionMinWords   = 300
	SectionMinSources = 3
)

// MaxWriterFacts caps the facts a writer is shown: verified ones first,
// then the most confident.
const MaxWriterFacts = 40

// writerFacts picks the facts the writer may cite, each cut to 200 bytes
// of prompt.
func writerFacts(all []verify.Fact) []FactRef {
	idx := make([]int, len(all))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool {
		fa, fb := all[idx[a]], all[idx[b]]
		if fa.Verified != fb.Verified {
			return fa.Verified
		}
		return fa.Confidence > fb.Confidence
	})
	out := make([]FactRef, 0, min(len(idx), MaxWriterFacts))
	for _, i := range idx[:min(len(idx), MaxWriterFacts)] {
		out = append(out, FactRef{ID: all[i].ID, SourceID: all[i].SourceID, Text: all[i].Text})
	}
	return out
}

// render turns a draft into the report: numbered citations, references
// only to sources read in this research, and notes.
func (x *run) render(d *Draft, sources map[string]*Source, facts []FactRef, engine string, notes []string) *Report {
	r := x.r
	c := newCiter(sources)
	c.written = engine != OfflineEngine
	c.facts = make(map[string]string, len(facts))
	for _, f := range facts {
		c.facts[f.ID] = f.SourceID
	}
	rep := &Report{Title: strings.TrimSpace(d.Title), Engine: engine}
	if rep.Title == "" {
		rep.Title = r.Question
	}
	rep.Summary = c.render(strings.TrimSpace(d.Summary))
	for _, s := range d.Sections {
		body := strings.TrimSpace(s.Body)
		if body == "" {
			continue
		}
		rep.Sections = append(rep.Sections, Section{Heading: strings.TrimSpace(s.Heading), Body: c.render(body)})
	}
	// The conflicts cite sources too: render them before numbering ends.
	rep.Conflicts = x.conflicts(c)
	for i, id := range c.order {
		s := c.known[id]
		rep.References = append(rep.References, Reference{Number: i + 1, SourceID: id, URL: s.URL, Title: s.Title, Authors: s.Authors, AccessedAt: s.AccessedAt})
	}
	switch {
	case engine == x.rn.Engine.Name() && engine == OfflineEngine:
		note := "Written by Quarry's offline extractive engine: no language model was used. Every sentence is quoted from the source it cites; nothing was generated."
		if strings.Contains(d.Summary, DerivedMark) {
			note = "Written by Quarry's offline extractive engine: no language model was used. Every sentence is quoted from the source it cites, except the one marked as derived, which compares two values quoted from the sources it cites; nothing else was generated."
		}
		notes = append([]string{note}, notes...)
	case engine != x.rn.Engine.Name():
		notes = append([]string{fmt.Sprintf("This report was assembled by Quarry's offline extractive engine: every sentence is quoted from the source it cites. %s planned and analysed the research (%d calls) but did not write the report.", x.rn.Engine.Name(), r.Usage.Calls)}, notes...)
	}
	if c.dropped > 0 {
		notes = append(notes, fmt.Sprintf("%d citation(s) to sources not read in this research were removed.", c.dropped))
	}
	if strings.Contains(r.StopReason, "budget") {
		notes = append(notes, "The research stopped early: "+r.StopReason+".")
	}
	rep.Notes = notes
	rep.Metadata = x.metadata(rep)
	rep.Quality = QualityScore(rep.Metadata)
	rep.Markdown = Markdown(rep)
	return rep
}

// Markdown renders a report: title, notes, executive summary, sections and
// the references list.
func Markdown(rep *Report) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n", mdLine(rep.Title))
	for _, n := range rep.Notes {
		fmt.Fprintf(&b, "> %s\n", mdLine(n))
	}
	if len(rep.Notes) > 0 {
		b.WriteString("\n")
	}
	if rep.Summary != "" {
		fmt.Fprintf(&b, "## Executive summary\n\n%s\n\n", mdText(rep.Summary))
	}
	for _, s := range rep.Sections {
		fmt.Fprintf(&b, "## %s\n\n%s\n\n", mdLine(s.Heading), mdText(s.Body))
	}
	if len(rep.Conflicts) > 0 {
		b.WriteString("## Conflicting evidence\n\n")
		for _, c := range rep.Conflicts {
			fmt.Fprintf(&b, "- **%s** — %s (%s, confidence %.2f)\n", mdLine(c.Topic), mdEscape(c.Text, true), c.Strategy, c.Confidence)
		}
		b.WriteString("\n")
	}
	b.WriteString("## References\n\n")
	if len(rep.References) == 0 {
		b.WriteString("No sources were cited.\n")
	}
	for _, ref := range rep.References {
		fmt.Fprintf(&b, "[%d] %s%s — %s (accessed %s)\n", ref.Number, authorPrefix(ref.Authors), mdLine(ref.Title), mdLine(ref.URL), ref.AccessedAt.Format("2006-01-02"))
	}
	m := rep.Metadata
	fmt.Fprintf(&b, "\n---\n%d words · %d sources read (%s) · %d references · %d facts, %d verified · %d discrepancies · quality %.2f\n",
		m.WordCount, m.Sources, kinds(m.SourcesByKind), m.References, m.Facts, m.VerifiedFacts, m.Discrepancies, rep.Quality)
	return b.String()
}

// Untrusted text (source titles, quoted sentences, URLs, a model's
// prose) stays text in Markdown: raw HTML is entity-escaped, brackets are
// escaped except in the report's own [n] citations (so no link or image
// can be formed), and a line cannot open a heading, list, quote, table or
// rule.
var (
	mdCitation  = regexp.MustCompile(`^\[[0-9]{1,6}\]`)
	mdLineStart = regexp.MustCompile(`^([ \t]*)([#>+=|*_-]|[0-9]+[.)])`)
)

// mdLine is one line of escaped Markdown that cites nothing (a title, a
// note): a "[7]" in it, say in a model's reply a note quotes, is escaped
// too, so it cannot read as a citation.
func mdLine(s string) string { return mdEscape(s, false) }

// mdText escapes each line of a body, its [n] citations kept.
func mdText(s string) string {
	lines := strings.Split(textclean.Text(s), "\n")
	for i, l := range lines {
		lines[i] = mdEscape(l, true)
	}
	return strings.Join(lines, "\n")
}

func mdEscape(s string, cites bool) string {
	s = textclean.Line(s)
	var b strings.Builder
	b.Grow(len(s) + 8)
	if m := mdLineStart.FindStringSubmatchIndex(s); m != nil {
		// A backslash escapes only a mark: a list's number keeps its
		// digits and escapes its "." or ")" ("3\. Layers"; "\3." would
		// show the backslash).
		at := m[4]
		if c := s[m[5]-1]; c == '.' || c == ')' {
			at = m[5] - 1
		}
		b.WriteString(s[:at])
		b.WriteByte('\\')
		s = s[at:]
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '[':
			if loc := mdCitation.FindStringIndex(s[i:]); cites && loc != nil {
				b.WriteString(s[i : i+loc[1]])
				i += loc[1] - 1
				continue
			}
			b.WriteString(`\[`)
		case ']', '\\', '`':
			b.WriteByte('\\')
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// authorPrefix is the escaped author list and ": ", or "".
func authorPrefix(a []string) string {
	if l := authorList(a); l != "" {
		return mdLine(strings.TrimSuffix(l, ": ")) + ": "
	}
	return ""
}

// authorList renders "A, B and C: ", or "A et al.: " beyond three authors.
func authorList(a []string) string {
	switch {
	case len(a) == 0:
		return ""
	case len(a) > 3:
		return a[0] + " et al.: "
	case len(a) == 1:
		return a[0] + ": "
	}
	return strings.Join(a[:len(a)-1], ", ") + " and " + a[len(a)-1] + ": "
}
