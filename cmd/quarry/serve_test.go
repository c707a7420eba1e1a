package main

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestServeCLI: quarry serve refuses a non-loopback address with no
// token (exit 2), serves loopback until its context ends, and tokens
// made with quarry token are required from then on.
func TestServeCLI(t *testing.T) {
	data := t.TempDir()
	setenv(t, "QUARRY_ADDR", "0.0.0.0:0")
	_, _, err := run(t, data, "serve")
	if err == nil || exitCode(err) != exitUsage || !strings.Contains(err.Error(), "--insecure") {
		t.Fatalf("non-loopback without a token: %v", err)
	}
	for _, args := range [][]string{{"serve", "--addr", "nonsense"}, {"serve", "--workers", "99"}, {"serve", "--cors-origin", "example.com"}, {"token", "create", "x"}, {"token", "create", "x", "--scope", "root"}} {
		if _, _, err := run(t, data, args...); err == nil || exitCode(err) != exitUsage {
			t.Errorf("%v: %v", args, err)
		}
	}
	for _, b := range []struct {
		args []string
		want string
	}{
		{[]string{"serve", "--rate", "-5"}, "rate: must be more than 0"},
		{[]string{"serve", "--ip-rate", "0"}, "ip-rate: must be more than 0"},
		{[]string{"serve", "--max-body", "-1"}, "max-body: must be at least 1"},
		{[]string{"serve", "--max-researches", "-3"}, "max-researches: must be at least 1"},
		{[]string{"serve", "--grace", "-1s"}, "grace: must not be negative"},
	} {
		if _, _, err := run(t, data, b.args...); err == nil || exitCode(err) != exitUsage || !strings.Contains(err.Error(), b.want) {
			t.Errorf("%v: %v, want %q", b.args, err, b.want)
		}
	}
	token, _, err := run(t, data, "token", "create", "ci", "--scope", "research")
	if err != nil || !strings.HasPrefix(token, "qry_") {
		t.Fatalf("token create: %q %v", token, err)
	}
	token = strings.TrimSpace(token)
	list, _, err := run(t, data, "token", "list")
	if err != nil || !strings.Contains(list, "ci") || strings.Contains(list, token) {
		t.Fatalf("token list (never the secret): %v\n%s", err, list)
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, _, err := runCtx(ctx, t, data, "serve", "--addr", addr)
		done <- err
	}()
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	get := func(tok string) int {
		req, _ := http.NewRequest("GET", "http://"+addr+"/v1/researches", nil)
		if tok != "" {
			req.Header.Set("Authorization", "Bearer "+tok)
		}
		resp, err := client.Do(req)
		if err != nil {
			return 0
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		return resp.StatusCode
	}
	deadline := time.Now().Add(10 * time.Second)
	for get(token) != 200 {
		if time.Now().After(deadline) {
			t.Fatal("the server never answered")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if code := get(""); code != 401 {
		t.Fatalf("without the token: %d", code)
	}
	if _, _, err := run(t, data, "token", "revoke", "ci"); err != nil {
		t.Fatal(err)
	}
	if code := get(token); code != 401 {
		t.Fatalf("revoked token: %d", code)
	}
	if _, _, err := run(t, data, "token", "revoke", "ci"); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Fatalf("revoke twice: %v", err)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil && !errors.Is(err, context.Canceled) {
			t.Fatalf("serve: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not stop")
	}
}
