package app

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/quarryhq/quarry/console"
	"github.com/quarryhq/quarry/errcode"
	"github.com/quarryhq/quarry/internal/textclean"
	"github.com/quarryhq/quarry/kb"
	"github.com/quarryhq/quarry/llm"
	"github.com/quarryhq/quarry/llm/anthropic"
	"github.com/quarryhq/quarry/llm/openai"
	"github.com/quarryhq/quarry/research"
	"github.com/quarryhq/quarry/research/offline"
	"github.com/quarryhq/quarry/search"
	"github.com/quarryhq/quarry/search/credibility"
	"github.com/quarryhq/quarry/search/kbsource"
	"github.com/quarryhq/quarry/store"
)

// Default models when only a key is configured.
const (
	defaultOpenAIModel    = "gpt-4o-mini"
	defaultAnthropicModel = "claude-sonnet-4-5"
)

// IngestDocs ingests each --docs path into its knowledge base (unchanged
// files are skipped, files deleted from a folder leave it). A path that
// is missing or holds nothing to ingest is an error and leaves no
// knowledge base behind.
func (a *App) IngestDocs(ctx context.Context, docs []string, w io.Writer) error {
	svc, err := a.KB(ctx)
	if err != nil {
		return err
	}
	for _, p := range docs {
		if _, err := os.Stat(p); err != nil {
			return errcode.Wrap(errcode.Invalid, fmt.Errorf("docs: %w", err))
		}
		name := DocsKBName(p)
		_, missing := svc.Get(ctx, name)
		_, emb, err := a.OpenKB(ctx, name, true)
		if err != nil {
			return err
		}
		rep, err := svc.AddPaths(ctx, name, []string{p}, kb.AddOptions{Embedder: emb})
		if err != nil {
			return fmt.Errorf("docs %s: %w", p, err)
		}
		for _, pr := range rep.Failed {
			fmt.Fprintf(w, "quarry: skipped %s: %s\n", textclean.Line(pr.Origin), textclean.Line(pr.Reason))
		}
		removed, err := svc.PruneMissingFiles(ctx, name, p)
		if err != nil {
			return fmt.Errorf("docs %s: %w", p, err)
		}
		if rep.Added+rep.Updated+len(removed) > 0 {
			fmt.Fprintf(w, "quarry: ingested %s into knowledge base %q: %d added, %d updated, %d unchanged, %d removed (%.1fs)\n", p, name, rep.Added, rep.Updated, rep.Unchanged, len(removed), rep.Seconds)
		}
		k, err := svc.Get(ctx, name)
		if err != nil {
			return err
		}
		stats, err := a.store.KBStats(ctx, k.ID)
		if err != nil {
			return err
		}
		if stats.Chunks == 0 {
			if missing != nil { // created by this run: leave nothing behind
				if derr := svc.Delete(ctx, name); derr != nil {
					return errors.Join(errcode.New(errcode.Invalid, "docs", "nothing could be ingested from "+p), derr)
				}
			}
			return errcode.New(errcode.Invalid, "docs", "nothing could be ingested from "+p)
		}
	}
	return nil
}

var kbNameBad = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)

// DocsKBName names the knowledge base of a --docs path: a readable part
// from the path's last elements and a short hash of its absolute path, so
// that two paths never share one ("notes/my notes" and "notes/my-notes",
// or names that differ only in non-ASCII letters):
// "examples/wiki/corpus.jsonl" → "docs-wiki-corpus.jsonl-1f2e3d4c".
func DocsKBName(p string) string {
	abs, err := filepath.Abs(p)
	if err != nil {
		abs = p
	}
	abs = filepath.Clean(abs)
	sum := sha256.Sum256([]byte(abs))
	tag := hex.EncodeToString(sum[:4])
	readable := filepath.Base(abs)
	if parent := filepath.Base(filepath.Dir(abs)); parent != "/" && parent != "." {
		readable = parent + "-" + readable
	}
	readable = strings.Trim(kbNameBad.ReplaceAllString(readable, "-"), "-.")
	const room = 64 - len("docs-") - 1 - 8
	if len(readable) > room {
		readable = strings.Trim(readable[len(readable)-room:], "-.")
	}
	if readable == "" {
		return "docs-" + tag
	}
	return "docs-" + readable + "-" + tag
}

