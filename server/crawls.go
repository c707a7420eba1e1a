package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/quarryhq/quarry/crawl"
	"github.com/quarryhq/quarry/errcode"
	"github.com/quarryhq/quarry/fetch"
	"github.com/quarryhq/quarry/jobs"
	"github.com/quarryhq/quarry/store"
)

type crawlRequest struct {
	URL         string `json:"url"`
	MaxPages    *int   `json:"max_pages"`
	MaxDepth    *int   `json:"max_depth"`
	Concurrency *int   `json:"concurrency"`
	Delay       string `json:"delay"`
	NoSitemap   bool   `json:"no_sitemap"`
	WholeHost   bool   `json:"whole_host"`
}

// startCrawl starts a crawl of a site into the knowledge base and returns
// at once; its crawl log (GET …/crawls) follows it. The URL passes the
// SSRF guard before anything is fetched.
func (s *Server) startCrawl(w http.ResponseWriter, r *http.Request) error {
	var req crawlRequest
	if err := s.decode(w, r, &req); err != nil {
		return err
	}
	opt, delay, u, err := s.crawlOptions(r.Context(), req)
	if err != nil {
		return err
	}
	_, k, err := s.kbOf(r)
	if err != nil {
		return err
	}
	if _, err := s.app.EmbedderFor(k); err != nil {
		return err
	}
	// A River job: whichever process runs jobs on this store crawls it,
	// one crawl of a knowledge base at a time across all of them.
	queued, err := s.jobs.EnqueueCrawl(r.Context(), jobs.CrawlArgs{KB: k.Name, URL: u.String(), Options: opt, Delay: delay})
	if err != nil {
		return err
	}
	if !queued {
		return errcode.New(errcode.Conflict, "name", fmt.Sprintf("knowledge base %q is being crawled; wait for that crawl to end (GET /v1/knowledge-bases/%s/crawls)", k.Name, k.Name))
	}
	w.Header().Set("Location", "/v1/knowledge-bases/"+k.Name+"/crawls")
	s.writeJSON(w, http.StatusAccepted, map[string]any{"knowledge_base": k.Name, "url": fetch.Redact(u), "status": "queued",
		"links": map[string]string{"logs": "/v1/knowledge-bases/" + k.Name + "/crawls"}})
	return nil
}

// crawlOptions validates a crawl's request: its options, its delay and its
// URL, which must pass the SSRF guard.
func (s *Server) crawlOptions(ctx context.Context, req crawlRequest) (crawl.Options, time.Duration, *url.URL, error) {
	opt := crawl.Options{MaxPages: 500, MaxDepth: 5, Concurrency: 4, NoSitemap: req.NoSitemap, WholeHost: req.WholeHost}
	for dst, v := range map[*int]*int{&opt.MaxPages: req.MaxPages, &opt.MaxDepth: req.MaxDepth, &opt.Concurrency: req.Concurrency} {
		if v != nil {
			*dst = *v
		}
	}
	if err := opt.Validate(); err != nil {
		return opt, 0, nil, err
	}
	delay := 250 * time.Millisecond
	if req.Delay != "" {
		d, err := time.ParseDuration(req.Delay)
		if err != nil || d < 0 || d > fetch.MaxDelay {
			return opt, 0, nil, invalid("delay", fmt.Sprintf("must be a duration such as \"250ms\", from 0 to %s, got %q", fetch.MaxDelay, req.Delay))
		}
		delay = d
	}
	u, err := fetch.ParseURL(req.URL)
	if err != nil {
		return opt, 0, nil, invalid("url", strings.TrimPrefix(err.Error(), "url "))
	}
	if err := s.guardHost(ctx, u, "url"); err != nil {
		return opt, 0, nil, err
	}
	return opt, delay, u, nil
}

type scheduleRequest struct {
	crawlRequest
	// Every is the time between crawls ("5m" when empty).
	Every string `json:"every"`
}

// putSchedule sets the knowledge base's re-crawl schedule; its first run
// is due at once, queued by whichever process runs jobs on this store.
func (s *Server) putSchedule(w http.ResponseWriter, r *http.Request) error {
	var req scheduleRequest
	if err := s.decode(w, r, &req); err != nil {
		return err
	}
	every := jobs.DefaultEvery
	if req.Every != "" {
		d, err := time.ParseDuration(req.Every)
		if err != nil || d < time.Second {
			return invalid("every", fmt.Sprintf("must be a duration of at least 1s such as \"5m\", got %q", req.Every))
		}
		every = d
	}
	opt, delay, u, err := s.crawlOptions(r.Context(), req.crawlRequest)
	if err != nil {
		return err
	}
	_, k, err := s.kbOf(r)
	if err != nil {
		return err
	}
	sc, err := jobs.SetSchedule(r.Context(), s.store, k.ID, jobs.ScheduleSpec{URL: u.String(), Every: every, Options: opt, Delay: delay})
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, jobs.View(sc))
	return nil
}

func (s *Server) getSchedule(w http.ResponseWriter, r *http.Request) error {
	_, k, err := s.kbOf(r)
	if err != nil {
		return err
	}
	sc, err := s.store.ScheduleGet(r.Context(), k.ID)
	if errors.Is(err, store.ErrNotFound) {
		err = errcode.New(errcode.NotFound, "name", fmt.Sprintf("knowledge base %q has no crawl schedule (PUT one to this path)", k.Name))
	}
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, jobs.View(sc))
	return nil
}

func (s *Server) deleteSchedule(w http.ResponseWriter, r *http.Request) error {
	_, k, err := s.kbOf(r)
	if err == nil {
		err = s.store.ScheduleDelete(r.Context(), k.ID)
	}
	if err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// guardHost refuses a URL whose host is or resolves to an address the
// SSRF guard blocks; field names the request field in the error. (The
// fetcher refuses it again at dial time, for redirects and DNS changes.)
func (s *Server) guardHost(ctx context.Context, u *url.URL, field string) error {
	if s.app.Config.AllowPrivate {
		return nil
	}
	host := u.Hostname()
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{a}
	} else {
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		addrs, err = net.DefaultResolver.LookupNetIP(rctx, "ip", host)
		if err != nil {
			return invalid(field, fmt.Sprintf("host %q cannot be resolved: %v", host, err))
		}
	}
	for _, a := range addrs {
		if err := fetch.Check(a.Unmap()); err != nil {
			return invalid(field, err.Error())
		}
	}
	return nil
}

func (s *Server) crawlLogs(w http.ResponseWriter, r *http.Request) error {
	limit, err := intParam(r, "limit", 20, 1, 10000)
	if err != nil {
		return err
	}
	_, k, err := s.kbOf(r)
	if err != nil {
		return err
	}
	logs, err := s.store.CrawlLogList(r.Context(), k.ID, limit)
	if err != nil {
		return err
	}
	if logs == nil {
		logs = []store.CrawlLog{}
	}
	s.writeJSON(w, http.StatusOK, page[store.CrawlLog]{Items: logs})
	return nil
}
