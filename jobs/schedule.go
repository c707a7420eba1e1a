package jobs

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"time"

	"github.com/quarryhq/quarry/crawl"
	"github.com/quarryhq/quarry/fetch"
	"github.com/quarryhq/quarry/store"
)

// DefaultEvery is a schedule's interval when none is given (a
// knowledge base re-crawls its site every 5 minutes).
const DefaultEvery = 5 * time.Minute

// ScheduleSpec is a re-crawl schedule as a user sets it.
type ScheduleSpec struct {
	URL string
	// Every is DefaultEvery when zero; at least 1s.
	Every   time.Duration
	Options crawl.Options
	Delay   time.Duration
}

// SetSchedule validates spec and stores it as kbID's schedule, its first
// run due now (the database's clock); any process running jobs queues it.
func SetSchedule(ctx context.Context, st store.Store, kbID int64, spec ScheduleSpec) (*store.Schedule, error) {
	if spec.Every == 0 {
		spec.Every = DefaultEvery
	}
	if spec.Every < time.Second {
		return nil, &store.ValidationError{Field: "every", Rule: fmt.Sprintf("must be at least 1s, got %s", spec.Every)}
	}
	if spec.Delay < 0 {
		return nil, &store.ValidationError{Field: "delay", Rule: "must not be negative"}
	}
	u, err := fetch.ParseURL(spec.URL)
	if err != nil {
		return nil, &store.ValidationError{Field: "url", Rule: err.Error()}
	}
	if err := spec.Options.Validate(); err != nil {
		return nil, err
	}
	opts, err := json.Marshal(ScheduleOptions{Options: spec.Options, Delay: spec.Delay})
	if err != nil {
		return nil, err
	}
	now, err := st.Now(ctx)
	if err != nil {
		return nil, err
	}
	sc := store.Schedule{KBID: kbID, URL: u.String(), Every: spec.Every, Options: opts, Enabled: true, NextAt: now, UpdatedAt: now}
	if err := st.SchedulePut(ctx, sc); err != nil {
		return nil, err
	}
	return st.ScheduleGet(ctx, kbID)
}

// ScheduleView is a schedule as the CLI and the API show it.
type ScheduleView struct {
	KB           string    `json:"knowledge_base"`
	URL          string    `json:"url"`
	Every        string    `json:"every"`
	EverySeconds float64   `json:"every_seconds"`
	NextAt       time.Time `json:"next_at"`
	UpdatedAt    time.Time `json:"updated_at"`
}

// View is sc as shown: its URL's query values redacted.
func View(sc *store.Schedule) ScheduleView {
	shown := sc.URL
	if u, err := url.Parse(sc.URL); err == nil {
		shown = fetch.Redact(u)
	}
	return ScheduleView{KB: sc.KB, URL: shown, Every: sc.Every.String(), EverySeconds: sc.Every.Seconds(), NextAt: sc.NextAt, UpdatedAt: sc.UpdatedAt}
}
