package research

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"go.opentelemetry.io/otel/trace"

	"github.com/quarryhq/quarry/internal/passage"
	"github.com/quarryhq/quarry/internal/safe"
	"github.com/quarryhq/quarry/internal/textclean"
	"github.com/quarryhq/quarry/internal/textseg"
	"github.com/quarryhq/quarry/search"
	"github.com/quarryhq/quarry/store"
)

// loop runs plan → (execute → analyze → decide)* until the research is
// complete, the depth is spent or a budget stops it.
func (x *run) loop(ctx context.Context) error {
	r := x.r
	effort := r.Options.Effort()
	if r.Plan == nil {
		pctx, end := x.span(ctx, "plan")
		err := x.plan(pctx, effort)
		end(err)
		if err != nil {
			return err
		}
	}
	for {
		if r.StopReason != "" {
			return nil
		}
		if yieldAsked(ctx) {
			return ErrYield
		}
		depth := len(r.Rounds) - 1
		if depth < 0 || r.Rounds[depth].Decided {
			depth++
			if !x.hasPending(depth) {
				r.StopReason = orDefault(r.StopReason, "no open sub-questions")
				return nil
			}
			r.Rounds = append(r.Rounds, Round{Depth: depth})
		}
		round := &r.Rounds[depth]
		if x.hasPending(depth) || x.hasUnmerged(depth) {
			ectx, end := x.span(ctx, "execute", attrRound.Int(depth))
			err := x.execute(ectx, depth, effort)
			end(err)
			if err != nil {
				return err
			}
		}
		if round.Analysis == nil {
			actx, end := x.span(ctx, "analyze", attrRound.Int(depth))
			err := x.analyze(actx, depth, effort)
			end(err)
			if err != nil {
				return err
			}
		}
		x.decide(depth, effort)
		if err := x.checkpoint(ctx); err != nil {
			return err
		}
	}
}

func (x *run) hasPending(depth int) bool {
	for _, sq := range x.r.SubQuestions {
		if sq.Depth == depth && sq.Status == SubPending {
			return true
		}
	}
	return false
}

func (x *run) hasUnmerged(depth int) bool {
	for _, sq := range x.r.SubQuestions {
		if sq.Depth == depth && sq.Hits != nil {
			return true
		}
	}
	return false
}

func (x *run) plan(ctx context.Context, effort Effort) error {
	r := x.r
	t0 := x.rn.now()
	x.setStatus(StatusProcessing, StagePlanning)
	x.agent(AgentPlanner, AgentThinking, 0, "planning: "+r.Question, "")
	x.message("user", AgentPlanner, MsgRequest, r.Question)
	if !x.budget().allow(estimatePlanTokens) {
		return errTokenBudget
	}
	out, usage, err := x.rn.Engine.Plan(ctx, PlanInput{Question: r.Question, Sources: r.Options.Sources, Effort: effort, History: r.History})
	x.addUsage(StagePlanning, usage)
	x.timed(StagePlanning, t0)
	if err != nil {
		x.emit(Event{Type: EventAgent, Agent: &AgentState{Agent: AgentPlanner, Status: AgentFailed, Error: err.Error()}})
		return fmt.Errorf("plan: %w", err)
	}
	seen := map[string]bool{}
	var qs []PlannedQuestion
	for _, pq := range out.SubQuestions {
		k := normalize(pq.Text)
		if k == "" || seen[k] {
			continue
		}
		seen[k] = true
		qs = append(qs, pq)
	}
	sort.SliceStable(qs, func(i, j int) bool { return qs[i].Priority < qs[j].Priority })
	if len(qs) > effort.MaxSub {
		x.warn(fmt.Sprintf("the planner proposed %d sub-questions; the level allows %d, so the first %d by priority are researched", len(qs), effort.MaxSub, effort.MaxSub))
		qs = qs[:effort.MaxSub]
	}
	trimmed := 0
	for i := range qs {
		if len(qs[i].Queries) > MaxQueriesPerSub {
			qs[i].Queries, trimmed = qs[i].Queries[:MaxQueriesPerSub], trimmed+1
		}
	}
	if trimmed > 0 {
		x.warn(fmt.Sprintf("the planner gave %d sub-questions more than %d search queries; the first %d of each are run", trimmed, MaxQueriesPerSub, MaxQueriesPerSub))
	}
	if len(qs) == 0 {
		qs = []PlannedQuestion{{Text: r.Question}}
	}
	plan := out.Plan
	r.Plan = &plan
	for i, pq := range qs {
		// Priorities are unique: their order, from 1.
		r.SubQuestions = append(r.SubQuestions, SubQuestion{ID: "Q" + strconv.Itoa(i+1), Text: pq.Text, Priority: i + 1, Status: SubPending, Queries: pq.Queries})
	}
	// The plan and its announcement are stored together.
	return x.checkpoint(ctx,
		agentEvent(AgentPlanner, AgentCompleted, 1, "", fmt.Sprintf("%d sub-questions, %d steps", len(qs), len(plan.Steps))),
		messageEvent(AgentPlanner, AgentResearcher, MsgRequest, fmt.Sprintf("research %d sub-questions: %s", len(qs), joinTexts(r.SubQuestions))))
}

