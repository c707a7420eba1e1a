// Package fetch is the one way Quarry reads from the network. A Fetcher
// enforces timeouts, a size cap, allowed content types and a redirect limit;
// it honours robots.txt (cached per host), spaces requests to each host
// (politeness), identifies itself with a clear User-Agent, and refuses
// loopback, private, link-local, unique-local and cloud-metadata addresses
// at dial time (the SSRF guard) unless AllowPrivate is set. Page turns a
// fetched document into readable text with its metadata and links.
package fetch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.37.0"
	"go.opentelemetry.io/otel/trace"
	"golang.org/x/time/rate"

	"github.com/quarryhq/quarry/errcode"
)

// Agent is the robots.txt product token Quarry obeys rules for.
const Agent = "QuarryBot"

// DefaultUserAgent identifies Quarry to the sites it reads.
const DefaultUserAgent = "QuarryBot/0.1 (+https://github.com/quarryhq/quarry; research assistant)"

// Documents are the media types Page reads.
var Documents = []string{"text/html", "application/xhtml+xml", "application/pdf", "text/plain", "text/markdown"}

// Options configure a Fetcher. Zero values pick the documented defaults.
type Options struct {
	UserAgent string
	// Timeout bounds one request including reading the body (default 20s).
	Timeout time.Duration
	// MaxBytes caps a response body after decompression (default 10 MiB).
	MaxBytes int64
	// MaxRedirects is how many redirects one request may follow (default 5).
	MaxRedirects int
	// AllowPrivate lifts the SSRF guard. Nothing sets it by default.
	AllowPrivate bool
	// AllowPrefixes lets the guard pass these networks only (an intranet
	// range, say) while it keeps refusing every other internal address.
	AllowPrefixes []netip.Prefix
	// Delay is the minimum interval between requests to one host; a larger
	// robots.txt Crawl-delay wins. Zero turns politeness delays off.
	Delay time.Duration
	// PerHost caps concurrent requests to one host (default 2; negative
	// means no cap).
	PerHost int
	// CrawlDelay honours a robots.txt Crawl-delay even when Delay is zero:
	// no pause of the fetcher's own, but the one a site asks for.
	CrawlDelay bool
	// Unlimited lists hosts ("127.0.0.1:8888", "search.internal") exempt
	// from PerHost and any delay: the user's own search backend and the
	// pages it serves, which politeness towards strangers would only slow.
	Unlimited []string
	// RobotsTTL is how long a robots.txt stays cached (default 1h).
	RobotsTTL time.Duration
	// Resolver looks host names up (nil: the system's).
	Resolver *net.Resolver
	Logger   *slog.Logger
}

