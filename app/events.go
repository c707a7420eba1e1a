package app

import (
	"context"
	"sync"
	"time"

	"github.com/quarryhq/quarry/events"
	"github.com/quarryhq/quarry/internal/safe"
	"github.com/quarryhq/quarry/research"
	"github.com/quarryhq/quarry/store"
)

// FollowEvents, on a store that announces stored events, publishes the
// events other processes store into a.Broker as they are stored, for the
// researches someone here watches (events.Follow); it returns when ctx
// ends. On a store that does not, it returns at once (watchers read the
// store instead). A panic while following (in the store's driver, say) is
// its error, with the stack logged: the process and its watchers go on,
// reading the store.
func (a *App) FollowEvents(ctx context.Context) error {
	err := safe.Call(func() error { return a.followEvents(ctx) })
	if stack := safe.Stack(err); stack != nil {
		a.Logger.Error("following stored events panicked", "err", err, "stack", string(stack))
	}
	return err
}

func (a *App) followEvents(ctx context.Context) error {
	st, err := a.Store(ctx)
	if err != nil {
		return err
	}
	l, ok := st.(events.Listener)
	if !ok {
		return nil
	}
	a.mu.Lock()
	a.following++
	a.mu.Unlock()
	defer func() {
		a.mu.Lock()
		a.following--
		a.mu.Unlock()
	}()
	return events.Follow(ctx, st, l, a.Broker, a.Logger)
}

// Watch is research.Watch with what this App has: its broker for the
// researches it runs, and on PostgreSQL the store's notifications for
// those other processes run (read every 250 ms on SQLite).
func (a *App) Watch(ctx context.Context, id string, after int64, fn func(store.ResearchEvent) error) error {
	st, err := a.Store(ctx)
	if err != nil {
		return err
	}
	opt := research.WatchOptions{After: after, Broker: a.Broker, Poll: 250 * time.Millisecond}
	if _, ok := st.(events.Listener); ok {
		opt.Poll = 5 * time.Second // a safety net: notifications bring the events
		a.mu.Lock()
		following := a.following > 0
		a.mu.Unlock()
		if !following {
			fctx, cancel := context.WithCancel(ctx)
			var wg sync.WaitGroup
			wg.Add(1)
			go func() { defer wg.Done(); _ = a.FollowEvents(fctx) }()
			defer func() { cancel(); wg.Wait() }()
		}
	}
	return research.Watch(ctx, st, id, opt, fn)
}
