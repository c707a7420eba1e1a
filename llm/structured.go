package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
)

// StructuredError is returned when a model's reply could not be turned into
// the requested JSON after one retry.
type StructuredError struct {
	Schema string
	// Reply is the start of the last reply, for the user to see what came back.
	Reply string
	Err   error
}

func (e *StructuredError) Error() string {
	return fmt.Sprintf("structured output %s: %v (reply began %q)", e.Schema, e.Err, e.Reply)
}

func (e *StructuredError) Unwrap() error { return e.Err }

// SchemaFor builds the JSON Schema of T (an object) from its fields: json
// names, omitempty fields optional, `jsonschema:"…"` tags as descriptions.
func SchemaFor[T any](name string) (*Schema, error) {
	c, err := schemaOf[T]()
	if err != nil {
		return nil, fmt.Errorf("schema %s: %w", name, err)
	}
	return &Schema{Name: name, JSON: c.json}, nil
}

// compiled is a type's schema as JSON (sent to providers, never modified)
// and resolved for validation; built once per type.
type compiled struct {
	json     map[string]any
	resolved *jsonschema.Resolved
}

var schemas sync.Map // reflect.Type → *compiled

func schemaOf[T any]() (*compiled, error) {
	t := reflect.TypeFor[T]()
	if c, ok := schemas.Load(t); ok {
		return c.(*compiled), nil
	}
	s, err := jsonschema.For[T](nil)
	if err != nil {
		return nil, err
	}
	raw, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	c := &compiled{}
	if err := json.Unmarshal(raw, &c.json); err != nil {
		return nil, err
	}
	if c.resolved, err = s.Resolve(nil); err != nil {
		return nil, err
	}
	schemas.Store(t, c)
	return c, nil
}

// Structured asks p for JSON matching T's schema and decodes it. The reply
// is repaired (reasoning blocks, fences and prose around the object are
// dropped) and validated; when that fails the model is asked once more with
// the validation error, and then a *StructuredError is returned. The usage
// of every call made is returned, also on error.
func Structured[T any](ctx context.Context, p Provider, name string, req Request) (T, Usage, error) {
	var zero T
	c, err := schemaOf[T]()
	if err != nil {
		return zero, Usage{}, fmt.Errorf("schema %s: %w", name, err)
	}
	req.Schema = &Schema{Name: name, JSON: c.json}
	var total Usage
	var lastErr error
	var lastReply string
	for attempt := 0; attempt < 2; attempt++ {
		resp, err := p.Chat(ctx, req, nil)
		if resp != nil {
			total = total.Add(resp.Usage)
		}
		// Providers report an empty reply as ErrEmptyReply with the
		// response; like an invalid one, it is worth one more try.
		if err != nil && !(errors.Is(err, ErrEmptyReply) && resp != nil) {
			return zero, total, fmt.Errorf("%s: %w", name, err)
		}
		lastReply = resp.Text
		out, verr := decodeValidated[T](resp.Text, c.resolved)
		if verr == nil {
			return out, total, nil
		}
		lastErr = verr
		if resp.StopReason == "length" || resp.StopReason == "max_tokens" {
			limit := "the output token limit"
			if req.MaxTokens > 0 {
				limit = fmt.Sprintf("the %d-token limit", req.MaxTokens)
			}
			lastErr = fmt.Errorf("%w (the reply hit %s)", verr, limit)
		}
		retry := append([]Message(nil), req.Messages...)
		if strings.TrimSpace(resp.Text) != "" {
			// A blank assistant turn is rejected by some APIs.
			retry = append(retry, Message{Role: RoleAssistant, Content: truncate(resp.Text, 4000)})
		}
		req.Messages = append(retry, Message{Role: RoleUser, Content: "That reply was not valid: " + lastErr.Error() +
			". Answer again with only one JSON object that matches the schema, no prose, no code fences."})
	}
	return zero, total, &StructuredError{Schema: name, Reply: truncate(strings.TrimSpace(lastReply), 120), Err: lastErr}
}

// decodeValidated extracts the JSON object from a reply, validates it
// against the schema and decodes it into T.
func decodeValidated[T any](reply string, resolved *jsonschema.Resolved) (T, error) {
	var zero T
	if strings.TrimSpace(reply) == "" {
		return zero, ErrEmptyReply
	}
	raw, err := ExtractJSON(reply)
	if err != nil {
		return zero, err
	}
	var inst any
	if err := json.Unmarshal([]byte(raw), &inst); err != nil {
		return zero, fmt.Errorf("invalid JSON: %w", err)
	}
	if err := resolved.Validate(inst); err != nil {
		return zero, fmt.Errorf("does not match the schema: %w", err)
	}
	var out T
	if err := json.Unmarshal([]byte(raw), &out); err != nil {
		return zero, fmt.Errorf("does not decode into %s: %w", reflect.TypeFor[T]().Name(), err)
	}
	return out, nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