func (o Options) withDefaults() Options {
	if o.UserAgent == "" {
		o.UserAgent = DefaultUserAgent
	}
	if o.Timeout <= 0 {
		o.Timeout = 20 * time.Second
	}
	if o.MaxBytes <= 0 {
		o.MaxBytes = 10 << 20
	}
	if o.MaxRedirects <= 0 {
		o.MaxRedirects = 5
	}
	if o.PerHost == 0 {
		o.PerHost = 2
	}
	if o.RobotsTTL <= 0 {
		o.RobotsTTL = time.Hour
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// Fetcher fetches URLs. It is safe for concurrent use.
type Fetcher struct {
	opt    Options
	client *http.Client

	mu     sync.Mutex
	hosts  map[string]*host
	robots map[string]*robotsEntry
}

type host struct {
	limiter *rate.Limiter // nil with no Delay nor CrawlDelay, or for an Unlimited host
	slots   chan struct{} // nil when unlimited
}

// New returns a Fetcher.
func New(opt Options) *Fetcher {
	opt = opt.withDefaults()
	dialer := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second, Resolver: opt.Resolver}
	if !opt.AllowPrivate {
		dialer.Control = dialControl(opt.AllowPrefixes)
	}
	transport := &http.Transport{
		// No proxy: a proxy would dial on our behalf and bypass the guard.
		Proxy:                 nil,
		DialContext:           dialer.DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          100,
		MaxIdleConnsPerHost:   16,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: opt.Timeout,
	}
	f := &Fetcher{opt: opt, hosts: map[string]*host{}, robots: map[string]*robotsEntry{}}
	f.client = &http.Client{Transport: transport, CheckRedirect: f.checkRedirect}
	return f
}

// Request is one GET.
type Request struct {
	URL string
	// Accept lists the media types the caller can use; others fail with a
	// *TypeError. Empty means Documents.
	Accept []string
	// Header adds request headers (an API's key header, say).
	Header http.Header
	// IgnoreRobots skips robots.txt: for APIs, which are not crawled.
	IgnoreRobots bool
	// ETag and LastModified make the request conditional; an unchanged
	// resource comes back with NotModified set and no body.
	ETag, LastModified string
}

// Response is a fetched resource.
type Response struct {
	// URL is the final URL after redirects.
	URL         string
	Status      int
	NotModified bool
	// MediaType is the Content-Type without parameters (sniffed when the
	// server sent none); ContentType is the header as sent.
	MediaType, ContentType string
	Body                   []byte
	ETag, LastModified     string
}

// StatusError is an HTTP answer other than 2xx or 304.
type StatusError struct {
	URL  string
	Code int
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("fetch %s: HTTP %d %s", e.URL, e.Code, http.StatusText(e.Code))
}

// TypeError is a response of a media type the caller did not accept.
type TypeError struct {
	URL, MediaType string
}

func (e *TypeError) Error() string {
	return fmt.Sprintf("fetch %s: content type %q is not one Quarry reads", e.URL, e.MediaType)
}

// ErrTooLarge is returned for a body over the size cap.
var ErrTooLarge = errors.New("response body over the size limit")

// ErrDisallowed is returned for a URL robots.txt forbids.
var ErrDisallowed = errors.New("disallowed by robots.txt")

// Get fetches req.URL.
func (f *Fetcher) Get(ctx context.Context, req Request) (*Response, error) {
	host := ""
	if u, err := ParseURL(req.URL); err == nil {
		host = u.Hostname() // the host only: a URL's path or query may carry a key
	}
	ctx, sp := otel.Tracer(TracerName).Start(ctx, "fetch", trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(semconv.ServerAddress(host)))
	defer sp.End()
	resp, err := f.get(ctx, req)
	if resp != nil {
		sp.SetAttributes(semconv.HTTPResponseStatusCode(resp.Status))
	}
	if err != nil {
		sp.RecordError(err)
		sp.SetStatus(codes.Error, "fetch failed")
	}
	return resp, err
}

// TracerName names the tracer of page fetches.
const TracerName = "github.com/quarryhq/quarry/fetch"

// get is one fetch in the order its checks must run — the URL, robots.txt,
// politeness, the request, redirects through the guard, the size limit —
// one function so that order is read in one place.
func (f *Fetcher) get(ctx context.Context, req Request) (*Response, error) {
	u, err := ParseURL(req.URL)
	if err != nil {
		return nil, err
	}
	shown := Redact(u)
	if !req.IgnoreRobots {
		if err := f.allowed(ctx, u); err != nil {
			return nil, err
		}
	}
	release, err := f.acquire(ctx, u)
	if err != nil {
		return nil, fmt.Errorf("fetch %s: %w", shown, err)
	}
	defer release()

	ctx, cancel := context.WithTimeout(ctx, f.opt.Timeout)
	defer cancel()
	if !req.IgnoreRobots {
		// checkRedirect checks each hop against robots.txt too.
		ctx = context.WithValue(ctx, robotsKey{}, true)
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("fetch %s: %w", shown, err)
	}
	for k, vs := range req.Header {
		for _, v := range vs {
			hreq.Header.Add(k, v)
		}
	}
	hreq.Header.Set("User-Agent", f.opt.UserAgent)
	accept := req.Accept
	if len(accept) == 0 {
		accept = Documents
	}
	if hreq.Header.Get("Accept") == "" {
		hreq.Header.Set("Accept", strings.Join(accept, ", ")+";q=0.9, */*;q=0.1")
	}
	if req.ETag != "" {
		hreq.Header.Set("If-None-Match", req.ETag)
	}
	if req.LastModified != "" {
		hreq.Header.Set("If-Modified-Since", req.LastModified)
	}
	resp, err := f.client.Do(hreq)
	if err != nil {
		return nil, f.wrap(shown, err)
	}
	defer resp.Body.Close()
	out := &Response{
		URL: resp.Request.URL.String(), Status: resp.StatusCode,
		ContentType: resp.Header.Get("Content-Type"),
		ETag:        resp.Header.Get("ETag"), LastModified: resp.Header.Get("Last-Modified"),
	}
	switch {
	case resp.StatusCode == http.StatusNotModified && (req.ETag != "" || req.LastModified != ""):
		out.NotModified = true
		if out.ETag == "" {
			out.ETag = req.ETag
		}
		if out.LastModified == "" {
			out.LastModified = req.LastModified
		}
		return out, nil
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		return nil, &StatusError{URL: Redact(resp.Request.URL), Code: resp.StatusCode}
	}
	// A declared type is checked before the body is read: an unwanted
	// 10 MiB download is not worth making to refuse it.
	if out.MediaType = declaredType(out.ContentType); out.MediaType != "" && !acceptable(out.MediaType, accept) {
		return nil, &TypeError{URL: Redact(resp.Request.URL), MediaType: out.MediaType}
	}
	if resp.ContentLength > f.opt.MaxBytes {
		return nil, fmt.Errorf("fetch %s: %w (%d bytes announced, limit %d)", shown, ErrTooLarge, resp.ContentLength, f.opt.MaxBytes)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, f.opt.MaxBytes+1))
	if err != nil {
		return nil, f.wrap(shown, err)
	}
	if int64(len(body)) > f.opt.MaxBytes {
		return nil, fmt.Errorf("fetch %s: %w (limit %d bytes)", shown, ErrTooLarge, f.opt.MaxBytes)
	}
	out.Body = body
	if out.MediaType == "" {
		out.MediaType = sniffedType(body)
		if !acceptable(out.MediaType, accept) {
			return nil, &TypeError{URL: Redact(resp.Request.URL), MediaType: out.MediaType}
		}
	}
	return out, nil
}

