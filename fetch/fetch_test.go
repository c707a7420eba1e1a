package fetch

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func open(t *testing.T, h http.Handler) *httptest.Server {
	t.Helper()
	s := httptest.NewServer(h)
	t.Cleanup(s.Close)
	return s
}

func loopback() *Fetcher { return New(Options{AllowPrivate: true, PerHost: -1}) }

func TestBlockedReason(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"127.0.0.1":        "loopback",
		"127.8.9.10":       "loopback",
		"::1":              "loopback",
		"::ffff:127.0.0.1": "loopback",
		"10.0.0.1":         "private",
		"172.16.5.4":       "private",
		"192.168.1.1":      "private",
		"169.254.169.254":  "cloud metadata",
		"fd00:ec2::254":    "cloud metadata",
		"169.254.10.10":    "link-local",
		"fe80::1":          "link-local",
		"fc00::1":          "unique-local",
		"100.100.100.200":  "carrier-grade NAT",
		"0.0.0.0":          "unspecified",
		"::":               "unspecified",
		"239.1.1.1":        "multicast",
		"64:ff9b::7f00:1":  "loopback address behind NAT64",
		"2002:a00:1::":     "private address behind 6to4",
		"93.184.216.34":    "",
		"2606:4700::1111":  "",
		"8.8.8.8":          "",
	}
	checkReasons(t, cases)
}

// checkReasons checks blockedReason on each address: "" allowed, else a
// part of the reason.
func checkReasons(t *testing.T, cases map[string]string) {
	t.Helper()
	for ip, want := range cases {
		got := blockedReason(netip.MustParseAddr(ip))
		if want == "" && got != "" || want != "" && !strings.Contains(got, want) {
			t.Errorf("blockedReason(%s) = %q, want %q", ip, got, want)
		}
	}
}

func TestGuardRefusesInternalAddresses(t *testing.T) {
	t.Parallel()
	srv := open(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "secret internal page") }))
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	f := New(Options{Timeout: 3 * time.Second})
	for _, tc := range []struct{ url, reason string }{
		{fmt.Sprintf("http://127.0.0.1:%d/", port), "loopback"},
		{"http://10.0.0.1/", "private"},
		{"http://169.254.169.254/latest/meta-data/", "cloud metadata"},
		{fmt.Sprintf("http://[::1]:%d/", port), "loopback"},
		{fmt.Sprintf("http://localhost:%d/", port), "loopback"},
	} {
		for _, robots := range []bool{false, true} {
			_, err := f.Get(context.Background(), Request{URL: tc.url, IgnoreRobots: !robots})
			var be *BlockedError
			if !errors.As(err, &be) {
				t.Errorf("%s (robots %v): err = %v, want a BlockedError", tc.url, robots, err)
				continue
			}
			if !strings.Contains(err.Error(), tc.reason) || !strings.Contains(err.Error(), "--allow-private") {
				t.Errorf("%s: error %q should say %q and how to lift the guard", tc.url, err, tc.reason)
			}
		}
	}
}

func TestGuardRefusesRedirectToLoopback(t *testing.T) {
	t.Parallel()
	internal := open(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "metadata") }))
	// The "public" server listens on 127.0.0.2, which the test allows; the
	// redirect target on 127.0.0.1 stays refused.
	ln, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Skipf("cannot listen on 127.0.0.2: %v", err)
	}
	public := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		http.Redirect(w, r, internal.URL+"/latest", http.StatusFound)
	}))
	public.Listener.Close()
	public.Listener = ln
	public.Start()
	t.Cleanup(public.Close)

	f := New(Options{AllowPrefixes: []netip.Prefix{netip.MustParsePrefix("127.0.0.2/32")}})
	_, err = f.Get(context.Background(), Request{URL: public.URL + "/start"})
	var be *BlockedError
	if !errors.As(err, &be) || be.Addr != netip.MustParseAddr("127.0.0.1") {
		t.Fatalf("redirect to loopback: err = %v, want BlockedError for 127.0.0.1", err)
	}
	// The allowed address itself works.
	f2 := New(Options{AllowPrefixes: []netip.Prefix{netip.MustParsePrefix("127.0.0.2/32")}, MaxRedirects: 1})
	if _, err := f2.Get(context.Background(), Request{URL: public.URL + "/robots.txt", Accept: []string{"*/*"}}); err == nil || errors.As(err, &be) {
		t.Fatalf("allowed prefix: want the 404 status error, got %v", err)
	}
}

