package qa_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quarryhq/quarry/errcode"
	"github.com/quarryhq/quarry/llm"
	"github.com/quarryhq/quarry/llm/llmtest"
	"github.com/quarryhq/quarry/qa"
	"github.com/quarryhq/quarry/session"
)

// TestAskWithModel: one structured call gives the answer, citations,
// confidence and suggestions; a citation that names no passage read is
// removed, and statements the cited passages do not support lower the
// confidence.
func TestAskWithModel(t *testing.T) {
	ctx := context.Background()
	sessions := &session.Memory{}
	a := asker(t, sessions, filepath.Join("testdata", "ko.jsonl"))
	a.Model = &llmtest.Fake{Model: "m", Reply: llmtest.Script(
		// wrapped in prose and a fence, as local models do
		"Here you go:\n```json\n"+`{"answer": "전기 요금은 매월 25일까지 납부해야 합니다 [1]. 우주 여행도 가능합니다 [9].", "citations": [1, 9], "confidence": 0.9, "suggestions": ["연체료는 얼마인가요?", "자동이체는 어떻게 하나요?", "사업자는요?", "네 번째 질문?"], "unknown": false}`+"\n```",
		`{"answer": "달 착륙선 요금은 백만 원입니다 [2]. 화성 요금은 이백만 원입니다 [2].", "citations": [2], "confidence": 0.9, "suggestions": [], "unknown": false}`,
		`{"answer": "", "citations": [], "confidence": 0.8, "suggestions": ["요금은 언제 납부하나요?"], "unknown": true}`,
	)}
	ans, err := a.Ask(ctx, qa.Request{Question: "요금은 언제 납부하나요?"})
	if err != nil {
		t.Fatal(err)
	}
	if ans.Unknown || ans.Language != "ko" || ans.Answer != "전기 요금은 매월 25일까지 납부해야 합니다 [1]. 우주 여행도 가능합니다 ." || ans.Engine != "fake:m" {
		t.Fatalf("answer: %+v", ans)
	}
	if len(ans.Quotes) != 1 || ans.Quotes[0].Number != 1 || len(ans.Sources) != 1 || !strings.HasPrefix(ans.Sources[0], "kb://notes/") || !strings.Contains(ans.Note, "removed") {
		t.Fatalf("citations: %+v", ans)
	}
	// One of two cited statements is supported, so 0.9 becomes 0.45.
	if ans.Confidence != 0.45 || len(ans.Suggestions) != 3 {
		t.Fatalf("confidence %v, suggestions %v", ans.Confidence, ans.Suggestions)
	}
	fake := a.Model.(*llmtest.Fake)
	req := fake.Requests()[0]
	if req.Schema == nil || !strings.Contains(req.System, "Korean") || !strings.Contains(req.Messages[0].Content, "[1] ") {
		t.Fatalf("request: %+v", req)
	}
	// Statements the cited passage does not hold: low confidence.
	ans, err = a.Ask(ctx, qa.Request{Question: "달 착륙선 요금은 얼마인가요?", SessionID: ans.SessionID})
	if err != nil {
		t.Fatal(err)
	}
	if ans.Confidence != 0 || !ans.Unknown || len(ans.Sources) != 0 {
		t.Fatalf("unsupported statements: %+v", ans)
	}
	if got := fake.Requests()[1].Messages; len(got) != 3 || got[0].Role != llm.RoleUser {
		t.Fatalf("the session's earlier turns go to the model: %+v", got)
	}
	ans, err = a.Ask(ctx, qa.Request{Question: "화성 요금은 얼마인가요?"})
	if err != nil || !ans.Unknown || !strings.Contains(ans.Answer, "모른다고") || ans.Confidence > 0.2 {
		t.Fatalf("unknown: %+v %v", ans, err)
	}

	// A model that does not answer is an error, not a silent extractive answer.
	a.Model = &llmtest.Fake{Model: "m", Reply: func(int, llm.Request) (string, error) { return "", errors.New("connection refused") }}
	if _, err := a.Ask(ctx, qa.Request{Question: "요금은 언제 납부하나요?"}); err == nil || errcode.Of(err) != errcode.Unavailable {
		t.Fatalf("model down: %v", err)
	}
}
