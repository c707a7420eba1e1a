package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/quarryhq/quarry/store"
)

// SchedulePut creates or replaces a knowledge base's schedule.
func (s *DB) SchedulePut(ctx context.Context, sc store.Schedule) error {
	opts := string(sc.Options)
	if opts == "" {
		opts = "{}"
	}
	_, err := s.SQL.ExecContext(ctx, s.q(`INSERT INTO crawl_schedules (kb_id, url, every_ms, options, enabled, next_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (kb_id) DO UPDATE SET url = excluded.url, every_ms = excluded.every_ms, options = excluded.options,
			enabled = excluded.enabled, next_at = excluded.next_at, updated_at = excluded.updated_at`),
		sc.KBID, sc.URL, sc.Every.Milliseconds(), opts, sc.Enabled, s.tm(sc.NextAt), s.tm(sc.UpdatedAt))
	if err != nil {
		return fmt.Errorf("schedule put: %w", err)
	}
	return nil
}

const scheduleCols = `s.kb_id, k.name, s.url, s.every_ms, s.options, s.enabled, s.next_at, s.updated_at
	FROM crawl_schedules s JOIN knowledge_bases k ON k.id = s.kb_id`

func scanSchedule(sc rowScanner) (store.Schedule, error) {
	var out store.Schedule
	var every int64
	var opts string
	var next, upd scanTime
	if err := sc.Scan(&out.KBID, &out.KB, &out.URL, &every, &opts, &out.Enabled, &next, &upd); err != nil {
		return out, err
	}
	out.Every, out.Options, out.NextAt, out.UpdatedAt = time.Duration(every)*time.Millisecond, []byte(opts), next.T, upd.T
	return out, nil
}

// ScheduleGet returns a knowledge base's schedule.
func (s *DB) ScheduleGet(ctx context.Context, kbID int64) (*store.Schedule, error) {
	sc, err := scanSchedule(s.SQL.QueryRowContext(ctx, s.q(`SELECT `+scheduleCols+` WHERE s.kb_id = ?`), kbID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("schedule of knowledge base %d: %w", kbID, store.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("schedule get: %w", err)
	}
	return &sc, nil
}

// ScheduleDelete removes a knowledge base's schedule.
func (s *DB) ScheduleDelete(ctx context.Context, kbID int64) error {
	if _, err := s.SQL.ExecContext(ctx, s.q(`DELETE FROM crawl_schedules WHERE kb_id = ?`), kbID); err != nil {
		return fmt.Errorf("schedule delete: %w", err)
	}
	return nil
}

// ScheduleDue lists the enabled schedules due at now.
func (s *DB) ScheduleDue(ctx context.Context, now time.Time, limit int) ([]store.Schedule, error) {
	return list(ctx, s.SQL, "schedules due", s.q(`SELECT `+scheduleCols+`
		WHERE s.enabled = ? AND s.next_at <= ? ORDER BY s.next_at LIMIT ?`), []any{true, s.tm(now), limit}, scanSchedule)
}

// ScheduleAdvance moves next_at from from to to if nobody did first.
func (s *DB) ScheduleAdvance(ctx context.Context, kbID int64, from, to time.Time) (bool, error) {
	res, err := s.SQL.ExecContext(ctx, s.q(`UPDATE crawl_schedules SET next_at = ? WHERE kb_id = ? AND next_at = ?`), s.tm(to), kbID, s.tm(from))
	if err != nil {
		return false, fmt.Errorf("schedule advance: %w", err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// Now is the database's clock.
func (s *DB) Now(ctx context.Context) (time.Time, error) {
	var t scanTime
	q := `SELECT strftime('%Y-%m-%dT%H:%M:%fZ', 'now')`
	if s.dialect.Dollar {
		q = `SELECT clock_timestamp()`
	}
	if err := s.SQL.QueryRowContext(ctx, q).Scan(&t); err != nil {
		return time.Time{}, fmt.Errorf("database clock: %w", err)
	}
	return t.T.UTC(), nil
}