// Permanent reports whether err is one that asking again soon cannot
// mend: a URL Quarry will not fetch, an address the guard refuses, a path
// robots.txt forbids, or a host name DNS says does not exist.
func Permanent(err error) bool {
	var be *BlockedError
	var ue *URLError
	var de *net.DNSError
	return errors.As(err, &be) || errors.As(err, &ue) || errors.Is(err, ErrDisallowed) ||
		errors.As(err, &de) && de.IsNotFound
}

// wrap turns a client error into one that names the (redacted) URL once and
// keeps the cause for errors.As.
func (f *Fetcher) wrap(shown string, err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return fmt.Errorf("fetch %s: %w", shown, err)
}

// declaredType is the Content-Type header's media type, "" when absent or
// unparsable.
func declaredType(header string) string {
	if mt, _, err := mime.ParseMediaType(header); err == nil {
		return strings.ToLower(mt)
	}
	return ""
}

// sniffedType guesses a media type from the body (WHATWG sniffing).
func sniffedType(body []byte) string {
	mt, _, _ := mime.ParseMediaType(http.DetectContentType(body))
	return mt
}

func acceptable(mt string, accept []string) bool {
	for _, a := range accept {
		if a == "*/*" || strings.EqualFold(a, mt) {
			return true
		}
		if prefix, ok := strings.CutSuffix(a, "/*"); ok && strings.HasPrefix(mt, prefix+"/") {
			return true
		}
	}
	return false
}

type robotsKey struct{}

