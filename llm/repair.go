package llm

import (
	"errors"
	"strings"
)

// ErrNoJSON is returned by ExtractJSON when a reply holds no JSON object.
var ErrNoJSON = errors.New("no JSON object in the reply")

// ExtractJSON finds the JSON value in a model's reply. Local models often
// wrap it: <think>…</think> reasoning first, Markdown code fences, a
// sentence before or after. It removes reasoning blocks, then returns the
// first balanced {…} object (brackets inside strings are skipped). A value
// cut off before its closing bracket (a truncated reply) is an error, not a
// guess.
func ExtractJSON(reply string) (string, error) {
	s := stripThink(reply)
	for start := 0; start < len(s); {
		i := strings.IndexByte(s[start:], '{')
		if i < 0 {
			break
		}
		i += start
		if end, ok := balanced(s, i); ok {
			return s[i:end], nil
		} else if end < 0 {
			return "", errors.New("the JSON in the reply is truncated (unbalanced brackets)")
		}
		start = i + 1
	}
	return "", ErrNoJSON
}

// stripThink removes <think>…</think> and <thinking>…</thinking> blocks; an
// unclosed block at the start swallows the whole reply up to the first
// closing tag only, since a reasoning model's answer follows it.
func stripThink(s string) string {
	for _, tag := range []string{"think", "thinking", "reasoning"} {
		open, closing := "<"+tag+">", "</"+tag+">"
		for {
			lo := strings.Index(s, open)
			hi := strings.Index(s, closing)
			switch {
			case lo >= 0 && hi > lo:
				s = s[:lo] + s[hi+len(closing):]
			case hi >= 0 && (lo < 0 || hi < lo):
				// A closing tag whose opening was in the system prompt or
				// trimmed by the server (DeepSeek-R1 style).
				s = s[hi+len(closing):]
			case lo >= 0:
				// Unclosed: the reasoning never ended; nothing after it is
				// an answer.
				s = s[:lo]
			default:
				goto next
			}
		}
	next:
	}
	return s
}

// balanced returns the end (exclusive) of the JSON value starting at s[i].
// ok is false when the brackets mismatch (end = 0: try the next candidate)
// or the input ends first (end = -1: truncated).
func balanced(s string, i int) (end int, ok bool) {
	var stack []byte
	inStr, esc := false, false
	for j := i; j < len(s); j++ {
		c := s[j]
		if inStr {
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				inStr = false
			}
			continue
		}
		switch c {
		case '"':
			inStr = true
		case '{':
			stack = append(stack, '}')
		case '[':
			stack = append(stack, ']')
		case '}', ']':
			if len(stack) == 0 || stack[len(stack)-1] != c {
				return 0, false
			}
			stack = stack[:len(stack)-1]
			if len(stack) == 0 {
				return j + 1, true
			}
		}
	}
	return -1, false
}
