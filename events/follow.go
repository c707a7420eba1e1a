package events

import (
	"context"
	"log/slog"

	"github.com/quarryhq/quarry/internal/safe"
	"github.com/quarryhq/quarry/store"
)

// Listener is a store that announces stored events across processes
// (PostgreSQL's LISTEN/NOTIFY).
type Listener interface {
	ListenEvents(ctx context.Context, fn func(researchID string)) error
}

// Follow publishes into b the events other processes store, as the store
// announces them, for the researches someone in this process watches; it
// returns when ctx ends or the listening fails. A watcher reads a
// research's history from the store itself: Follow brings only what is
// new, never the whole log again.
func Follow(ctx context.Context, st store.ResearchStore, l Listener, b *Broker, logger *slog.Logger) error {
	last := map[string]int64{}
	return l.ListenEvents(ctx, func(id string) {
		// Any client of the database can notify: a panic bringing one
		// research's events is logged, and the listening goes on.
		if err := safe.Do(func() { follow(ctx, st, b, logger, last, id) }); err != nil {
			logger.Error("follow events: panic", "research", id, "err", err, "stack", string(safe.Stack(err)))
		}
	})
}

// follow publishes into b research id's events stored since last[id].
func follow(ctx context.Context, st store.ResearchStore, b *Broker, logger *slog.Logger, last map[string]int64, id string) {
	if b.Subscribers(id) == 0 {
		delete(last, id)
		return
	}
	if _, ok := last[id]; !ok {
		n, err := st.ResearchLastSeq(ctx, id)
		if err != nil {
			logger.Warn("follow events", "research", id, "err", err)
			return
		}
		last[id] = max(0, n-1)
	}
	evs, err := st.ResearchEvents(ctx, id, last[id])
	if err != nil {
		logger.Warn("follow events", "research", id, "err", err)
		return
	}
	for _, e := range evs {
		b.Publish(id, e)
		last[id] = e.Seq
	}
}