func TestRobots(t *testing.T) {
	t.Parallel()
	var robotsHits atomic.Int32
	srv := open(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			robotsHits.Add(1)
			fmt.Fprint(w, "User-agent: *\nDisallow: /private\n\nUser-agent: QuarryBot\nDisallow: /no-quarry\nDisallow: /private\n")
		default:
			fmt.Fprint(w, "<html><title>ok</title><body>fine</body></html>")
		}
	}))
	f := loopback()
	ctx := context.Background()
	for _, path := range []string{"/", "/a", "/b"} {
		if _, err := f.Get(ctx, Request{URL: srv.URL + path}); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
	}
	for _, path := range []string{"/no-quarry/x", "/private?q=1"} {
		if _, err := f.Get(ctx, Request{URL: srv.URL + path}); !errors.Is(err, ErrDisallowed) {
			t.Errorf("%s: err = %v, want ErrDisallowed", path, err)
		}
	}
	if n := robotsHits.Load(); n != 1 {
		t.Errorf("robots.txt fetched %d times, want 1 (cached)", n)
	}
	if _, err := f.Get(ctx, Request{URL: srv.URL + "/private", IgnoreRobots: true}); err != nil {
		t.Errorf("IgnoreRobots: %v", err)
	}
}

func TestRobotsStatus(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		code    int
		allowed bool
	}{{404, true}, {410, true}, {500, false}, {503, false}} {
		srv := open(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/robots.txt" {
				w.WriteHeader(tc.code)
				return
			}
			fmt.Fprint(w, "hello")
		}))
		_, err := loopback().Get(context.Background(), Request{URL: srv.URL + "/page"})
		if got := err == nil; got != tc.allowed {
			t.Errorf("robots.txt %d: allowed = %v (err %v), want %v", tc.code, got, err, tc.allowed)
		}
	}
}

func TestLimitsAndTypes(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("a", 2048)
	srv := open(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			http.NotFound(w, r)
		case "/big":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, "<p>"+big+"</p>")
		case "/big-chunked":
			w.Header().Set("Content-Type", "text/html")
			for range 4 {
				fmt.Fprint(w, big)
				w.(http.Flusher).Flush()
			}
		case "/image":
			w.Header().Set("Content-Type", "image/png")
			w.Write([]byte("\x89PNG\r\n\x1a\n"))
		case "/binary-as-html":
			w.Header().Set("Content-Type", "text/html")
			w.Write(append([]byte("\x7fELF\x02\x01\x01\x00\x00\x00"), bytes.Repeat([]byte{0, 1, 2}, 100)...))
		case "/loop":
			http.Redirect(w, r, "/loop2", http.StatusFound)
		case "/loop2":
			http.Redirect(w, r, "/loop", http.StatusFound)
		case "/missing":
			http.NotFound(w, r)
		}
	}))
	f := New(Options{AllowPrivate: true, MaxBytes: 1024})
	ctx := context.Background()
	for _, p := range []string{"/big", "/big-chunked"} {
		if _, err := f.Get(ctx, Request{URL: srv.URL + p}); !errors.Is(err, ErrTooLarge) {
			t.Errorf("%s: err = %v, want ErrTooLarge", p, err)
		}
	}
	var te *TypeError
	if _, err := f.Get(ctx, Request{URL: srv.URL + "/image"}); !errors.As(err, &te) || te.MediaType != "image/png" {
		t.Errorf("image: err = %v, want TypeError image/png", err)
	}
	if _, err := f.Page(ctx, srv.URL+"/binary-as-html", Request{}); err == nil || !strings.Contains(err.Error(), "binary") {
		t.Errorf("binary served as HTML: err = %v, want a binary-content error", err)
	}
	if _, err := f.Get(ctx, Request{URL: srv.URL + "/loop"}); err == nil || !strings.Contains(err.Error(), "redirects") {
		t.Errorf("redirect loop: err = %v", err)
	}
	var se *StatusError
	if _, err := f.Get(ctx, Request{URL: srv.URL + "/missing"}); !errors.As(err, &se) || se.Code != 404 {
		t.Errorf("missing: err = %v, want StatusError 404", err)
	}
	for _, bad := range []string{"", "ftp://x/y", "file:///etc/passwd", "http://", "javascript:alert(1)"} {
		var ue *URLError
		if _, err := f.Get(ctx, Request{URL: bad}); !errors.As(err, &ue) {
			t.Errorf("%q: err = %v, want URLError", bad, err)
		}
	}
}

