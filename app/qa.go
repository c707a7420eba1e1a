package app

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/quarryhq/quarry/console"
	"github.com/quarryhq/quarry/embed"
	"github.com/quarryhq/quarry/errcode"
	"github.com/quarryhq/quarry/kb"
	"github.com/quarryhq/quarry/qa"
	"github.com/quarryhq/quarry/session"
	"github.com/quarryhq/quarry/store"
)

// Sessions returns the Q&A session store: Redis when a Redis URL is
// configured, else the database (so the CLI's separate runs share them).
func (a *App) Sessions(ctx context.Context) (session.Store, error) {
	st, err := a.Store(ctx)
	if err != nil {
		return nil, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.sessions != nil {
		return a.sessions, nil
	}
	if a.Config.RedisURL == "" {
		a.sessions = &session.Stored{Store: st}
		return a.sessions, nil
	}
	opt, err := redis.ParseURL(a.Config.RedisURL)
	if err != nil {
		return nil, errcode.New(errcode.Invalid, "redis-url", "must be a redis:// or rediss:// URL")
	}
	c := redis.NewClient(opt)
	if err := c.Ping(ctx).Err(); err != nil {
		_ = c.Close() // the next call dials again
		return nil, errcode.Dependency("redis", fmt.Errorf("at %s: %w", opt.Addr, err))
	}
	a.redis, a.sessions = c, &session.Redis{Client: c}
	return a.sessions, nil
}

// PingRedis checks the Redis that keeps Q&A sessions, when one is
// configured: an error names it and is unavailable.
func (a *App) PingRedis(ctx context.Context) error {
	if a.Config.RedisURL == "" {
		return nil
	}
	if _, err := a.Sessions(ctx); err != nil {
		return err
	}
	a.mu.Lock()
	c := a.redis
	a.mu.Unlock()
	if err := c.Ping(ctx).Err(); err != nil {
		return errcode.Dependency("redis", fmt.Errorf("at %s: %w", c.Options().Addr, err))
	}
	return nil
}

// Asker answers questions over the knowledge base kbName, through the
// configured model when there is one.
func (a *App) Asker(ctx context.Context, kbName string) (*qa.Asker, error) {
	svc, emb, err := a.OpenKB(ctx, kbName, false)
	if errors.Is(err, store.ErrNotFound) {
		return nil, errcode.New(errcode.NotFound, "kb", fmt.Sprintf("knowledge base %q does not exist", kbName))
	}
	if err != nil {
		return nil, err
	}
	sessions, err := a.Sessions(ctx)
	if err != nil {
		return nil, err
	}
	model, err := a.Provider() // nil offline: the answer is extractive
	if err != nil {
		return nil, err
	}
	return &qa.Asker{Model: model, Sessions: sessions, Search: qa.SearchFunc(func(ctx context.Context, q kb.Query) ([]kb.Result, error) {
		return svc.Search(ctx, kbName, emb, q)
	}), Chunks: func(ctx context.Context) (int, error) { return svc.Chunks(ctx, kbName) }}, nil
}

// Console returns the RAG console's service.
func (a *App) Console(ctx context.Context) (*console.Service, error) {
	st, err := a.Store(ctx)
	if err != nil {
		return nil, err
	}
	return &console.Service{Store: st, Models: ConsoleModels(console.ProviderOptions{}), KBs: func(ctx context.Context, name string) (*kb.Service, embed.Embedder, error) {
		return a.OpenKB(ctx, name, false)
	}}, nil
}

// ModelConfig turns a CLI model spec, TYPE[:MODEL] (claude, vllm, openai
// or ollama), into the console's model config, with the key from the
// environment (ANTHROPIC_API_KEY for claude, OPENAI_API_KEY for openai,
// QUARRY_LLM_API_KEY for any) and the endpoint from endpoint or the
// configured base URL. The console checks it with the same rules as a
// key that comes with an HTTP request.
func (a *App) ModelConfig(spec, endpoint string) console.ModelConfig {
	c := a.Config
	typ, name, _ := strings.Cut(spec, ":")
	m := console.ModelConfig{Type: typ, ModelName: name, Endpoint: cmp.Or(endpoint, c.LLMBaseURL), APIKey: c.LLMAPIKey}
	switch typ {
	case console.ModelClaude:
		m.APIKey = cmp.Or(c.LLMAPIKey, c.AnthropicKey)
		m.ModelName = cmp.Or(name, defaultAnthropicModel)
	case console.ModelOpenAI:
		m.APIKey = cmp.Or(c.LLMAPIKey, c.OpenAIKey)
		m.ModelName = cmp.Or(name, defaultOpenAIModel)
		m.Endpoint = cmp.Or(m.Endpoint, c.OpenAIBaseURL)
	}
	return m
}