func (f *Fetcher) checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) > f.opt.MaxRedirects {
		return fmt.Errorf("stopped after %d redirects (redirect loop?)", f.opt.MaxRedirects)
	}
	if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
		return fmt.Errorf("redirect to %s: only http and https are fetched", req.URL.Scheme)
	}
	if check, _ := req.Context().Value(robotsKey{}).(bool); check {
		if err := f.allowed(req.Context(), req.URL); err != nil {
			return err
		}
	}
	return nil
}

// acquire waits for the host's politeness delay and a concurrency slot.
func (f *Fetcher) acquire(ctx context.Context, u *url.URL) (func(), error) {
	h := f.host(u.Host)
	if h.slots != nil {
		select {
		case h.slots <- struct{}{}:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	release := func() {
		if h.slots != nil {
			<-h.slots
		}
	}
	if h.limiter != nil {
		if err := h.limiter.Wait(ctx); err != nil {
			release()
			return nil, err
		}
	}
	return release, nil
}

func (f *Fetcher) host(name string) *host {
	f.mu.Lock()
	defer f.mu.Unlock()
	h, ok := f.hosts[name]
	if !ok {
		h = &host{}
		if f.unlimited(name) {
			f.hosts[name] = h
			return h
		}
		switch {
		case f.opt.Delay > 0:
			h.limiter = rate.NewLimiter(rate.Every(min(f.opt.Delay, MaxDelay)), 1)
		case f.opt.CrawlDelay:
			// No pause until the site's robots.txt asks for one.
			h.limiter = rate.NewLimiter(rate.Inf, 1)
		}
		if f.opt.PerHost > 0 {
			h.slots = make(chan struct{}, f.opt.PerHost)
		}
		f.hosts[name] = h
	}
	return h
}

// MaxDelay is the longest wait between two requests to one host: a
// longer Options.Delay (a schedule stored before crawls were refused one)
// or robots.txt Crawl-delay is cut to it, and a crawl asking for more is
// refused.
const MaxDelay = time.Minute

// slowDown raises a host's interval to a robots.txt Crawl-delay when
// politeness is on and the site asks for more.
func (f *Fetcher) slowDown(name string, d time.Duration) {
	h := f.host(name)
	if h.limiter == nil || d <= f.opt.Delay {
		return
	}
	h.limiter.SetLimit(rate.Every(min(d, MaxDelay)))
}

// unlimited reports a host exempt from politeness (Options.Unlimited),
// by host:port or by name.
func (f *Fetcher) unlimited(hostport string) bool {
	name := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		name = h
	}
	for _, u := range f.opt.Unlimited {
		if strings.EqualFold(u, hostport) || strings.EqualFold(u, name) {
			return true
		}
	}
	return false
}

// ParseURL accepts absolute http and https URLs only.
func ParseURL(raw string) (*url.URL, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return nil, &URLError{URL: raw, Rule: "is empty"}
	}
	if len(raw) > 2048 {
		shown := []rune(RedactRaw(raw))
		return nil, &URLError{URL: string(shown[:min(len(shown), 64)]) + "…", Rule: "is longer than 2048 characters"}
	}
	u, err := url.Parse(raw)
	if err != nil {
		// url.Parse's error quotes the URL whole and its parts (a
		// password read as a port), so the reason is given only for a
		// URL without a user.
		rule := "does not parse"
		if ue, ok := errors.AsType[*url.Error](err); ok && !strings.Contains(raw, "@") {
			rule += ": " + ue.Err.Error()
		}
		return nil, &URLError{URL: RedactRaw(raw), Rule: rule}
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, &URLError{URL: RedactRaw(raw), Rule: "must start with http:// or https://"}
	}
	if u.Hostname() == "" {
		return nil, &URLError{URL: RedactRaw(raw), Rule: "has no host"}
	}
	return u, nil
}

// URLError is a URL Quarry will not fetch, with the rule it broke.
type URLError struct {
	URL, Rule string
}

func (e *URLError) Error() string { return fmt.Sprintf("url %q %s", e.URL, e.Rule) }

// ErrorCode implements errcode.Coder: a URL given is invalid input.
func (e *URLError) ErrorCode() errcode.Code { return errcode.Invalid }

