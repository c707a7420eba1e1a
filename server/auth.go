package server

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/quarryhq/quarry/errcode"
	"github.com/quarryhq/quarry/store"
)

// Scopes a token may carry: research covers researches, their events and
// threads; kb covers knowledge bases.
const (
	ScopeResearch = "research"
	ScopeKB       = "kb"
)

// Scopes lists the scopes there are.
var Scopes = []string{ScopeResearch, ScopeKB}

const tokenPrefix = "qry_"

// HashToken is what the store keeps of a token's secret.
func HashToken(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// CreateToken makes a token named name with scopes and stores its hash;
// the secret is returned once and kept nowhere.
func CreateToken(ctx context.Context, st store.TokenStore, name string, scopes []string, now time.Time) (string, *store.Token, error) {
	name = strings.TrimSpace(name)
	if name == "" || len(name) > 64 || strings.ContainsFunc(name, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return "", nil, errcode.New(errcode.Invalid, "name", "must be 1-64 characters without control characters")
	}
	if len(scopes) == 0 {
		return "", nil, errcode.New(errcode.Invalid, "scope", "give at least one scope: "+strings.Join(Scopes, ", "))
	}
	clean := []string{}
	for _, sc := range scopes {
		sc = strings.TrimSpace(sc)
		if !slices.Contains(Scopes, sc) {
			return "", nil, errcode.New(errcode.Invalid, "scope", fmt.Sprintf("must be one of %s, got %q", strings.Join(Scopes, ", "), sc))
		}
		if !slices.Contains(clean, sc) {
			clean = append(clean, sc)
		}
	}
	var raw [32]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", nil, err
	}
	secret := tokenPrefix + base64.RawURLEncoding.EncodeToString(raw[:])
	t := store.Token{ID: uuid.NewString(), Name: name, Hash: HashToken(secret), Scopes: clean, CreatedAt: now.UTC()}
	if err := st.TokenCreate(ctx, t); err != nil {
		if errors.Is(err, store.ErrExists) {
			return "", nil, errcode.New(errcode.Conflict, "name", fmt.Sprintf("a live token named %q exists; revoke it first (quarry token revoke %s)", name, name))
		}
		return "", nil, err
	}
	return secret, &t, nil
}

// principal is who a request comes from.
type principal struct {
	// key identifies the caller for limits: a token id, or the client's
	// address when no token is needed.
	key    string
	scopes []string
	local  bool // loopback with no token configured: every scope
}

func (p principal) can(scope string) bool {
	return p.local || scope == "" || slices.Contains(p.scopes, scope)
}

type principalKey struct{}

func principalOf(ctx context.Context) principal {
	p, _ := ctx.Value(principalKey{}).(principal)
	return p
}

// clientIP is the address the connection comes from. Forwarding headers
// are not trusted: a proxy in front must do its own limiting.
func clientIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

func loopbackIP(ip string) bool {
	p := net.ParseIP(ip)
	return p != nil && p.IsLoopback()
}

var errNoToken = &httpError{status: http.StatusUnauthorized, code: errcode.Unauthorized, field: "Authorization",
	msg: "a bearer token is required (Authorization: Bearer <token>; create one with quarry token create NAME --scope research,kb)"}

