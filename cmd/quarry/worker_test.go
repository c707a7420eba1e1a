package main

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestDetachAndWorker: researches queued with --detach are run by a
// worker; the worker stops on its context's end.
func TestDetachAndWorker(t *testing.T) {
	data := t.TempDir()
	if _, errOut, err := run(t, data, "kb", "add", "wiki", researchCorpus, "--create"); err != nil {
		t.Fatalf("%v %s", err, errOut)
	}
	var ids []string
	for _, q := range []string{"Who was Giuseppe Verdi?", "Where was Antonín Dvořák born?"} {
		out, errOut, err := run(t, data, "research", q, "--source", "kb:wiki", "--level", "quick", "--detach")
		if err != nil || !strings.Contains(errOut, "queued") {
			t.Fatalf("detach: %v %s", err, errOut)
		}
		ids = append(ids, strings.TrimSpace(out))
	}
	list, _, _ := run(t, data, "research", "list")
	if strings.Count(list, "pending") != 2 {
		t.Fatalf("queued researches are pending:\n%s", list)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, _, err := runCtx(ctx, t, data, "worker", "--concurrency", "2")
		done <- err
	}()
	deadline := time.Now().Add(30 * time.Second)
	for {
		list, _, _ = run(t, data, "research", "list")
		if strings.Count(list, "completed") == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the worker did not run them:\n%s", list)
		}
		time.Sleep(50 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("worker: %v", err)
	}
	if _, _, err := run(t, data, "worker", "--concurrency", "0"); !isUsage(err) {
		t.Fatalf("concurrency 0: %v", err)
	}
	for _, id := range ids {
		if shown, _, err := run(t, data, "research", "show", id); err != nil || !strings.Contains(shown, "## References") {
			t.Fatalf("show %s: %v", id, err)
		}
	}
}
