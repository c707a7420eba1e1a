package sqlstore

import (
	"context"
	"fmt"
	"time"

	"github.com/quarryhq/quarry/store"
)

// CrawlLogCreate starts a crawl log in the running state.
func (s *DB) CrawlLogCreate(ctx context.Context, kbID int64, url string, startedAt time.Time) (*store.CrawlLog, error) {
	l := &store.CrawlLog{KBID: kbID, URL: url, Status: store.CrawlRunning, StartedAt: startedAt.UTC()}
	err := s.SQL.QueryRowContext(ctx, s.q(`INSERT INTO crawl_logs (kb_id, url, status, started_at) VALUES (?, ?, ?, ?) RETURNING id`),
		kbID, url, l.Status, s.tm(l.StartedAt)).Scan(&l.ID)
	if err != nil {
		return nil, fmt.Errorf("crawl log create: %w", err)
	}
	return l, nil
}

// CrawlLogUpdate sets a crawl log's status and counters.
func (s *DB) CrawlLogUpdate(ctx context.Context, p store.CrawlLogUpdateParams) error {
	switch p.Status {
	case store.CrawlRunning, store.CrawlSuccess, store.CrawlFailed:
	default:
		return fmt.Errorf("crawl log update: %w", &store.ValidationError{Field: "status", Rule: "must be running, success or failed"})
	}
	res, err := s.SQL.ExecContext(ctx, s.q(`UPDATE crawl_logs SET status = ?, pages_crawled = ?, pages_updated = ?, pages_failed = ?,
		error_message = ?, duration_seconds = ?, finished_at = ? WHERE id = ?`),
		p.Status, p.PagesCrawled, p.PagesUpdated, p.PagesFailed, p.ErrorMessage, p.DurationSeconds, s.tmp(p.FinishedAt), p.ID)
	if err != nil {
		return fmt.Errorf("crawl log update: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("crawl log %d: %w", p.ID, store.ErrNotFound)
	}
	return nil
}

// CrawlLogList returns a KB's crawl logs, newest first.
func (s *DB) CrawlLogList(ctx context.Context, kbID int64, limit int) ([]store.CrawlLog, error) {
	if limit <= 0 {
		limit = 100
	}
	return list(ctx, s.SQL, "crawl log list", s.q(`SELECT id, kb_id, url, status, pages_crawled, pages_updated, pages_failed, error_message, duration_seconds, started_at, finished_at
		FROM crawl_logs WHERE kb_id = ? ORDER BY started_at DESC, id DESC LIMIT ?`), []any{kbID, limit}, func(r rowScanner) (store.CrawlLog, error) {
		var l store.CrawlLog
		var st, ft scanTime
		err := r.Scan(&l.ID, &l.KBID, &l.URL, &l.Status, &l.PagesCrawled, &l.PagesUpdated, &l.PagesFailed, &l.ErrorMessage, &l.DurationSeconds, &st, &ft)
		l.StartedAt, l.FinishedAt = st.T, ft.ptr()
		return l, err
	})
}

// CrawlLogPurge deletes logs started before olderThan (90 days).
func (s *DB) CrawlLogPurge(ctx context.Context, olderThan time.Time) (int, error) {
	res, err := s.SQL.ExecContext(ctx, s.q(`DELETE FROM crawl_logs WHERE started_at < ?`), s.tm(olderThan))
	if err != nil {
		return 0, fmt.Errorf("crawl log purge: %w", err)
	}
	n, _ := res.RowsAffected()
	return int(n), nil
}

// CrawlPendingList returns the pages found but not fetched yet.
func (s *DB) CrawlPendingList(ctx context.Context, kbID int64) ([]store.PendingPage, error) {
	return list(ctx, s.SQL, "crawl pending", s.q(`SELECT url, depth, fail_count FROM crawl_pending WHERE kb_id = ? ORDER BY url`), []any{kbID}, func(r rowScanner) (store.PendingPage, error) {
		var p store.PendingPage
		err := r.Scan(&p.URL, &p.Depth, &p.FailCount)
		return p, err
	})
}

// CrawlPendingFail counts a failed run for a page not fetched yet.
func (s *DB) CrawlPendingFail(ctx context.Context, kbID int64, url string, depth, giveUpAfter int) (bool, error) {
	tx, err := s.dialect.BeginWrite(ctx, s.SQL)
	if err != nil {
		return false, fmt.Errorf("crawl pending %q: %w", url, err)
	}
	defer func() { _ = tx.Rollback() }()
	var n int
	err = tx.QueryRowContext(ctx, s.q(`INSERT INTO crawl_pending (kb_id, url, depth, fail_count) VALUES (?, ?, ?, 1)
		ON CONFLICT (kb_id, url) DO UPDATE SET fail_count = crawl_pending.fail_count + 1,
			depth = CASE WHEN excluded.depth < crawl_pending.depth THEN excluded.depth ELSE crawl_pending.depth END
		RETURNING fail_count`), kbID, url, depth).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("crawl pending %q: %w", url, err)
	}
	dropped := n >= giveUpAfter
	if dropped {
		if _, err := tx.ExecContext(ctx, s.q(`DELETE FROM crawl_pending WHERE kb_id = ? AND url = ?`), kbID, url); err != nil {
			return false, fmt.Errorf("crawl pending %q: %w", url, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("crawl pending %q: %w", url, err)
	}
	return dropped, nil
}

// CrawlPendingDone removes a page that has now been fetched.
func (s *DB) CrawlPendingDone(ctx context.Context, kbID int64, url string) error {
	if _, err := s.SQL.ExecContext(ctx, s.q(`DELETE FROM crawl_pending WHERE kb_id = ? AND url = ?`), kbID, url); err != nil {
		return fmt.Errorf("crawl pending %q: %w", url, err)
	}
	return nil
}