func TestPageEncodingsAndConditional(t *testing.T) {
	t.Parallel()
	var gotUA, gotEncoding string
	srv := open(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			http.NotFound(w, r)
		case "/latin1":
			w.Header().Set("Content-Type", "text/html; charset=ISO-8859-1")
			w.Write([]byte("<html><head><title>Caf\xe9</title></head><body><p>Cr\xe8me br\xfbl\xe9e is a dessert.</p><a href=\"/next#frag\">n</a><a href=\"https://other.example/x\">o</a><a href=\"mailto:a@b\">m</a></body></html>"))
		case "/broken":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Write([]byte("<html><title>Broken \xff\xfe</title><body><p>Valid text then \xc3\x28 bad bytes.</p></body></html>"))
		case "/gzip":
			gotEncoding = r.Header.Get("Accept-Encoding")
			gotUA = r.Header.Get("User-Agent")
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.Header().Set("Content-Encoding", "gzip")
			zw := gzip.NewWriter(w)
			fmt.Fprint(zw, "compressed plain text page")
			zw.Close()
		case "/etag":
			if r.Header.Get("If-None-Match") == `"v1"` {
				w.WriteHeader(http.StatusNotModified)
				return
			}
			w.Header().Set("ETag", `"v1"`)
			w.Header().Set("Last-Modified", "Mon, 02 Jan 2006 15:04:05 GMT")
			fmt.Fprint(w, "<html><title>Tagged</title><body>body</body></html>")
		}
	}))
	f := loopback()
	ctx := context.Background()
	p, err := f.Page(ctx, srv.URL+"/latin1", Request{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Doc.Title != "Café" || !strings.Contains(p.Doc.Text, "Crème brûlée") {
		t.Errorf("latin1: title %q text %q", p.Doc.Title, p.Doc.Text)
	}
	if want := []string{srv.URL + "/next", "https://other.example/x"}; strings.Join(p.Doc.Links, " ") != strings.Join(want, " ") {
		t.Errorf("links = %v, want %v", p.Doc.Links, want)
	}
	p, err = f.Page(ctx, srv.URL+"/broken", Request{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(p.Doc.Text, "Valid text then") || !strings.Contains(p.Doc.Title, "Broken") {
		t.Errorf("broken encoding: %+v", p.Doc)
	}
	p, err = f.Page(ctx, srv.URL+"/gzip", Request{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Doc.Text != "compressed plain text page" || !strings.Contains(gotEncoding, "gzip") || gotUA != DefaultUserAgent {
		t.Errorf("gzip: text %q, Accept-Encoding %q, User-Agent %q", p.Doc.Text, gotEncoding, gotUA)
	}
	p, err = f.Page(ctx, srv.URL+"/etag", Request{})
	if err != nil || p.ETag != `"v1"` || p.NotModified {
		t.Fatalf("etag first: %+v %v", p, err)
	}
	p, err = f.Page(ctx, srv.URL+"/etag", Request{ETag: p.ETag, LastModified: p.LastModified})
	if err != nil || !p.NotModified || p.ETag != `"v1"` {
		t.Fatalf("etag second: %+v %v", p, err)
	}
}

func TestPoliteness(t *testing.T) {
	t.Parallel()
	var peak atomic.Int32
	srv := open(t, crawlDelayed(&peak, 10*time.Millisecond))
	f := New(Options{AllowPrivate: true, PerHost: 1, Delay: 20 * time.Millisecond})
	start := time.Now()
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := f.Get(context.Background(), Request{URL: fmt.Sprintf("%s/p%d", srv.URL, i)}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if p := peak.Load(); p != 1 {
		t.Errorf("peak concurrent requests to one host = %d, want 1", p)
	}
	// Crawl-delay 0.1s outranks the 20ms delay: 4 requests span ≥ 3 intervals.
	if el := time.Since(start); el < 300*time.Millisecond {
		t.Errorf("4 requests took %v; robots Crawl-delay of 100ms not honoured", el)
	}
}

// crawlDelayed is a site whose robots.txt asks for a 100 ms Crawl-delay;
// each page takes d, and peak records the most requests it served at once.
func crawlDelayed(peak *atomic.Int32, d time.Duration) http.Handler {
	var inflight atomic.Int32
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			fmt.Fprint(w, "User-agent: *\nCrawl-delay: 0.1\n")
			return
		}
		n := inflight.Add(1)
		defer inflight.Add(-1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		time.Sleep(d)
		fmt.Fprint(w, "ok")
	})
}

// TestResearchPoliteness: with no delay of its own, a research fetcher
// still honours a site's Crawl-delay (CrawlDelay), while the user's own
// search backend (Unlimited) gets neither the per-host cap nor a delay.
func TestResearchPoliteness(t *testing.T) {
	t.Parallel()
	var peak atomic.Int32
	handler := crawlDelayed(&peak, 50*time.Millisecond)
	stranger := open(t, handler)
	own := open(t, handler)
	ownHost := strings.TrimPrefix(own.URL, "http://")
	f := New(Options{AllowPrivate: true, PerHost: 1, CrawlDelay: true, Unlimited: []string{ownHost}})
	get := func(base string, n int) {
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := f.Page(context.Background(), fmt.Sprintf("%s/p%d", base, i), Request{}); err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
	}
	get(own.URL, 6)
	if p := peak.Load(); p < 2 {
		t.Errorf("the unlimited host got at most %d request at once; want them concurrent", p)
	}
	peak.Store(0)
	start := time.Now()
	get(stranger.URL, 4)
	if p := peak.Load(); p != 1 {
		t.Errorf("peak concurrent requests to a stranger = %d, want 1", p)
	}
	if el := time.Since(start); el < 300*time.Millisecond {
		t.Errorf("4 pages took %v; the stranger's Crawl-delay of 100ms was not honoured", el)
	}
}

func TestSecretsRedacted(t *testing.T) {
	t.Parallel()
	srv := open(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/loop?key=sk-SECRET&q=x", http.StatusFound)
	}))
	_, err := New(Options{AllowPrivate: true}).Get(context.Background(), Request{URL: srv.URL + "/search?key=sk-SECRET&q=x", IgnoreRobots: true})
	if err == nil || strings.Contains(err.Error(), "sk-SECRET") {
		t.Fatalf("err = %v: must fail without the key in it", err)
	}
	if !strings.Contains(err.Error(), "key=REDACTED") {
		t.Errorf("err = %v: want the redacted URL", err)
	}
}

// A text/plain page is read in the markup its name or content shows: a
// manual written in AsciiDoc, a reStructuredText source.
func TestPlainTextMarkup(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		switch r.URL.Path {
		case "/git-mv.txt":
			fmt.Fprint(w, "git-mv(1)\n=========\n\n[verse]\n'git mv' <source> <destination>\n\n-f::\n\tForce it.\n+\nSee linkgit:git-add[1] and <<URLS,GIT URLS>>.\n")
		case "/guide.rst":
			fmt.Fprint(w, "Guide\n=====\n\nUse :func:`open` here.\n")
		case "/notes.txt":
			fmt.Fprint(w, "Notes\n\nSee [1] and x + y.\n")
		}
	}))
	defer srv.Close()
	f := loopback()
	for path, want := range map[string]struct{ format, text string }{
		"/git-mv.txt": {"asciidoc", "See git-add(1) and GIT URLS."},
		"/guide.rst":  {"rst", "Use open here."},
		"/notes.txt":  {"text", "See [1] and x + y."},
	} {
		p, err := f.Page(context.Background(), srv.URL+path, Request{})
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if p.Doc.Format != want.format || !strings.Contains(p.Doc.Text, want.text) {
			t.Errorf("%s: read as %s: %q, want %s holding %q", path, p.Doc.Format, p.Doc.Text, want.format, want.text)
		}
	}
}

