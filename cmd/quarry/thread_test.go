package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/quarryhq/quarry/app"
)

func TestThreadCLI(t *testing.T) {
	data := t.TempDir()
	out, errOut, err := run(t, data, "research", "Who was Giuseppe Verdi?", "--docs", researchCorpus, "--level", "quick", "--format", "json")
	if err != nil {
		t.Fatalf("%v %s", err, errOut)
	}
	var first struct {
		ID       string
		ThreadID string `json:"thread_id"`
	}
	if err := json.Unmarshal([]byte(out), &first); err != nil || first.ThreadID == "" {
		t.Fatalf("thread_id in the JSON: %v %.200s", err, out)
	}
	out, errOut, err = run(t, data, "research", "When did he die?", "--source", "kb:"+app.DocsKBName(researchCorpus), "--level", "quick", "--thread", first.ThreadID, "--format", "json")
	if err != nil {
		t.Fatalf("follow-up: %v %s", err, errOut)
	}
	if !strings.Contains(out, `"thread_id": "`+first.ThreadID+`"`) || !strings.Contains(out, `"question": "Who was Giuseppe Verdi?"`) {
		t.Fatalf("follow-up JSON lacks the thread or its history: %.400s", out)
	}
	shown, _, err := run(t, data, "thread", "show", first.ThreadID, "--json")
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Status  string
		Queries []struct {
			Question, Status, Answer string
		}
	}
	if err := json.Unmarshal([]byte(shown), &v); err != nil || v.Status != "active" || len(v.Queries) != 2 ||
		v.Queries[0].Question != "Who was Giuseppe Verdi?" || v.Queries[1].Question != "When did Giuseppe Verdi die?" /* the pronoun read as the thread's subject */ || v.Queries[0].Answer == "" {
		t.Fatalf("thread show: %v %s", err, shown)
	}
	// A configured idle time: the thread, 0 s idle, is idle after 1 ns.
	if out, _, err := run(t, data, "thread", "show", first.ThreadID, "--json", "--thread-idle", "1ns"); err != nil || !strings.Contains(out, `"status": "idle"`) {
		t.Fatalf("--thread-idle: %v %s", err, out)
	}
	if _, _, err := run(t, data, "thread", "list", "--thread-idle", "soon"); err == nil || exitCode(err) != exitUsage || !strings.Contains(err.Error(), "thread-idle") {
		t.Fatalf("a bad --thread-idle: %v", err)
	}
	list, _, err := run(t, data, "thread", "list")
	if err != nil || !strings.Contains(list, first.ThreadID) || !strings.Contains(list, "Who was Giuseppe Verdi?") {
		t.Fatalf("thread list: %v %s", err, list)
	}
	if _, _, err := run(t, data, "thread", "close", first.ThreadID); err != nil {
		t.Fatal(err)
	}
	if _, _, err := run(t, data, "research", "And his operas?", "--source", "kb:"+app.DocsKBName(researchCorpus), "--thread", first.ThreadID); err == nil || exitCode(err) != exitError || !strings.Contains(err.Error(), "closed") {
		t.Fatalf("question on a closed thread: %v", err)
	}
	if _, _, err := run(t, data, "thread", "show", "no-such-thread"); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Fatalf("unknown thread: %v", err)
	}
}
