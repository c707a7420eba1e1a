package qa

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/quarryhq/quarry/errcode"
	"github.com/quarryhq/quarry/internal/passage"
	"github.com/quarryhq/quarry/internal/textclean"
	"github.com/quarryhq/quarry/kb"
	"github.com/quarryhq/quarry/kb/analyze"
	"github.com/quarryhq/quarry/llm"
	"github.com/quarryhq/quarry/session"
)

// modelReply is the structured output a model answers with.
type modelReply struct {
	Answer      string   `json:"answer" jsonschema:"the answer, in the question's language, each statement followed by the numbers of the passages it rests on, e.g. [1] or [2][3]"`
	Citations   []int    `json:"citations" jsonschema:"the numbers of the passages the answer rests on"`
	Confidence  float64  `json:"confidence" jsonschema:"0 to 1: how fully the passages answer the question"`
	Suggestions []string `json:"suggestions" jsonschema:"up to 3 short follow-up questions the passages can answer"`
	Unknown     bool     `json:"unknown" jsonschema:"true when the passages do not answer the question"`
}

const modelSystem = `You answer questions about a knowledge base from the numbered passages you are given, and from nothing else.
Write the answer in %s. After each statement put the numbers of the passages it rests on in brackets, e.g. [1] or [2][3].
Give your confidence from 0 to 1 that the passages fully answer the question, and up to 3 short follow-up questions the passages can answer.
When the passages do not answer the question, set unknown to true and say so in the answer; never guess.`

// askModel answers from hits with one structured call, then checks the
// citations: a number that names no passage is dropped, and a statement
// whose cited passages do not share its words lowers the confidence.
func (a *Asker) askModel(ctx context.Context, question, lang string, sess *session.Session, hits []kb.Result) (*Answer, error) {
	var b strings.Builder
	b.WriteString("Passages:\n\n")
	for i, h := range hits {
		fmt.Fprintf(&b, "[%d] %s (%s)\n%s\n\n", i+1, h.Title, h.SourceURL, strings.TrimSpace(h.Text))
	}
	b.WriteString("Question: " + question)
	var msgs []llm.Message
	if sess != nil {
		for _, m := range sess.Messages[max(0, len(sess.Messages)-6):] {
			msgs = append(msgs, llm.Message{Role: m.Role, Content: m.Content})
		}
	}
	msgs = append(msgs, llm.Message{Role: llm.RoleUser, Content: b.String()})
	langName := map[string]string{"ko": "Korean", "en": "English"}[lang]
	rep, _, err := llm.Structured[modelReply](ctx, a.Model, "answer", llm.Request{System: fmt.Sprintf(modelSystem, langName), Messages: msgs, MaxTokens: 1500})
	if err != nil {
		return nil, errcode.Wrap(errcode.Unavailable, fmt.Errorf("ask: the model (%s) did not answer: %w", a.Model.Name(), err))
	}
	ans := &Answer{Language: lang, Engine: a.Model.Name(), Sources: []string{}, Quotes: []Quote{}, Suggestions: []string{}}
	if rep.Unknown || strings.TrimSpace(rep.Answer) == "" {
		ans.Unknown, ans.Answer, ans.Confidence = true, unknownText(lang), round2(min(max(rep.Confidence, 0), 0.2))
		ans.Suggestions = modelSuggestions(rep.Suggestions)
		return ans, nil
	}
	text, used, dropped := checkMarkers(rep.Answer, len(hits))
	for _, n := range rep.Citations {
		if n >= 1 && n <= len(hits) && !slices.Contains(used, n) {
			used = append(used, n)
		} else if n < 1 || n > len(hits) {
			dropped++
		}
	}
	supported, total := support(rep.Answer, hits) // a statement citing only what was not read counts against
	conf := min(max(rep.Confidence, 0), 1)
	if total > 0 {
		conf *= float64(supported) / float64(total)
	}
	if len(used) == 0 { // an answer that cites nothing read is not trusted
		conf = min(conf, 0.3)
	}
	ans.Answer, ans.Confidence = text, round2(conf)
	// Nothing cited, or no cited statement that its passages hold: the
	// evidence does not carry the answer, so it is not given.
	if len(used) == 0 || total > 0 && supported == 0 {
		ans.Unknown, ans.Answer = true, unknownText(lang)
		ans.Suggestions = modelSuggestions(rep.Suggestions)
		return ans, nil
	}
	seen := map[string]bool{}
	for _, n := range used {
		h := hits[n-1]
		ans.Quotes = append(ans.Quotes, Quote{Number: n, Text: textclean.Clip(strings.TrimSpace(h.Text), 500), URL: h.SourceURL, Title: h.Title, ChunkID: h.ChunkID, Score: h.Score})
		if !seen[h.SourceURL] {
			seen[h.SourceURL] = true
			ans.Sources = append(ans.Sources, h.SourceURL)
		}
	}
	ans.Suggestions = modelSuggestions(rep.Suggestions)
	if dropped > 0 {
		ans.Note = fmt.Sprintf("%d citation(s) named no passage that was read and were removed.", dropped)
	}
	return ans, nil
}

var markerRE = regexp.MustCompile(`\[(\d{1,3})\]`)

// checkMarkers keeps the [n] markers that name a passage and removes the
// others, returning the cited numbers in order and how many were removed.
func checkMarkers(text string, n int) (string, []int, int) {
	var used []int
	dropped := 0
	out := markerRE.ReplaceAllStringFunc(text, func(m string) string {
		k, _ := strconv.Atoi(m[1 : len(m)-1])
		if k < 1 || k > n {
			dropped++
			return ""
		}
		if !slices.Contains(used, k) {
			used = append(used, k)
		}
		return m
	})
	return strings.TrimSpace(out), used, dropped
}

// support counts the statements with a citation whose content words
// mostly (at least half) appear in the passages they cite — the lexical
// check research reports get.
func support(text string, hits []kb.Result) (supported, total int) {
	for _, sent := range splitStatements(text) {
		nums := markerRE.FindAllStringSubmatch(sent, -1)
		if len(nums) == 0 {
			continue
		}
		terms := passage.UniqueTerms(markerRE.ReplaceAllString(sent, ""))
		if len(terms) == 0 {
			continue
		}
		have := map[string]bool{}
		for _, m := range nums {
			k, _ := strconv.Atoi(m[1])
			if k < 1 || k > len(hits) {
				continue
			}
			for _, t := range analyze.Terms(hits[k-1].Title + " " + hits[k-1].Text) {
				have[t] = true
			}
		}
		total++
		if cover(terms, have) >= 0.5 {
			supported++
		}
	}
	return supported, total
}

// splitStatements cuts an answer into sentences.
func splitStatements(text string) []string {
	var out []string
	start := 0
	for i := 0; i < len(text); i++ {
		if (text[i] == '.' || text[i] == '?' || text[i] == '!' || text[i] == '\n') && (i+1 == len(text) || text[i+1] == ' ' || text[i+1] == '\n') {
			out = append(out, text[start:i+1])
			start = i + 1
		}
	}
	if strings.TrimSpace(text[start:]) != "" {
		out = append(out, text[start:])
	}
	return out
}

func modelSuggestions(in []string) []string {
	out := []string{}
	for _, s := range in {
		s = strings.TrimSpace(s)
		if s == "" || slices.Contains(out, s) {
			continue
		}
		out = append(out, textclean.Clip(s, session.MaxSuggestionChar))
		if len(out) == session.MaxSuggestions {
			break
		}
	}
	return out
}
