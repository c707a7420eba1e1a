package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// TestMain runs the CLI itself when asked (QUARRY_TEST_MAIN=1), so a test
// can start real quarry processes and kill them; otherwise it runs the
// tests and checks that none leaves a goroutine behind.
func TestMain(m *testing.M) {
	if os.Getenv("QUARRY_TEST_MAIN") == "1" {
		os.Args = append([]string{"quarry"}, strings.Split(os.Getenv("QUARRY_TEST_ARGS"), "\x1f")...)
		main()
		os.Exit(0)
	}
	goleak.VerifyTestMain(m)
}

// quarryProcess starts the CLI as a real process.
func quarryProcess(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "QUARRY_TEST_MAIN=1", "QUARRY_TEST_ARGS="+strings.Join(args, "\x1f"))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _, _ = cmd.Process.Wait() })
	return cmd
}

// TestKillWorker: two worker processes share a queue of 40 researches;
// one is SIGKILLed while it runs some. Every research completes, none is
// planned twice or searches a sub-question twice, none runs twice at once
// (every event sequence is whole, 1..N) — River rescues the dead worker's
// jobs after --rescue-after (20 s here) and the other worker continues each
// from its last checkpoint.
func TestKillWorker(t *testing.T) {
	data := t.TempDir()
	if _, errOut, err := run(t, data, "kb", "add", "wiki", researchCorpus, "--create"); err != nil {
		t.Fatalf("%v %s", err, errOut)
	}
	questions := []string{
		composerQ, "Who was Giuseppe Verdi?", "Where was Antonín Dvořák born?", "What did Dvořák compose?",
		"Which operas did Verdi write?", "When did Verdi die?", "Who taught Dvořák?", "Where did Verdi live?",
	}
	for i := range 32 { // 40 in all, the figure
		questions = append(questions, fmt.Sprintf("%s (asked again, %d)", questions[i%8], i))
	}
	var ids []string
	for _, q := range questions {
		out, errOut, err := run(t, data, "research", q, "--source", "kb:wiki", "--level", "standard", "--detach")
		if err != nil {
			t.Fatalf("%v %s", err, errOut)
		}
		ids = append(ids, strings.TrimSpace(out))
	}
	a := quarryProcess(t, "--data-dir", data, "worker", "--concurrency", "2", "--rescue-after", "20s")
	// Once the first runs something, start the second beside it, then
	// kill the first (with 40 queued it is always mid-run).
	deadline := time.Now().Add(30 * time.Second)
	for {
		list, _, _ := run(t, data, "research", "list", "--json")
		if strings.Contains(list, `"status":"processing"`) || strings.Contains(list, `"status":"completed"`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the first worker never started")
		}
		time.Sleep(5 * time.Millisecond)
	}
	b := quarryProcess(t, "--data-dir", data, "worker", "--concurrency", "2", "--rescue-after", "20s")
	time.Sleep(20 * time.Millisecond)
	if err := a.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_, _ = a.Process.Wait()
	// River's rescuer looks every 30 s: the dead worker's jobs run again
	// within 20 + 30 s, more under -race on a busy machine.
	deadline = time.Now().Add(3 * time.Minute)
	for {
		list, _, _ := run(t, data, "research", "list", "--json")
		if strings.Count(list, `"status":"completed"`) == len(ids) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not all completed after the kill:\n%s", list)
		}
		time.Sleep(50 * time.Millisecond)
	}
	_ = b.Process.Signal(syscall.SIGTERM)
	_, _ = b.Process.Wait()
	resumed := 0
	for _, id := range ids {
		out, _, err := run(t, data, "research", "watch", id, "--json")
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(out, "resumed at stage") {
			resumed++
		}
		plans := 0
		searched := map[string]int{}
		for i, line := range strings.Split(strings.TrimSpace(out), "\n") {
			var e struct {
				Seq   int
				Type  string
				Agent *struct{ Agent, Status, Result string }
			}
			if err := json.Unmarshal([]byte(line), &e); err != nil || e.Seq != i+1 {
				t.Fatalf("research %s event %d: seq %d (%v)", id, i+1, e.Seq, err)
			}
			if e.Agent == nil {
				continue
			}
			if e.Agent.Agent == "planner" && e.Agent.Status == "completed" {
				plans++
			}
			if q, _, ok := strings.Cut(e.Agent.Result, ": "); ok && strings.HasPrefix(q, "Q") && strings.HasSuffix(e.Agent.Result, "results") {
				searched[q]++
			}
		}
		if plans != 1 {
			t.Errorf("research %s planned %d times", id, plans)
		}
		for q, n := range searched {
			if n > 1 {
				t.Errorf("research %s searched %s %d times", id, q, n)
			}
		}
	}
	t.Logf("%d of %d researches were taken over from the killed worker", resumed, len(ids))
	if resumed == 0 {
		t.Error("the killed worker left no research to take over: it was not killed mid-run")
	}
}
