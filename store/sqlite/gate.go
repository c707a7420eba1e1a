package sqlite

import (
	"context"
	"database/sql/driver"
	"errors"
	"strings"
	"sync"
	"time"
)

// A writeGate queues one process's writers to its SQLite database.
//
// SQLite admits one writer at a time. A writer that finds the lock taken
// sleeps in SQLite's busy handler — 1, 2, 5, 10, … up to 100 ms between
// tries — however soon the lock is freed, so two researches checkpointing
// and River fetching its next job spend much of their time asleep. Writers
// of one process wait here instead, and the next starts the moment the last
// one ends. Writers in other processes on the same file still meet the busy
// handler, and a writer that has waited busyWait here goes on to meet it
// too, so nothing waits longer than it did without the gate.
type writeGate struct {
	ch   chan struct{}
	wait time.Duration
}

func newWriteGate(wait time.Duration) *writeGate {
	return &writeGate{ch: make(chan struct{}, 1), wait: wait}
}

// enter waits for the gate; it reports whether it holds it (not when ctx
// ends or the wait runs out: the statement then meets SQLite's own lock).
func (g *writeGate) enter(ctx context.Context) bool {
	select {
	case g.ch <- struct{}{}:
		return true
	default:
	}
	t := time.NewTimer(g.wait)
	defer t.Stop()
	select {
	case g.ch <- struct{}{}:
		return true
	case <-ctx.Done():
	case <-t.C:
	}
	return false
}

func (g *writeGate) leave() { <-g.ch }

// writes reports whether a statement run outside a transaction may write:
// anything but SELECT, PRAGMA, EXPLAIN and VALUES, and a WITH that names no
// INSERT, UPDATE, DELETE or REPLACE. A read taken for a write only waits its
// turn; a write taken for a read meets SQLite's lock as before.
func writes(query string) bool {
	q := skipComments(query)
	end := strings.IndexFunc(q, func(r rune) bool { return !isWordRune(r) })
	if end < 0 {
		end = len(q)
	}
	switch strings.ToUpper(q[:end]) {
	case "SELECT", "PRAGMA", "EXPLAIN", "VALUES":
		return false
	case "WITH":
		for _, w := range strings.FieldsFunc(strings.ToUpper(q), func(r rune) bool { return !isWordRune(r) }) {
			switch w {
			case "INSERT", "UPDATE", "DELETE", "REPLACE":
				return true
			}
		}
		return false
	}
	return true
}

func isWordRune(r rune) bool {
	return r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
}

// skipComments drops leading space and SQL comments.
func skipComments(q string) string {
	for {
		q = strings.TrimLeft(q, " \t\r\n(")
		switch {
		case strings.HasPrefix(q, "--"):
			i := strings.IndexByte(q, '\n')
			if i < 0 {
				return ""
			}
			q = q[i+1:]
		case strings.HasPrefix(q, "/*"):
			i := strings.Index(q, "*/")
			if i < 0 {
				return ""
			}
			q = q[i+2:]
		default:
			return q
		}
	}
}

// gatedConnector opens connections whose writes pass the gate.
type gatedConnector struct {
	driver.Connector
	gate *writeGate
}

func (c gatedConnector) Connect(ctx context.Context) (driver.Conn, error) {
	cn, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	inner, ok := cn.(innerConn)
	if !ok {
		_ = cn.Close()
		return nil, errors.New("sqlite: the driver's connection lacks a context method")
	}
	return &gatedConn{innerConn: inner, gate: c.gate}, nil
}

// innerConn is what the SQLite driver's connection implements and
// database/sql uses.
type innerConn interface {
	driver.Conn
	driver.ConnBeginTx
	driver.ConnPrepareContext
	driver.ExecerContext
	driver.QueryerContext
	driver.Pinger
	driver.SessionResetter
	driver.Validator
}

// gatedConn is one connection. database/sql uses a connection from one
// goroutine at a time, so inTx needs no lock.
type gatedConn struct {
	innerConn
	gate *writeGate
	inTx bool
}

