package research

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/quarryhq/quarry/errcode"
	"github.com/quarryhq/quarry/store"
)

// Thread statuses: idle is an active thread with no activity
// for IdleAfter.
const (
	ThreadActive = "active"
	ThreadIdle   = "idle"
	ThreadClosed = "closed"
)

// DefaultIdleAfter is how long a thread stays active without activity.
const DefaultIdleAfter = 10 * time.Minute

// History limits: the most recent turns, each answer cut, all within a
// few thousand characters of prompt (about 1,500 tokens).
const (
	maxHistoryTurns = 5
	maxAnswerChars  = 1200
	maxHistoryChars = 6000
	maxFactsPerTurn = 5
	maxThreadTitle  = 120
	threadListLimit = 50
)

// Turn is one earlier question of a thread and what it found.
type Turn struct {
	ResearchID string   `json:"research_id"`
	Question   string   `json:"question"`
	Answer     string   `json:"answer,omitempty"`
	Facts      []string `json:"facts,omitempty"`
}

// ThreadView is a thread with its derived status and its questions in
// order.
type ThreadView struct {
	store.Thread
	Queries []ThreadQuery `json:"queries"`
}

// ThreadQuery is one research of a thread: the question, where it stands
// and, once written, its answer (the report's executive summary).
type ThreadQuery struct {
	ResearchID string    `json:"research_id"`
	Question   string    `json:"question"`
	Status     string    `json:"status"`
	CreatedAt  time.Time `json:"created_at"`
	Answer     string    `json:"answer,omitempty"`
}

// ThreadStatus derives a thread's status at now.
func ThreadStatus(t store.Thread, now time.Time, idleAfter time.Duration) string {
	if idleAfter <= 0 {
		idleAfter = DefaultIdleAfter
	}
	if t.Status == ThreadActive && now.Sub(t.LastActivity) > idleAfter {
		return ThreadIdle
	}
	return t.Status
}

// joinThread returns the thread a new question belongs to and the context
// it brings: a new thread when id is empty, else the named one, which must
// exist and not be closed.
func (rn *Runner) joinThread(ctx context.Context, id, question string, now time.Time) (string, []Turn, error) {
	if id == "" {
		t := store.Thread{ID: uuid.NewString(), Title: threadTitle(question), Status: ThreadActive, CreatedAt: now, LastActivity: now}
		if err := rn.Store.ThreadCreate(ctx, t); err != nil {
			return "", nil, err
		}
		return t.ID, nil, nil
	}
	t, err := rn.Store.ThreadGet(ctx, id)
	if err != nil {
		return "", nil, err
	}
	if t.Status == ThreadClosed {
		return "", nil, errcode.New(errcode.Conflict, "thread", fmt.Sprintf("%s is closed and takes no new questions; ask without --thread to start a new one", id))
	}
	hist, err := rn.history(ctx, id)
	if err != nil {
		return "", nil, err
	}
	if err := rn.Store.ThreadTouch(ctx, id, now); err != nil {
		return "", nil, err
	}
	return id, hist, nil
}

var renderedCitation = regexp.MustCompile(`\s*\[[0-9]{1,6}\]`)

// history is the context a follow-up gets: the thread's completed
// researches, newest kept first within the limits, returned oldest first.
func (rn *Runner) history(ctx context.Context, threadID string) ([]Turn, error) {
	rs, err := rn.Store.ThreadResearches(ctx, threadID)
	if err != nil {
		return nil, err
	}
	var turns []Turn
	size := 0
	for i := len(rs) - 1; i >= 0 && len(turns) < maxHistoryTurns; i-- {
		if rs[i].Status != StatusCompleted {
			continue
		}
		r, err := Load(ctx, rn.Store, rs[i].ID)
		if err != nil {
			return nil, err
		}
		t := Turn{ResearchID: r.ID, Question: r.Question}
		if r.Report != nil {
			// The old report's [n] numbers mean nothing in a new one.
			t.Answer = clipRunes(renderedCitation.ReplaceAllString(r.Report.Summary, ""), maxAnswerChars)
		}
		for _, f := range writerFacts(r.Facts) {
			if len(t.Facts) == maxFactsPerTurn {
				break
			}
			t.Facts = append(t.Facts, clipRunes(f.Text, 200))
		}
		n := len(t.Question) + len(t.Answer)
		for _, f := range t.Facts {
			n += len(f)
		}
		if size+n > maxHistoryChars && len(turns) > 0 {
			break
		}
		size += n
		turns = append(turns, t)
	}
	for i, j := 0, len(turns)-1; i < j; i, j = i+1, j-1 {
		turns[i], turns[j] = turns[j], turns[i]
	}
	return turns, nil
}

// Thread returns a thread with its queries and answers in order.
func (rn *Runner) Thread(ctx context.Context, id string) (*ThreadView, error) {
	t, err := rn.Store.ThreadGet(ctx, id)
	if err != nil {
		return nil, err
	}
	t.Status = ThreadStatus(*t, rn.now(), rn.IdleAfter)
	rs, err := rn.Store.ThreadResearches(ctx, id)
	if err != nil {
		return nil, err
	}
	v := &ThreadView{Thread: *t, Queries: []ThreadQuery{}}
	for _, rec := range rs {
		q := ThreadQuery{ResearchID: rec.ID, Question: rec.Question, Status: rec.Status, CreatedAt: rec.CreatedAt}
		if rec.Status == StatusCompleted {
			r, err := Load(ctx, rn.Store, rec.ID)
			if err != nil {
				return nil, err
			}
			if r.Report != nil {
				q.Answer = r.Report.Summary
			}
		}
		v.Queries = append(v.Queries, q)
	}
	return v, nil
}

// Threads lists threads, most recently active first, with derived status.
func (rn *Runner) Threads(ctx context.Context, limit int) ([]store.Thread, error) {
	if limit <= 0 {
		limit = threadListLimit
	}
	ts, err := rn.Store.ThreadList(ctx, limit)
	if err != nil {
		return nil, err
	}
	now := rn.now()
	for i := range ts {
		ts[i].Status = ThreadStatus(ts[i], now, rn.IdleAfter)
	}
	return ts, nil
}

// CloseThread closes a thread: it keeps its questions and answers and
// takes no new ones.
func (rn *Runner) CloseThread(ctx context.Context, id string) error {
	t, err := rn.Store.ThreadGet(ctx, id)
	if err != nil {
		return err
	}
	if t.Status == ThreadClosed {
		return errcode.New(errcode.Conflict, "thread", fmt.Sprintf("%s is already closed", id))
	}
	if err := rn.Store.ThreadClose(ctx, id); err != nil && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	return nil
}

func threadTitle(q string) string { return clipRunes(q, maxThreadTitle) }

// clipRunes cuts s to at most n runes, marking a cut with "…".
func clipRunes(s string, n int) string {
	s = strings.TrimSpace(s)
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return strings.TrimSpace(string([]rune(s)[:n-1])) + "…"
}

// historyText renders turns for a prompt.
func historyText(turns []Turn) string {
	var b strings.Builder
	for _, t := range turns {
		fmt.Fprintf(&b, "Q: %s\n", t.Question)
		if t.Answer != "" {
			fmt.Fprintf(&b, "A: %s\n", t.Answer)
		}
		for _, f := range t.Facts {
			fmt.Fprintf(&b, "- %s\n", f)
		}
	}
	return b.String()
}