func joinTexts(sqs []SubQuestion) string {
	var b strings.Builder
	for i, sq := range sqs {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(sq.ID + " " + sq.Text)
	}
	return b.String()
}

// execute searches every pending sub-question at depth, concurrently. Each
// finished sub-question is checkpointed, so a resume redoes none of them.
// Results are merged into the research's sources in priority order after
// all have finished, so source ids do not depend on timing.
func (x *run) execute(ctx context.Context, depth int, effort Effort) error {
	r := x.r
	t0 := x.rn.now()
	defer x.timed(StageExecuting, t0)
	x.setStatus(StatusProcessing, StageExecuting)
	var idx []int
	for i, sq := range r.SubQuestions {
		if sq.Depth == depth && sq.Status == SubPending {
			idx = append(idx, i)
		}
	}
	conc := x.rn.Concurrency
	if conc <= 0 {
		conc = 4
	}
	sem := make(chan struct{}, conc)
	var wg sync.WaitGroup
	done := 0
	var panicked error // the first sub-question's panic fails the round
	for _, i := range idx {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			if err := safe.Do(func() { x.searchSub(ctx, i, idx, &done, effort.PerSearch) }); err != nil {
				x.mu.Lock()
				if panicked == nil {
					panicked = err
				}
				x.mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if panicked != nil {
		x.logger.Error("sub-question search panicked", "err", panicked, "stack", string(safe.Stack(panicked)))
		return fmt.Errorf("searching the sub-questions: %w", panicked)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return x.mergeRound(ctx, depth, idx)
}

// searchSub searches sub-question i of a round (idx) and checkpoints its
// results; done counts the round's finished sub-questions.
func (x *run) searchSub(ctx context.Context, i int, idx []int, done *int, perSearch int) {
	r := x.r
	x.mu.Lock()
	sq := r.SubQuestions[i]
	progress := float64(*done) / float64(len(idx))
	x.mu.Unlock()
	x.agent(AgentResearcher, AgentWorking, progress, "searching: "+sq.Text, "")
	res, failures, lastErr := x.searchAll(ctx, sq, perSearch)
	if ctx.Err() != nil {
		return
	}
	x.mu.Lock()
	*done++
	progress = float64(*done) / float64(len(idx))
	s := &r.SubQuestions[i]
	s.Status, s.Hits = SubDone, res
	if len(res) == 0 && failures > 0 {
		s.Status, s.Error = SubFailed, "every source failed: "+lastErr.Error()
	}
	x.mu.Unlock()
	// The results are stored with their announcement: a process
	// killed before leaves neither, and its resume searches and
	// announces them once.
	if err := x.checkpoint(ctx, agentEvent(AgentResearcher, AgentWorking, progress, "", fmt.Sprintf("%s: %d results", sq.ID, len(res)))); err != nil {
		x.logger.Error("checkpoint", "err", err)
	}
}

// mergeRound moves the round's results into the research's sources and
// checkpoints them.
func (x *run) mergeRound(ctx context.Context, depth int, idx []int) error {
	r := x.r
	byURL := make(map[string]int, len(r.Sources))
	for i, s := range r.Sources {
		byURL[s.URL] = i
	}
	failed := 0
	for i := range r.SubQuestions {
		if sq := &r.SubQuestions[i]; sq.Depth == depth && sq.Hits != nil {
			x.merge(sq, byURL)
		}
	}
	for _, i := range idx {
		if r.SubQuestions[i].Status == SubFailed {
			failed++
		}
	}
	if len(r.Sources) == 0 && len(idx) > 0 && failed == len(idx) {
		// Nothing to write from, and not because nothing matched: say why
		// rather than report "no evidence".
		return fmt.Errorf("every search failed; %s: %s", r.SubQuestions[idx[0]].ID, r.SubQuestions[idx[0]].Error)
	}
	return x.checkpoint(ctx,
		agentEvent(AgentResearcher, AgentCompleted, 1, "", fmt.Sprintf("%d sources read so far", len(r.Sources))),
		messageEvent(AgentResearcher, AgentReflector, MsgResponse, fmt.Sprintf("round %d: %d sub-questions searched, %d sources in total", depth, len(idx), len(r.Sources))))
}

// MaxQueriesPerSub bounds the searches one sub-question makes per source
// (the planner is asked for 1-2; more are cut, with a warning).
const MaxQueriesPerSub = 2

// searchAll runs a sub-question's queries on every source, all at once
// (the results keep the order of queries, then sources). A failing source
// is a warning, not a failed research.
func (x *run) searchAll(ctx context.Context, sq SubQuestion, k int) ([]search.Result, int, error) {
	queries := sq.Queries
	if len(queries) == 0 {
		queries = []string{sq.Text}
	}
	type call struct {
		q   string
		src search.Source
		res []search.Result
		err error
	}
	calls := make([]call, 0, len(queries)*len(x.sources))
	for _, q := range queries {
		for _, src := range x.sources {
			calls = append(calls, call{q: q, src: src})
		}
	}
	var wg sync.WaitGroup
	for i := range calls {
		wg.Add(1)
		go func(c *call) {
			defer wg.Done()
			// A source that panics is a source that failed.
			sctx, end := x.span(ctx, "search "+c.src.Name(), attrSource.String(c.src.Name()))
			c.err = safe.Call(func() (err error) {
				if ps, ok := c.src.(search.PageSearcher); ok && x.readsPages() {
					c.res, err = ps.SearchPages(sctx, c.q, k)
					return err
				}
				c.res, err = c.src.Search(sctx, c.q, k)
				return err
			})
			trace.SpanFromContext(sctx).SetAttributes(attrResults.Int(len(c.res)))
			end(c.err)
		}(&calls[i])
	}
	wg.Wait()
	var out []search.Result
	var last error
	failures := 0
	for _, c := range calls {
		if c.err != nil {
			if ctx.Err() != nil {
				return out, failures, last
			}
			failures++
			last = c.err
			x.warn(fmt.Sprintf("source %s failed for %q: %v", c.src.Name(), c.q, c.err))
			continue
		}
		out = append(out, c.res...)
	}
	return out, failures, last
}

// readsPages reports an engine that reads pages (PageReader).
func (x *run) readsPages() bool {
	pr, ok := x.rn.Engine.(PageReader)
	return ok && pr.ReadsPages()
}

// merge moves a sub-question's hits into the research's sources; byURL
// indexes the sources by URL and is kept up to date. A URL already read is
// never read again; a new passage of it (another chunk of the same
// document) is appended while there is room.
func (x *run) merge(sq *SubQuestion, byURL map[string]int) {
	r := x.r
	seen := map[string]bool{}
	for _, h := range sq.Hits {
		if err := store.CheckSourceURL(h.URL); err != nil {
			// A search result's URL becomes a reference link: only
			// http(s), file and kb URLs are read.
			if h.URL != "" {
				x.warn(fmt.Sprintf("%s: result %q skipped: %v", sq.ID, textclean.Line(clip(h.URL, 100)), err))
			}
			continue
		}
		// Each passage holds its code blocks whole, so passages of one
		// source joined read as each did alone.
		h.Title, h.Content = textclean.Line(h.Title), passage.Balance(textclean.Text(h.Content))
		i, ok := byURL[h.URL]
		if !ok {
			s := Source{ID: "S" + strconv.Itoa(len(r.Sources)+1), URL: h.URL, Title: h.Title, Domain: search.Domain(h.URL), Kind: h.Kind,
				Credibility: h.Credibility, AccessedAt: x.rn.now(), Published: h.Published, Authors: h.Authors, Content: passage.Balance(clip(h.Content, MaxContentChars-fenceRoom))}
			if s.Title == "" {
				s.Title = s.URL
			}
			r.Sources = append(r.Sources, s)
			i = len(r.Sources) - 1
			byURL[h.URL] = i
			x.emit(Event{Type: EventSource, Source: &Source{ID: s.ID, URL: s.URL, Title: s.Title, Domain: s.Domain, Kind: s.Kind, Credibility: s.Credibility, AccessedAt: s.AccessedAt}})
		} else if s := &r.Sources[i]; !strings.Contains(s.Content, h.Content) && len(s.Content)+len(h.Content)+2 <= MaxContentChars {
			s.Content += "\n\n" + h.Content
		}
		if id := r.Sources[i].ID; !seen[id] {
			seen[id] = true
			sq.SourceIDs = append(sq.SourceIDs, id)
		}
	}
	sq.Hits = nil
}

// fenceRoom is what a source's text keeps free of MaxContentChars for
// the fences that close a code block its clip cut (passage.Balance).
const fenceRoom = 16

// clip cuts s to at most n bytes at a rune boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

func (x *run) analyze(ctx context.Context, depth int, effort Effort) error {
	r := x.r
	t0 := x.rn.now()
	defer x.timed(stageAnalyzing, t0)
	var sqs []SubQuestion
	for _, sq := range r.SubQuestions {
		if sq.Depth == depth {
			sqs = append(sqs, sq)
		}
	}
	x.agent(AgentReflector, AgentThinking, 0, fmt.Sprintf("analyzing round %d", depth), "")
	in := AnalyzeInput{Question: r.Question, SubQuestions: sqs, Sources: x.sourceMap(), Learnings: r.Learnings,
		MaxDirections: childBreadth(effort), CharsPerSource: 1500, Topics: x.topics()}
	if b := x.budget(); b.max > 0 {
		// Shrink what the analyst reads to fit what the budget allows.
		room := b.room() - analyzeOutputTokens
		if room < 1000 {
			return errTokenBudget
		}
		// Half the room, so one structured-output retry still fits.
		n := max(1, countNew(sqs))
		in.CharsPerSource = min(in.CharsPerSource, max(0, room/2-800)*3/n)
	}
	a, usage, err := x.rn.Engine.Analyze(ctx, in)
	x.addUsage(stageAnalyzing, usage)
	if err != nil && ctx.Err() == nil && x.rn.Fallback != nil && countNew(sqs) > 0 {
		// The sources were read: an analyst that keeps failing costs the
		// round its model reading, not the research.
		x.warn(fmt.Sprintf("round %d: %s could not analyze the sources (%v); they were read extractively", depth, x.rn.Engine.Name(), err))
		in.CharsPerSource = 1500
		a, usage, err = x.rn.Fallback.Analyze(ctx, in)
		x.addUsage(stageAnalyzing, usage)
	}
	if err != nil {
		x.emit(Event{Type: EventAgent, Agent: &AgentState{Agent: AgentReflector, Status: AgentFailed, Error: err.Error()}})
		return fmt.Errorf("analyze round %d: %w", depth, err)
	}
	kept := 0
	for _, l := range a.Learnings {
		l.SourceIDs = x.knownIDs(l.SourceIDs)
		if len(l.SourceIDs) == 0 || strings.TrimSpace(l.Text) == "" {
			continue // a learning must cite what it came from
		}
		l.Round = depth
		r.Learnings = append(r.Learnings, l)
		kept++
		ll := l
		x.emit(Event{Type: EventLearning, Learning: &ll})
	}
	if dropped := len(a.Learnings) - kept; dropped > 0 {
		x.warn(fmt.Sprintf("round %d: %d learnings dropped for citing no source read in this research", depth, dropped))
	}
	if len(r.Learnings) > MaxLearnings {
		r.Learnings = append([]Learning(nil), r.Learnings[len(r.Learnings)-MaxLearnings:]...)
	}
	// A fact must come from a source read in this round or before.
	claims := a.Claims[:0:0]
	for _, c := range a.Claims {
		if ids := x.knownIDs([]string{c.SourceID}); len(ids) == 1 && strings.TrimSpace(c.Text) != "" {
			claims = append(claims, c)
		}
	}
	if dropped := len(a.Claims) - len(claims); dropped > 0 {
		x.warn(fmt.Sprintf("round %d: %d facts dropped for naming no source read in this research", depth, dropped))
	}
	a.Claims = claims
	round := &r.Rounds[depth]
	round.Analysis = a
	return x.checkpoint(ctx, agentEvent(AgentReflector, AgentCompleted, 1, "", fmt.Sprintf("%d learnings, %d directions, complete=%v, confidence %.2f", kept, len(a.Directions), a.IsComplete, a.Confidence)))
}

// MaxTopics caps the fact topics an analyst is shown.
const MaxTopics = 40

// topics are the distinct fact topics of earlier rounds, newest last.
func (x *run) topics() []string {
	var out []string
	seen := map[string]bool{}
	for _, rd := range x.r.Rounds {
		if rd.Analysis == nil {
			continue
		}
		for _, c := range rd.Analysis.Claims {
			t := textseg.OneLine(c.Topic)
			if k := strings.ToLower(t); k != "" && !seen[k] {
				seen[k] = true
				out = append(out, t)
			}
		}
	}
	return out[max(0, len(out)-MaxTopics):]
}

// countNew counts the distinct sources the sub-questions found.
func countNew(sqs []SubQuestion) int {
	ids := map[string]bool{}
	for _, sq := range sqs {
		for _, id := range sq.SourceIDs {
			ids[id] = true
		}
	}
	return len(ids)
}

// childBreadth is how many follow-up sub-questions a round may open: half
// the breadth, at least two (breadth narrows as the research goes deeper).
func childBreadth(e Effort) int { return max(2, (e.MaxSub+1)/2) }

// decide stops when the analysis says the question is answered with enough
// confidence or the depth is spent; otherwise it opens the best directions
// as child sub-questions.
func (x *run) decide(depth int, effort Effort) {
	r := x.r
	round := &r.Rounds[depth]
	if round.Decided {
		return
	}
	round.Decided = true
	a := round.Analysis
	switch {
	case a.IsComplete && a.Confidence >= r.Options.Confidence:
		r.StopReason = fmt.Sprintf("complete with confidence %.2f after round %d", a.Confidence, depth)
	case depth >= effort.Depth:
		r.StopReason = fmt.Sprintf("depth %d reached", effort.Depth)
	}
	if r.StopReason != "" {
		x.message(AgentReflector, "", MsgNotification, "stopping: "+r.StopReason)
		return
	}
	existing := map[string]bool{normalize(r.Question): true}
	ids := map[string]bool{}
	for _, sq := range r.SubQuestions {
		existing[normalize(sq.Text)] = true
		ids[sq.ID] = true
	}
	dirs := append([]Direction(nil), a.Directions...)
	sort.SliceStable(dirs, func(i, j int) bool { return dirs[i].Score > dirs[j].Score })
	opened := 0
	for _, d := range dirs {
		if opened == childBreadth(effort) {
			break
		}
		k := normalize(d.Text)
		if k == "" || existing[k] {
			continue // no repeats, so no cycles
		}
		existing[k] = true
		parent := d.ParentID
		if !ids[parent] {
			parent = ""
		}
		id := "Q" + strconv.Itoa(len(r.SubQuestions)+1)
		queries := d.Queries
		if len(queries) > MaxQueriesPerSub {
			queries = queries[:MaxQueriesPerSub] // the analysis's schema asks for at most that many
		}
		r.SubQuestions = append(r.SubQuestions, SubQuestion{ID: id, Text: d.Text, Priority: len(r.SubQuestions) + 1, Depth: depth + 1, ParentID: parent, Status: SubPending, Queries: queries})
		opened++
	}
	if opened == 0 {
		r.StopReason = "no new directions"
		x.message(AgentReflector, "", MsgNotification, "stopping: no new directions")
		return
	}
	x.message(AgentReflector, AgentResearcher, MsgRequest, fmt.Sprintf("follow %d directions at depth %d", opened, depth+1))
}

func (x *run) sourceMap() map[string]*Source {
	m := make(map[string]*Source, len(x.r.Sources))
	for i := range x.r.Sources {
		m[x.r.Sources[i].ID] = &x.r.Sources[i]
	}
	return m
}

func (x *run) knownIDs(ids []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, id := range ids {
		id = strings.TrimSpace(id)
		n := sourceNum(id)
		if n >= 1 && n <= len(x.r.Sources) && !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}

// sourceNum parses "S12" as 12; anything else is 0.
func sourceNum(id string) int {
	if len(id) < 2 || id[0] != 'S' {
		return 0
	}
	n, err := strconv.Atoi(id[1:])
	if err != nil || n < 1 || strconv.Itoa(n) != id[1:] {
		return 0
	}
	return n
}