// authenticate finds the request's principal: a valid bearer token, or a
// loopback client while no token exists at all.
func (s *Server) authenticate(r *http.Request) (principal, error) {
	ip := clientIP(r)
	h := r.Header.Get("Authorization")
	if h == "" {
		n, err := s.store.TokenLive(r.Context())
		if err != nil {
			return principal{}, errcode.Wrap(errcode.Unavailable, fmt.Errorf("the store cannot be read: %w", err))
		}
		if n == 0 && (loopbackIP(ip) || s.opt.Insecure) {
			if err := s.checkLocal(r); err != nil {
				return principal{}, err
			}
			return principal{key: "ip:" + ip, local: true}, nil
		}
		return principal{}, errNoToken
	}
	scheme, secret, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(secret) == "" {
		return principal{}, &httpError{status: http.StatusUnauthorized, code: errcode.Unauthorized, field: "Authorization", msg: "must be \"Bearer <token>\""}
	}
	t, err := s.store.TokenByHash(r.Context(), HashToken(strings.TrimSpace(secret)))
	switch {
	case errors.Is(err, store.ErrNotFound):
		return principal{}, &httpError{status: http.StatusUnauthorized, code: errcode.Unauthorized, field: "Authorization", msg: "the token is not valid"}
	case err != nil:
		return principal{}, errcode.Wrap(errcode.Unavailable, fmt.Errorf("the store cannot be read: %w", err))
	case t.RevokedAt != nil:
		return principal{}, &httpError{status: http.StatusUnauthorized, code: errcode.Unauthorized, field: "Authorization", msg: fmt.Sprintf("the token %q was revoked", t.Name)}
	}
	return principal{key: "token:" + t.ID, scopes: t.Scopes}, nil
}

// checkLocal keeps web pages out of the tokenless mode: the loopback
// peer could be a browser on this machine visiting any site. A request
// must name a loopback host (not a name an attacker's DNS points at
// 127.0.0.1) unless --insecure serves other names, and a request a
// browser sends from another site (its Origin, or Sec-Fetch-Site) must
// come from an origin on loopback or one --cors-origin allows.
func (s *Server) checkLocal(r *http.Request) error {
	forbid := func(field, msg string) error {
		return &httpError{status: http.StatusForbidden, code: errcode.Forbidden, field: field, msg: msg}
	}
	if !s.opt.Insecure {
		host := r.Host
		if h, _, err := net.SplitHostPort(host); err == nil {
			host = h
		}
		if host != "localhost" && !loopbackIP(strings.Trim(host, "[]")) {
			return forbid("Host", fmt.Sprintf("without a token only loopback names are served (localhost, 127.0.0.1, [::1]), not %q", r.Host))
		}
	}
	origin := r.Header.Get("Origin")
	if origin == "" || origin == "null" {
		if r.Header.Get("Sec-Fetch-Site") == "cross-site" || origin == "null" {
			return forbid("Origin", "requests from other sites need a token")
		}
		return nil
	}
	if slices.Contains(s.opt.CORSOrigins, origin) {
		return nil
	}
	if u, err := url.Parse(origin); err == nil {
		if h := u.Hostname(); h == "localhost" || loopbackIP(h) {
			return nil
		}
	}
	return forbid("Origin", fmt.Sprintf("requests from %s need a token (or --cors-origin)", origin))
}

// guard wraps a route: the per-IP limit, authentication, the scope, then
// the per-principal limit.
func (s *Server) guard(scope string, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if wait, ok := s.limits.allow(ipKey(clientIP(r)), s.limits.ip); !ok {
			s.tooMany(w, r, wait, "requests from this address")
			return
		}
		p, err := s.authenticate(r)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		if !p.can(scope) {
			s.writeError(w, r, &httpError{status: http.StatusForbidden, code: errcode.Forbidden, field: "Authorization", msg: fmt.Sprintf("the token lacks the %q scope", scope)})
			return
		}
		if wait, ok := s.limits.allow(p.key, s.limits.principal); !ok {
			s.tooMany(w, r, wait, "requests with this token")
			return
		}
		h(w, r.WithContext(context.WithValue(r.Context(), principalKey{}, p)))
	}
}

func (s *Server) tooMany(w http.ResponseWriter, r *http.Request, wait time.Duration, what string) {
	secs := int(wait.Seconds() + 0.999)
	w.Header().Set("Retry-After", fmt.Sprint(max(1, secs)))
	s.writeError(w, r, &httpError{status: http.StatusTooManyRequests, code: errcode.RateLimited,
		msg: fmt.Sprintf("too many %s; retry after %d s", what, max(1, secs))})
}
