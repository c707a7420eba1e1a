package app_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
)

// script is a scripted model for a research on one topic: a plan of four
// sub-questions, analyses that each open two follow-ups (numbered by
// round, so every round searches anew), a report and a judge that finds
// every passage supported.
type script struct {
	// Topic names the sub-questions: "<topic> origins", "… design", ….
	Topic string
	// Learning is what each analysis learns from S1; Summary and Section
	// are the report's, each citing S1.
	Learning, Title, Summary, Heading, Section string
}

var passageRE = regexp.MustCompile(`(?m)^Passage (P\d+): `)

// reply is the scripted content for a call by its schema's name and the
// last message, at the given analysis round; ok is false for a schema the
// script does not know.
func (s script) reply(schema, last string, round int64) (content string, ok bool) {
	switch schema {
	case "research_plan":
		var sqs []string
		for i, facet := range []string{"origins", "design", "uses", "critics"} {
			q := s.Topic + " " + facet
			sqs = append(sqs, fmt.Sprintf(`{"text":%q,"priority":%d,"queries":[%q]}`, q, i+1, q))
		}
		return `{"strategy":"search each facet","sub_questions":[` + strings.Join(sqs, ",") + `],"estimated_seconds":10}`, true
	case "research_analysis":
		return fmt.Sprintf(`{"learnings":[{"text":%q,"source_ids":["S1"]}],"directions":[{"text":"%[2]s follow-up %[3]d a","parent_id":"Q1","queries":["%[2]s follow-up %[3]d a"]},{"text":"%[2]s follow-up %[3]d b","parent_id":"Q2","queries":["%[2]s follow-up %[3]d b"]}],"is_complete":false,"confidence":0.5,"relevance":1,"quality":0.8}`, s.Learning, s.Topic, round), true
	case "research_report":
		return fmt.Sprintf(`{"title":%q,"summary":%q,"sections":[{"heading":%q,"body":%q}]}`, s.Title, s.Summary, s.Heading, s.Section), true
	case "citation_judge":
		var vs []string
		for _, m := range passageRE.FindAllStringSubmatch(last, -1) {
			vs = append(vs, fmt.Sprintf(`{"id":%q,"supported":true,"reason":""}`, m[1]))
		}
		return `{"verdicts":[` + strings.Join(vs, ",") + `]}`, true
	}
	return "", false
}

// writeCompletion answers an OpenAI chat completion with content, its
// usage counted as the request's and the reply's bytes / 4.
func writeCompletion(w http.ResponseWriter, model string, body []byte, content string) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"id": "c", "object": "chat.completion", "created": 1, "model": model,
		"choices": []any{map[string]any{"index": 0, "finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": content}}},
		"usage":   map[string]any{"prompt_tokens": len(body) / 4, "completion_tokens": len(content) / 4, "total_tokens": (len(body) + len(content)) / 4}})
}