// TestRedactNames: a parameter is secret by its name, also as part of a
// longer one; others, and the rest of the URL, are shown as they are.
func TestRedactNames(t *testing.T) {
	t.Parallel()
	u, err := url.Parse("https://u:pw@example.com/p?X-Amz-Signature=s1&X-Amz-Credential=s2&client_secret=s3&private_token=s4&sessionid=s5&key=s6&subscription-key=s7&q=kept&keyword=kept&page=2")
	if err != nil {
		t.Fatal(err)
	}
	got := Redact(u)
	for i := 1; i <= 7; i++ {
		if strings.Contains(got, fmt.Sprintf("s%d", i)) {
			t.Errorf("Redact = %s: s%d shown", got, i)
		}
	}
	if strings.Contains(got, "pw") || !strings.Contains(got, "q=kept") || !strings.Contains(got, "keyword=kept") || !strings.Contains(got, "page=2") {
		t.Errorf("Redact = %s", got)
	}
	u, _ = url.Parse("https://example.com/?authorization=s8&pwd=s9")
	if got := Redact(u); strings.Contains(got, "s8") || strings.Contains(got, "s9") {
		t.Errorf("Redact = %s", got)
	}
	// A URL that does not parse, or parses oddly, keeps its password out.
	for _, raw := range []string{"https://user:hunter2@exa mple.com/%zz", "https://u:hunter2/x@host/"} {
		_, err = ParseURL(raw)
		if err == nil || strings.Contains(err.Error(), "hunter2") || !strings.Contains(err.Error(), "does not parse") {
			t.Errorf("ParseURL(%q) = %v, want a parse error without the password", raw, err)
		}
	}
	for _, raw := range []string{"admin:hunter2@llm.internal:8000/v1", "1user:hunter2@host/v1", "http://h/%zz?token=hunter2&q=kept"} {
		if got := RedactRaw(raw); strings.Contains(got, "hunter2") {
			t.Errorf("RedactRaw(%q) = %s", raw, got)
		}
	}
	for _, raw := range []string{"user:hunter2@host/v1?token=x", "https://user:hunter2@example.com/" + strings.Repeat("a", 2100)} {
		if _, err := ParseURL(raw); err == nil || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("ParseURL(%.40q) = %v, want an error without the password", raw, err)
		}
	}
}
