package fetch

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
)

// noDNS is a resolver that answers no name, so tests and fuzz targets never
// reach the network: a host name fails at once, an IP literal is dialled.
var noDNS = &net.Resolver{PreferGo: true, Dial: func(context.Context, string, string) (net.Conn, error) {
	return nil, errors.New("no DNS in tests")
}}

func TestBlockedReasonEmbeddedForms(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"::127.0.0.1":                 "IPv4-compatible",
		"::10.0.0.1":                  "IPv4-compatible",
		"::8.8.8.8":                   "IPv4-compatible",
		"::ffff:10.1.2.3":             "private",
		"::ffff:169.254.169.254":      "cloud metadata",
		"fe80::1%lo":                  "link-local",
		"::1%lo":                      "loopback",
		"64:ff9b::a9fe:a9fe":          "cloud metadata address behind NAT64",
		"64:ff9b::808:808":            "",
		"64:ff9b:1::a00:1":            "outside global unicast",
		"fec0::1":                     "outside global unicast",
		"100::1":                      "outside global unicast",
		"2002:7f00:1::1":              "loopback address behind 6to4",
		"2002:a9fe:a9fe::":            "cloud metadata address behind 6to4",
		"2002:808:808::1":             "",
		"2001:0:4136:e378::80ff:fffe": "loopback address behind Teredo", // client ^0x80fffffe = 127.0.0.1
		"2001:0:7f00:1::":             "loopback address behind Teredo", // server 127.0.0.1
		"2001:0:4136:e378::f7f7:f7f7": "",                               // client 8.8.8.8, server 65.54.227.120
		"2001:db8::1":                 "reserved",
		"3fff::1":                     "reserved",
		"192.0.2.1":                   "reserved",
		"198.51.100.7":                "reserved",
		"203.0.113.9":                 "reserved",
		"255.255.255.255":             "reserved",
		"192.88.99.1":                 "reserved",
		"2606:4700:4700::1111":        "",
	}
	checkReasons(t, cases)
}

// TestHostileURLs: every form of an internal address is refused, none
// crashes the fetcher, with and without robots.txt.
func TestHostileURLs(t *testing.T) {
	t.Parallel()
	srv := open(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "secret internal page") }))
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	f := New(Options{Timeout: 3 * time.Second, Resolver: noDNS})
	for _, raw := range []string{
		fmt.Sprintf("http://[::1%%25lo]:%d/", port),
		fmt.Sprintf("http://[::1%%25eth0]:%d/x", port),
		fmt.Sprintf("http://[fe80::1%%25lo]:%d/", port),
		fmt.Sprintf("http://[::127.0.0.1]:%d/", port),
		fmt.Sprintf("http://[::ffff:127.0.0.1]:%d/", port),
		fmt.Sprintf("http://[::ffff:7f00:1]:%d/", port),
		fmt.Sprintf("http://[64:ff9b::127.0.0.1]:%d/", port),
		fmt.Sprintf("http://[2002:7f00:1::]:%d/", port),
		fmt.Sprintf("http://0x7f000001:%d/", port),
		fmt.Sprintf("http://2130706433:%d/", port),
		fmt.Sprintf("http://0177.0.0.1:%d/", port),
		fmt.Sprintf("http://127.1:%d/", port),
		fmt.Sprintf("http://0:%d/", port),
		fmt.Sprintf("http://[::]:%d/", port),
		fmt.Sprintf("http://user:pw@127.0.0.1:%d/", port),
		"http://[::1%zz]/",
		"http://[::1/",
		"http://%41:80/",
	} {
		for _, robots := range []bool{false, true} {
			resp, err := f.Get(context.Background(), Request{URL: raw, IgnoreRobots: !robots})
			if err == nil {
				t.Errorf("%s (robots %v): fetched %q, want a refusal", raw, robots, resp.Body)
			}
		}
	}
}

// TestRobotsZoneHost is the crash of issue 17: a host with an IPv6 zone
// made the robots.txt URL unparsable and the fetcher dereferenced nil.
func TestRobotsZoneHost(t *testing.T) {
	t.Parallel()
	srv := open(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			fmt.Fprint(w, "User-agent: *\nDisallow: /private\nSitemap: http://example.com/s.xml\n")
			return
		}
		fmt.Fprint(w, "ok")
	}))
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	u, err := ParseURL(fmt.Sprintf("http://[::1%%25lo]:%d/", port))
	if err != nil {
		t.Fatal(err)
	}
	guarded := New(Options{Resolver: noDNS})
	if _, err := guarded.Robots(context.Background(), u); err == nil {
		t.Fatal("guarded robots.txt of [::1%lo]: want a refusal")
	}
	if sm := guarded.RobotsSitemaps(context.Background(), u); sm != nil {
		t.Fatalf("sitemaps of a refused host = %v", sm)
	}
	// With the guard lifted the zone is dialled like any address (skipped
	// where loopback has no IPv6).
	if ln, err := net.Listen("tcp", "[::1]:0"); err != nil {
		t.Skipf("no IPv6 loopback: %v", err)
	} else {
		ln.Close()
	}
	v6 := httptest.NewUnstartedServer(srv.Config.Handler)
	ln, err := net.Listen("tcp", "[::1]:0")
	if err != nil {
		t.Skip(err)
	}
	v6.Listener.Close()
	v6.Listener = ln
	v6.Start()
	t.Cleanup(v6.Close)
	zoned := strings.Replace(v6.URL, "[::1]", "[::1%25lo]", 1)
	f := New(Options{AllowPrivate: true, PerHost: -1, Resolver: noDNS})
	if _, err := f.Get(context.Background(), Request{URL: zoned + "/private/x"}); !errors.Is(err, ErrDisallowed) {
		t.Fatalf("robots.txt on a zoned host: err = %v, want disallowed", err)
	}
	zu, _ := url.Parse(zoned)
	if sm := f.RobotsSitemaps(context.Background(), zu); len(sm) != 1 {
		t.Fatalf("sitemaps = %v, want one", sm)
	}
}

func TestPermanent(t *testing.T) {
	t.Parallel()
	f := New(Options{Resolver: noDNS, Timeout: 2 * time.Second})
	_, err := f.Get(context.Background(), Request{URL: "http://no-such-host.invalid/"})
	if err == nil {
		t.Fatal("want a DNS error")
	}
	dnsErr := &net.DNSError{Err: "no such host", Name: "x.invalid", IsNotFound: true}
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{fmt.Errorf("fetch: %w", dnsErr), true},
		{&BlockedError{Reason: "loopback address"}, true},
		{&URLError{Rule: "has no host"}, true},
		{fmt.Errorf("x: %w", ErrDisallowed), true},
		{&StatusError{Code: 503}, false},
		{context.DeadlineExceeded, false},
	} {
		if got := Permanent(tc.err); got != tc.want {
			t.Errorf("Permanent(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}