// SecretParam reports whether a query parameter's value is secret by its
// name: a key, a token, a signature, a password, an authorization, a
// credential — also as part of a longer name (access_token,
// client_secret, X-Amz-Signature, X-Amz-Credential, private_token,
// sessionid, pwd, authorization). A few innocent names (author,
// passage) are redacted too, which costs a log line its detail only.
func SecretParam(name string) bool {
	name = strings.ToLower(name)
	for _, s := range []string{"token", "secret", "signature", "pass", "pwd", "auth", "credential", "apikey", "api_key", "api-key", "session"} {
		if strings.Contains(name, s) {
			return true
		}
	}
	return name == "key" || name == "sig" || strings.HasSuffix(name, "_key") || strings.HasSuffix(name, "-key")
}

// RedactError hides, in the URL a *url.Error in err's chain names (an HTTP
// client's failure), the user and secret query values, and returns err.
func RedactError(err error) error {
	if ue, ok := errors.AsType[*url.Error](err); ok {
		ue.URL = RedactRaw(ue.URL)
	}
	return err
}

// RedactRaw is Redact for a URL given as text; one that does not parse is
// shown without its user and password.
func RedactRaw(raw string) string {
	u, err := url.Parse(raw)
	if err == nil && u.Opaque == "" {
		return Redact(u)
	}
	// Text that does not parse, or parses oddly ("user:password@host/v1",
	// its scheme left out, reads as the scheme "user"): all up to its last
	// "@" is taken for a user and a password (a password may hold a "/"),
	// and the secret parameters of its query are blanked.
	s := raw
	if i := strings.LastIndex(s, "@"); i >= 0 {
		scheme := ""
		if j := strings.Index(s[:i], "://"); j >= 0 {
			scheme = s[:j+3]
		}
		s = scheme + "REDACTED@" + s[i+1:]
	}
	if q := strings.IndexByte(s, '?'); q >= 0 {
		s = s[:q+1] + redactQuery(s[q+1:])
	}
	return s
}

// redactQuery is a raw query with each secret parameter's value
// replaced, as written otherwise: its order, its escapes, pairs split by
// ';' as well as '&', and pairs that do not parse.
func redactQuery(q string) string {
	if q == "" {
		return q
	}
	var b strings.Builder
	start := 0
	for i := 0; i <= len(q); i++ {
		if i < len(q) && q[i] != '&' && q[i] != ';' {
			continue
		}
		pair := q[start:i]
		if name, _, ok := strings.Cut(pair, "="); ok && SecretParam(unescapeName(name)) {
			pair = name + "=" + Redacted
		}
		b.WriteString(pair)
		if i < len(q) {
			b.WriteByte(q[i])
		}
		start = i + 1
	}
	return b.String()
}

func unescapeName(name string) string {
	if n, err := url.QueryUnescape(name); err == nil {
		return n
	}
	return name
}

// SecretValue is a secret parameter's value in a raw query (SecretValues).
type SecretValue struct {
	// Name is the parameter's name, unescaped; Raw its value as the
	// query writes it.
	Name, Raw string
}

// SecretValues lists the values of a raw query's secret parameters
// (SecretParam), in order, the pairs read as redactQuery reads them.
func SecretValues(q string) []SecretValue {
	var out []SecretValue
	for pair := range strings.FieldsFuncSeq(q, func(r rune) bool { return r == '&' || r == ';' }) {
		if name, raw, ok := strings.Cut(pair, "="); ok && SecretParam(unescapeName(name)) {
			out = append(out, SecretValue{unescapeName(name), raw})
		}
	}
	return out
}

// Redacted stands for a secret Redact hides.
const Redacted = "REDACTED"

// Redact renders u with user info and the values of secret-looking query
// parameters (key, token, …) replaced, for logs and errors.
func Redact(u *url.URL) string {
	if u == nil {
		return ""
	}
	c := *u
	if c.User != nil {
		c.User = url.User(Redacted)
	}
	c.RawQuery = redactQuery(c.RawQuery)
	return c.String()
}