// OpenSources builds the search sources of the specs. A knowledge base
// must exist; sources this build cannot reach are clear errors.
func (a *App) OpenSources(ctx context.Context, specs []string) ([]search.Source, error) {
	svc, err := a.KB(ctx)
	if err != nil {
		return nil, err
	}
	parsed, err := search.ParseSpecs(strings.Join(specs, ","))
	if err != nil {
		return nil, errcode.Wrap(errcode.Invalid, err)
	}
	cred, err := credibility.New(a.Config.Credibility)
	if err != nil {
		return nil, errcode.Wrap(errcode.Invalid, err)
	}
	var out []search.Source
	for _, s := range parsed {
		switch s.Kind {
		case "kb":
			_, emb, err := a.OpenKB(ctx, s.Arg, false)
			if errors.Is(err, store.ErrNotFound) {
				return nil, errcode.Wrap(errcode.Invalid, fmt.Errorf("source kb:%s: knowledge base %q does not exist (create it with: quarry kb add %s PATH --create)", s.Arg, s.Arg, s.Arg))
			}
			if err != nil {
				return nil, fmt.Errorf("source kb:%s: %w", s.Arg, err)
			}
			out = append(out, credibility.Apply(kbsource.New(svc, s.Arg, emb), cred))
		default:
			src, err := a.remoteSource(s.Kind, cred)
			if err != nil {
				return nil, err
			}
			out = append(out, credibility.Apply(src, cred))
		}
	}
	return out, nil
}

// Engine returns the configured research engine.
func (a *App) Engine() (research.Engine, error) {
	p, err := a.Provider()
	if err != nil || p == nil {
		return offline.Engine{}, err
	}
	return &research.LLMEngine{Provider: p}, nil
}

// Provider returns the configured language model, nil for offline,
// built once per App. Every call is traced (llm.Traced; a no-op unless
// tracing is set up).
func (a *App) Provider() (llm.Provider, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.model == nil {
		p, err := a.provider()
		switch {
		case err != nil:
			p = nil
		case p != nil:
			p = llm.Traced(p, nil)
		}
		a.model = &builtModel{provider: p, err: err}
	}
	return a.model.provider, a.model.err
}

func (a *App) provider() (llm.Provider, error) {
	c := a.Config
	spec := c.LLM
	if spec == "" {
		switch {
		case c.AnthropicKey != "":
			spec = "anthropic"
		case c.OpenAIKey != "" || c.OpenAIBaseURL != "" || c.LLMBaseURL != "":
			spec = "openai"
		default:
			spec = "offline"
		}
	}
	kind, model, _ := strings.Cut(spec, ":")
	switch kind {
	case "offline":
		return nil, nil
	case "openai":
		return openai.New(openai.Config{BaseURL: cmp.Or(c.LLMBaseURL, c.OpenAIBaseURL), APIKey: cmp.Or(c.LLMAPIKey, c.OpenAIKey), Model: cmp.Or(model, defaultOpenAIModel)})
	case "anthropic":
		key := cmp.Or(c.LLMAPIKey, c.AnthropicKey)
		if key == "" {
			return nil, errors.New("llm: anthropic needs ANTHROPIC_API_KEY (or QUARRY_LLM_API_KEY) in the environment")
		}
		return anthropic.New(anthropic.Config{BaseURL: c.LLMBaseURL, APIKey: key, Model: cmp.Or(model, defaultAnthropicModel)})
	}
	return nil, fmt.Errorf("llm: must be offline, openai[:MODEL] or anthropic[:MODEL], got %q", spec)
}

// ConsoleModels builds the client a console request's checked model
// config describes: Anthropic's for claude, else an OpenAI-compatible one
// (OpenAI, vLLM, Ollama) at the config's endpoint.
func ConsoleModels(o console.ProviderOptions) func(console.ModelConfig) (llm.Provider, error) {
	retries := o.MaxRetries
	if retries == 0 {
		retries = 2
	}
	return func(m console.ModelConfig) (llm.Provider, error) {
		if m.Type == console.ModelClaude {
			return anthropic.New(anthropic.Config{BaseURL: m.Endpoint, APIKey: m.APIKey, Model: m.ModelName, Timeout: o.Timeout, MaxRetries: retries, HTTPClient: o.HTTPClient})
		}
		return openai.New(openai.Config{BaseURL: m.ResolvedEndpoint(), APIKey: m.APIKey, Model: m.ModelName, Timeout: o.Timeout, MaxRetries: retries, HTTPClient: o.HTTPClient})
	}
}
