package fetch

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"sync/atomic"
	"testing"
	"time"
)

// fuzzSite is a site on 127.0.0.1, the one address the fuzzed fetcher may
// reach: /robots.txt serves robots, /r redirects to location, anything else
// is a page.
func fuzzSite(f *testing.F, robots, location *atomic.Pointer[string]) (*httptest.Server, *Fetcher) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			if robots != nil && robots.Load() != nil {
				fmt.Fprint(w, *robots.Load())
				return
			}
			http.NotFound(w, r)
		case "/r":
			if location != nil && location.Load() != nil {
				w.Header()["Location"] = []string{*location.Load()}
			}
			w.WriteHeader(http.StatusFound)
		default:
			fmt.Fprint(w, "page")
		}
	}))
	f.Cleanup(srv.Close)
	fe := New(Options{
		Timeout: 2 * time.Second, Resolver: noDNS, PerHost: -1,
		AllowPrefixes: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")},
	})
	return srv, fe
}

// checkReached fails when a fetch succeeded anywhere but the fuzz site:
// every other address is internal (refused by the guard) or a name no
// resolver answers.
func checkReached(t *testing.T, resp *Response, err error, what string) {
	t.Helper()
	if err != nil {
		return
	}
	if resp == nil {
		t.Fatalf("%s: nil response and nil error", what)
	}
	// Under -fuzz the seeds name the coordinator's server, another port
	// on the same allowed address.
	if got, perr := url.Parse(resp.URL); perr != nil || got.Hostname() != "127.0.0.1" {
		t.Fatalf("%s: fetched %q, outside the one allowed address 127.0.0.1", what, resp.URL)
	}
}

// FuzzGet feeds any URL to a guarded fetcher: it must return a response
// from the allowed host or an error, never panic or reach anything else.
func FuzzGet(f *testing.F) {
	srv, fe := fuzzSite(f, nil, nil)
	for _, s := range []string{
		srv.URL + "/a?key=secret", "http://[::1%25lo]:18081/", "http://[::127.0.0.1]/", "http://[::ffff:127.0.0.1]:80/",
		"http://0x7f000001/", "http://127.1/", "https://[fe80::1%25eth0]/", "http://[64:ff9b::a9fe:a9fe]/",
		"http://user:pass@10.0.0.1/", "ftp://example.com/", "http://%zz/", "http://[::1/", "http://a b/", "//x", "",
	} {
		f.Add(s, false)
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, raw string, robots bool) {
		resp, err := fe.Get(context.Background(), Request{URL: raw, IgnoreRobots: !robots})
		checkReached(t, resp, err, raw)
		if u, perr := url.Parse(raw); perr == nil {
			_ = fe.RobotsSitemaps(context.Background(), u)
		}
	})
}

// FuzzRobots serves any robots.txt and asks the fetcher about any path.
func FuzzRobots(f *testing.F) {
	var robots atomic.Pointer[string]
	srv, _ := fuzzSite(f, &robots, nil)
	for _, s := range []string{
		"User-agent: *\nDisallow: /", "User-agent: QuarryBot\nAllow: /\nCrawl-delay: 9999999999\nSitemap: ::::",
		"\xff\xfe\x00garbage", "User-agent: *\nDisallow: /%zz\nDisallow: *$",
	} {
		f.Add(s, "/x")
		f.Add(s, "/%zz?q=1")
	}
	f.Fuzz(func(t *testing.T, body, path string) {
		robots.Store(&body)
		// A fresh fetcher each time: robots.txt is cached per host.
		fe := New(Options{
			Timeout: 2 * time.Second, Resolver: noDNS, PerHost: -1, Delay: time.Millisecond,
			AllowPrefixes: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")},
		})
		resp, err := fe.Get(context.Background(), Request{URL: srv.URL + "/" + path})
		checkReached(t, resp, err, path)
		u, _ := url.Parse(srv.URL)
		_ = fe.RobotsSitemaps(context.Background(), u)
	})
}

// FuzzRedirect follows any Location header with the guard on.
func FuzzRedirect(f *testing.F) {
	var location atomic.Pointer[string]
	srv, fe := fuzzSite(f, nil, &location)
	for _, s := range []string{
		srv.URL + "/page", "/page", "//127.0.0.1/", "http://[::1%25lo]:18081/", "http://[::127.0.0.1]/x",
		"http://169.254.169.254/latest", "javascript:alert(1)", "file:///etc/passwd", "http://localhost/",
		"http://[::ffff:a00:1]/", "\x00", "/r", "http://%zz",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, loc string) {
		location.Store(&loc)
		resp, err := fe.Get(context.Background(), Request{URL: srv.URL + "/r"})
		checkReached(t, resp, err, loc)
	})
}