func (c *gatedConn) Begin() (driver.Tx, error) {
	return c.BeginTx(context.Background(), driver.TxOptions{})
}

// BeginTx enters the gate for a writing transaction (every transaction
// begins IMMEDIATE here but a read-only one) until it commits or rolls back.
func (c *gatedConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	held := !opts.ReadOnly && c.gate.enter(ctx)
	tx, err := c.innerConn.BeginTx(ctx, opts)
	if err != nil {
		if held {
			c.gate.leave()
		}
		return nil, err
	}
	c.inTx = true
	return &gatedTx{Tx: tx, c: c, held: held}, nil
}

type gatedTx struct {
	driver.Tx
	c    *gatedConn
	held bool
}

func (t *gatedTx) Commit() error   { defer t.end(); return t.Tx.Commit() }
func (t *gatedTx) Rollback() error { defer t.end(); return t.Tx.Rollback() }

func (t *gatedTx) end() {
	t.c.inTx = false
	if t.held {
		t.held = false
		t.c.gate.leave()
	}
}

// enter holds the gate for one statement outside a transaction that may
// write; the returned func, nil when it holds nothing, lets go of it.
func (c *gatedConn) enter(ctx context.Context, query string) func() {
	if c.inTx || !writes(query) || !c.gate.enter(ctx) {
		return nil
	}
	return sync.OnceFunc(c.gate.leave)
}

func (c *gatedConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	if leave := c.enter(ctx, query); leave != nil {
		defer leave()
	}
	return c.innerConn.ExecContext(ctx, query, args)
}

func (c *gatedConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	leave := c.enter(ctx, query)
	rows, err := c.innerConn.QueryContext(ctx, query, args)
	return gateRows(rows, err, leave)
}

// gateRows keeps the gate until the rows of a write (RETURNING) close.
func gateRows(rows driver.Rows, err error, leave func()) (driver.Rows, error) {
	switch {
	case leave == nil:
		return rows, err
	case err != nil:
		leave()
		return nil, err
	}
	return &gatedRows{Rows: rows, leave: leave}, nil
}

func (c *gatedConn) Prepare(query string) (driver.Stmt, error) {
	return c.PrepareContext(context.Background(), query)
}

func (c *gatedConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	s, err := c.innerConn.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	inner, ok := s.(innerStmt)
	if !ok {
		_ = s.Close()
		return nil, errors.New("sqlite: the driver's statement lacks a context method")
	}
	return &gatedStmt{innerStmt: inner, c: c, query: query}, nil
}

type innerStmt interface {
	driver.Stmt
	driver.StmtExecContext
	driver.StmtQueryContext
}

type gatedStmt struct {
	innerStmt
	c     *gatedConn
	query string
}

func (s *gatedStmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	if leave := s.c.enter(ctx, s.query); leave != nil {
		defer leave()
	}
	return s.innerStmt.ExecContext(ctx, args)
}

func (s *gatedStmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	leave := s.c.enter(ctx, s.query)
	rows, err := s.innerStmt.QueryContext(ctx, args)
	return gateRows(rows, err, leave)
}

// gatedRows lets go of the gate when closed, and keeps the driver's column
// types.
type gatedRows struct {
	driver.Rows
	leave func()
}

func (r *gatedRows) Close() error { defer r.leave(); return r.Rows.Close() }

func (r *gatedRows) ColumnTypeDatabaseTypeName(i int) string {
	if t, ok := r.Rows.(driver.RowsColumnTypeDatabaseTypeName); ok {
		return t.ColumnTypeDatabaseTypeName(i)
	}
	return ""
}

func (r *gatedRows) ColumnTypeNullable(i int) (nullable, ok bool) {
	if t, ok := r.Rows.(driver.RowsColumnTypeNullable); ok {
		return t.ColumnTypeNullable(i)
	}
	return false, false
}
