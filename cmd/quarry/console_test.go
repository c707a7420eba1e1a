package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestConsoleCLI: a dataset from BEIR files, pipelines with the seed's
// rules, and retrieve marking golden chunks in a test pipeline.
func TestConsoleCLI(t *testing.T) {
	data, dir := t.TempDir(), t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	corpusFile := write("corpus.jsonl", `{"_id": "d1", "title": "Aspirin", "text": "Aspirin lowers the risk of heart attacks in adults with heart disease."}
{"_id": "d2", "title": "Vitamin D", "text": "Vitamin D supplements do not prevent fractures in healthy older adults."}
{"_id": "d3", "title": "Coffee", "text": "Drinking coffee is linked to a lower risk of type 2 diabetes."}
`)
	queries := write("queries.jsonl", `{"_id": "q1", "text": "Does aspirin prevent heart attacks?"}
{"_id": "q2", "text": "Does vitamin D prevent fractures?"}
{"_id": "q3", "text": "An unjudged question"}
`)
	qrels := write("qrels.tsv", "query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td2\t1\n")
	badQrels := write("bad.tsv", "query-id\tcorpus-id\tscore\nq1\td404\t1\n")
	if _, e, err := run(t, data, "kb", "add", "sci", corpusFile, "--create"); err != nil {
		t.Fatal(err, e)
	}
	out, e, err := run(t, data, "dataset", "create", "sci-dev", "--from-beir", queries, qrels, "--kb", "sci")
	if err != nil || !strings.Contains(out, "2 questions") {
		t.Fatalf("dataset: %v %s %s", err, out, e)
	}
	if _, _, err := run(t, data, "dataset", "create", "bad", "--from-beir", queries+","+badQrels, "--kb", "sci"); err == nil || exitCode(err) != exitUsage || !strings.Contains(err.Error(), "d404") {
		t.Fatalf("golden documents the knowledge base lacks: %v", err)
	}
	if _, _, err := run(t, data, "pipeline", "create", "sci-test", "--kb", "sci", "--type", "test", "--dataset", "sci-dev", "--mode", "bm25", "--top-k", "2"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := run(t, data, "pipeline", "create", "sci-hybrid", "--kb", "sci"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"pipeline", "create", "x", "--kb", "sci", "--type", "prod"}, "pipeline_type must be 'normal' or 'test'"},
		{[]string{"pipeline", "list", "--type", "prod"}, "pipeline_type must be 'normal' or 'test'"},
		{[]string{"pipeline", "create", "x", "--kb", "sci", "--top-k", "21"}, "Top K must be between 1 and 20"},
		{[]string{"retrieve", "--pipeline", "sci-test", strings.Repeat("q", 10001)}, "Query must be 1-10000 characters"},
		{[]string{"retrieve", "--pipeline", "sci-test", "q", "--top-k", "0"}, ""},
		{[]string{"pipeline", "create", "x", "--kb", "sci", "--type", "test"}, "needs a dataset"},
	} {
		_, _, err := run(t, data, c.args...)
		if c.want == "" {
			if err != nil {
				t.Errorf("%v: %v", c.args[:2], err)
			}
			continue
		}
		if err == nil || exitCode(err) != exitUsage || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.args[:2], err, c.want)
		}
	}
	if _, _, err := run(t, data, "retrieve", "--pipeline", "nope", "q"); err == nil || !strings.Contains(err.Error(), "Invalid pipeline ID") {
		t.Fatalf("unknown pipeline: %v", err)
	}
	list, _, err := run(t, data, "pipeline", "list", "--type", "test", "--dataset", "sci-dev", "--json")
	if err != nil || !strings.Contains(list, `"sci-test"`) || strings.Contains(list, "sci-hybrid") {
		t.Fatalf("filtered list: %v %s", err, list)
	}
	out, _, err = run(t, data, "retrieve", "--pipeline", "sci-test", "Does aspirin prevent heart attacks?", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		QuestionID    string  `json:"question_id"`
		RetrievalTime float64 `json:"retrieval_time"`
		Chunks        []struct {
			DatasourceID string  `json:"datasource_id"`
			Score        float64 `json:"score"`
			IsGolden     *bool   `json:"is_golden"`
		}
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil || r.QuestionID != "q1" || len(r.Chunks) != 2 || r.RetrievalTime <= 0 {
		t.Fatalf("retrieve: %v %s", err, out)
	}
	if r.Chunks[0].DatasourceID != "kb://sci/d1" || r.Chunks[0].Score != 1 || r.Chunks[0].IsGolden == nil || !*r.Chunks[0].IsGolden || *r.Chunks[1].IsGolden {
		t.Fatalf("golden marks: %s", out)
	}
	// A normal pipeline marks nothing.
	out, _, err = run(t, data, "retrieve", "--pipeline", "sci-hybrid", "Does aspirin prevent heart attacks?", "--json")
	if err != nil || strings.Contains(out, "is_golden") {
		t.Fatalf("normal pipeline: %v %s", err, out)
	}
	if _, _, err := run(t, data, "pipeline", "rm", "sci-hybrid"); err != nil {
		t.Fatal(err)
	}
}
