package fetch

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/temoto/robotstxt"
)

type robotsEntry struct {
	ready   chan struct{}
	data    *robotstxt.RobotsData
	err     error
	expires time.Time
}

// robotsRetry is how long a robots.txt that answered 5xx or could not be
// reached stays cached, so a failing host is not asked once per page.
const robotsRetry = time.Minute

// maxRobotsBytes caps robots.txt (Google reads the first 500 KiB).
const maxRobotsBytes = 500 << 10

// allowed checks u against its host's robots.txt, fetching and caching it.
func (f *Fetcher) allowed(ctx context.Context, u *url.URL) error {
	data, err := f.Robots(ctx, u)
	if err != nil {
		return err
	}
	path := u.EscapedPath()
	if path == "" {
		path = "/"
	}
	if u.RawQuery != "" {
		path += "?" + u.RawQuery
	}
	if !data.TestAgent(path, Agent) {
		return fmt.Errorf("fetch %s: %w", Redact(u), ErrDisallowed)
	}
	return nil
}

// Robots returns the parsed robots.txt of u's host, and applies its
// Crawl-delay when it is read. Per RFC 9309 a missing file (4xx) allows
// everything and a server error (5xx) disallows everything; a 5xx or a
// network error is kept for robotsRetry, then asked again.
func (f *Fetcher) Robots(ctx context.Context, u *url.URL) (*robotstxt.RobotsData, error) {
	origin := &url.URL{Scheme: u.Scheme, Host: u.Host}
	key := origin.String()
	f.mu.Lock()
	e, ok := f.robots[key]
	if ok {
		select {
		case <-e.ready:
			if time.Now().After(e.expires) {
				ok = false
			}
		default:
		}
	}
	if !ok {
		e = &robotsEntry{ready: make(chan struct{})}
		f.robots[key] = e
		f.mu.Unlock()
		var temporary bool
		e.data, temporary, e.err = f.fetchRobots(ctx, origin)
		e.expires = time.Now().Add(f.opt.RobotsTTL)
		switch {
		case e.err != nil && ctx.Err() != nil:
			// This caller gave up; the next one asks again.
			f.mu.Lock()
			if f.robots[key] == e {
				delete(f.robots, key)
			}
			f.mu.Unlock()
		case e.err != nil || temporary:
			e.expires = time.Now().Add(min(robotsRetry, f.opt.RobotsTTL))
		}
		if e.data != nil {
			if g := e.data.FindGroup(Agent); g != nil && g.CrawlDelay > 0 {
				f.slowDown(u.Host, g.CrawlDelay)
			}
		}
		close(e.ready)
	} else {
		f.mu.Unlock()
		select {
		case <-e.ready:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return e.data, e.err
}

func (f *Fetcher) fetchRobots(ctx context.Context, origin *url.URL) (data *robotstxt.RobotsData, temporary bool, err error) {
	// No politeness slot: robots.txt is read once per host per TTL, and a
	// redirect checked while the page holds the host's slot must not wait.
	// The URL is built, not parsed from a string: a host such as
	// "[::1%lo]" does not survive a round trip through String and Parse.
	u := &url.URL{Scheme: origin.Scheme, Host: origin.Host, Path: "/robots.txt"}
	ctx, cancel := context.WithTimeout(ctx, f.opt.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, false, err
	}
	req.Header.Set("User-Agent", f.opt.UserAgent)
	resp, err := f.client.Do(req)
	if err != nil {
		return nil, false, f.wrap(Redact(u), err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxRobotsBytes))
	if err != nil {
		return nil, false, fmt.Errorf("fetch %s: %w", Redact(u), err)
	}
	data, err = robotstxt.FromStatusAndBytes(resp.StatusCode, body)
	if err != nil {
		// An unparsable file is treated like a missing one.
		f.opt.Logger.Warn("robots.txt does not parse; treating as allow-all", "url", Redact(u), "err", err)
		if data, err = robotstxt.FromStatusAndBytes(http.StatusNotFound, nil); err != nil {
			return nil, false, fmt.Errorf("robots.txt of %s: %w", Redact(u), err)
		}
	}
	return data, resp.StatusCode >= 500, nil
}

// RobotsSitemaps returns the Sitemap lines of u's host's robots.txt (none
// when it cannot be read).
func (f *Fetcher) RobotsSitemaps(ctx context.Context, u *url.URL) []string {
	data, err := f.Robots(ctx, u)
	if err != nil || data == nil {
		return nil
	}
	return data.Sitemaps
}
