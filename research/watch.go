package research

import (
	"context"
	"encoding/json"

	"github.com/quarryhq/quarry/events"
	"github.com/quarryhq/quarry/store"
)

// WatchOptions tune Watch; Watch sets their Ends and Ended itself (a
// research ends with a status event to completed, failed or canceled).
type WatchOptions = events.WatchOptions

// Watch calls fn with a research's events after opt.After (events.Watch):
// the stored ones first, then the new ones as they are stored, each once
// and in sequence order, until the research ends (completed, failed or
// canceled), fn returns an error, or ctx ends.
func Watch(ctx context.Context, st store.ResearchStore, id string, opt WatchOptions, fn func(store.ResearchEvent) error) error {
	opt.Ends, opt.Ended = terminal, ended
	return events.Watch(ctx, st, id, opt, fn)
}

// ended reports a status a research does not leave by itself.
func ended(status string) bool {
	switch status {
	case StatusCompleted, StatusFailed, StatusCanceled:
		return true
	}
	return false
}

// terminal reports whether e ends a run: a status event to completed,
// failed or canceled.
func terminal(e store.ResearchEvent) bool {
	if e.Type != EventStatus {
		return false
	}
	var ev Event
	if json.Unmarshal(e.Data, &ev) != nil || ev.Status == nil {
		return false
	}
	switch ev.Status.Status {
	case StatusCompleted, StatusFailed, StatusCanceled:
		return true
	}
	return false
}
