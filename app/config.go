// Package app assembles Quarry from its configuration: the store, the
// knowledge-base service, the model, the embedders, the search sources,
// the fetcher, the research runner and the event broker. The CLI, the
// server and the worker build an App and ask it for the parts they use.
package app

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"gopkg.in/yaml.v3"

	"github.com/quarryhq/quarry/errcode"
)

// Config is everything Quarry reads from flags, QUARRY_* environment
// variables and the config file, in that order of precedence.
type Config struct {
	DataDir     string `yaml:"data_dir"`
	DatabaseURL string `yaml:"database_url"`
	// RedisURL keeps Q&A sessions in Redis (shared by every process);
	// empty keeps them in the database.
	RedisURL     string `yaml:"redis_url"`
	LogLevel     string `yaml:"log_level"`
	Embedder     string `yaml:"embedder"`
	EmbedModel   string `yaml:"embed_model"`
	EmbedBaseURL string `yaml:"embed_base_url"`
	EmbedDim     int    `yaml:"embed_dim"`
	// EmbedAPIKey comes from the environment only (QUARRY_EMBED_API_KEY or
	// OPENAI_API_KEY), never from flags or files that end up in shells'
	// history or repositories.
	EmbedAPIKey string `yaml:"-"`
	// LLM is offline, openai[:model] or anthropic[:model]; empty picks one
	// from the keys in the environment.
	LLM        string `yaml:"llm"`
	LLMBaseURL string `yaml:"llm_base_url"`
	// LLM keys come from the environment only.
	OpenAIKey    string `yaml:"-"`
	AnthropicKey string `yaml:"-"`
	// LLMAPIKey (QUARRY_LLM_API_KEY) wins over the provider's own key;
	// OpenAIBaseURL is OPENAI_BASE_URL, the OpenAI SDKs' convention.
	LLMAPIKey     string `yaml:"-"`
	OpenAIBaseURL string `yaml:"-"`

	// ThreadIdle is how long a thread stays active without activity
	// before it shows as idle (a duration; default 10m).
	ThreadIdle string `yaml:"thread_idle"`
	// Search is where a long-lived process (serve, worker, mcp) searches
	// a knowledge base: "database" (in the store, loading nothing),
	// "memory" (loaded on its first search, kept warm) or "auto" (empty:
	// database on PostgreSQL, memory on SQLite). One-shot commands always
	// search in the database.
	Search string `yaml:"search"`
	// IndexMemory is the memory, in MB, PostgreSQL may use to build a
	// knowledge base's vector index (its maintenance_work_mem for the
	// build; 0: 1024). A graph larger than it is built on disk, slower.
	IndexMemory int `yaml:"index_memory"`
	// ExactSearch makes BM25 in PostgreSQL prove each top K however many
	// chunks that reads; by default a search of a large knowledge base
	// returns the best of the chunks its term lists rank highest once it
	// has read 2,048 of them.
	ExactSearch bool `yaml:"exact_search"`
	// VectorEF is the least hnsw.ef_search of a vector search on
	// PostgreSQL, 1-1000 (0: 100): higher finds more of the exact nearest
	// chunks, slower.
	VectorEF int `yaml:"vector_ef"`
	// IndexEFConstruction is the ef_construction of the HNSW index
	// PostgreSQL builds for a knowledge base, 32-1000 (0: the store's
	// default): higher builds a graph whose searches find more of the
	// exact nearest chunks, slower to build.
	IndexEFConstruction int `yaml:"index_ef_construction"`

	// AllowPrivate lifts the fetcher's SSRF guard (loopback, private,
	// link-local and metadata addresses).
	AllowPrivate bool `yaml:"allow_private"`
	// WebSearch picks the web search API: google, searxng or brave (default:
	// the first one configured, in that order).
	WebSearch        string `yaml:"web_search"`
	GoogleCX         string `yaml:"google_cx"`
	GoogleBaseURL    string `yaml:"google_base_url"`
	SearxNGURL       string `yaml:"searxng_url"`
	BraveBaseURL     string `yaml:"brave_base_url"`
	ArxivBaseURL     string `yaml:"arxiv_base_url"`
	ArxivSnapshot    string `yaml:"arxiv_snapshot"`
	WikipediaBaseURL string `yaml:"wikipedia_base_url"`
	// Search API keys come from the environment only.
	GoogleKey string `yaml:"-"`
	BraveKey  string `yaml:"-"`
	// Credibility overrides the credibility table: domain → score 0–1
	// (config file only).
	Credibility map[string]float64 `yaml:"credibility"`
	// embedderSet records that the user chose an embedder explicitly.
	embedderSet bool
}

type setting struct {
	flag, env, yaml string
	usage           string
	ptr             any
}

func (c *Config) settings() []setting {
	return []setting{
		{"data-dir", "QUARRY_DATA_DIR", "data_dir", "directory for the embedded database (default $XDG_DATA_HOME/quarry)", &c.DataDir},
		{"database-url", "QUARRY_DATABASE_URL", "database_url", "postgres:// URL to use PostgreSQL instead of embedded SQLite", &c.DatabaseURL},
		{"redis-url", "QUARRY_REDIS_URL", "redis_url", "redis:// URL to keep Q&A sessions in Redis (default: in the database)", &c.RedisURL},
		{"log-level", "QUARRY_LOG_LEVEL", "log_level", "debug, info, warn or error", &c.LogLevel},
		{"embedder", "QUARRY_EMBEDDER", "embedder", "hash (offline) or openai (any OpenAI-compatible /v1/embeddings server)", &c.Embedder},
		{"embed-model", "QUARRY_EMBED_MODEL", "embed_model", "embedding model for --embedder openai", &c.EmbedModel},
		{"embed-base-url", "QUARRY_EMBED_BASE_URL", "embed_base_url", "base URL up to /v1 for --embedder openai", &c.EmbedBaseURL},
		{"embed-dim", "QUARRY_EMBED_DIM", "embed_dim", "embedding dimension (hash default 384; openai: sent as dimensions)", &c.EmbedDim},
		{"llm", "QUARRY_LLM", "llm", "language model: offline, openai[:MODEL] or anthropic[:MODEL] (default: from ANTHROPIC_API_KEY / OPENAI_API_KEY / OPENAI_BASE_URL, else offline)", &c.LLM},
		{"llm-base-url", "QUARRY_LLM_BASE_URL", "llm_base_url", "base URL of the LLM API (OpenAI-compatible: up to /v1)", &c.LLMBaseURL},
		{"thread-idle", "QUARRY_THREAD_IDLE", "thread_idle", "how long a thread stays active without activity before it is idle (a duration, default 10m)", &c.ThreadIdle},
		{"search", "QUARRY_SEARCH", "search", "where serve, worker and mcp search knowledge bases: database (nothing loaded; replicas hold no per-chunk state), memory (each knowledge base loaded on first use) or auto (default: database on PostgreSQL, memory on SQLite)", &c.Search},
		{"index-memory", "QUARRY_INDEX_MEMORY", "index_memory", "MB PostgreSQL may use to build a knowledge base's HNSW index, 64-65536 (default 1024; about 1.5 KB a chunk at 384 dimensions keeps the build in memory)", &c.IndexMemory},
		{"exact-search", "QUARRY_EXACT_SEARCH", "exact_search", "on PostgreSQL, BM25 proves each top K however many chunks it reads (default: a search of a large knowledge base returns the best of the 2,048 chunks its term lists rank highest)", &c.ExactSearch},
		{"vector-ef", "QUARRY_VECTOR_EF", "vector_ef", "on PostgreSQL, the least hnsw.ef_search of a vector search, 1-1000 (default 100; a search for K chunks uses at least K; a hybrid search's list no more than 100 or its depth): higher finds more of the exact nearest chunks, slower", &c.VectorEF},
		{"index-ef-construction", "QUARRY_INDEX_EF_CONSTRUCTION", "index_ef_construction", "on PostgreSQL, the ef_construction of a knowledge base's HNSW index, 32-1000 (default 64): higher builds an index whose searches find more of the exact nearest chunks, slower to build; an index built keeps its own", &c.IndexEFConstruction},
		{"allow-private", "QUARRY_ALLOW_PRIVATE", "allow_private", "allow fetching loopback, private, link-local and cloud-metadata addresses (off: the SSRF guard refuses them)", &c.AllowPrivate},
		{"web-search", "QUARRY_WEB_SEARCH", "web_search", "web search API for --source web: google, searxng or brave (default: the first configured)", &c.WebSearch},
		{"google-cx", "QUARRY_GOOGLE_CX", "google_cx", "Google Programmable Search engine id (with QUARRY_GOOGLE_API_KEY)", &c.GoogleCX},
		{"google-base-url", "QUARRY_GOOGLE_BASE_URL", "google_base_url", "Google Custom Search API endpoint", &c.GoogleBaseURL},
		{"searxng-url", "QUARRY_SEARXNG_URL", "searxng_url", "SearxNG instance URL (JSON format enabled)", &c.SearxNGURL},
		{"brave-base-url", "QUARRY_BRAVE_BASE_URL", "brave_base_url", "Brave Search API endpoint (with QUARRY_BRAVE_API_KEY)", &c.BraveBaseURL},
		{"arxiv-base-url", "QUARRY_ARXIV_BASE_URL", "arxiv_base_url", "arXiv API endpoint", &c.ArxivBaseURL},
		{"arxiv-snapshot", "QUARRY_ARXIV_SNAPSHOT", "arxiv_snapshot", "arXiv metadata snapshot (JSON Lines) searched locally instead of the API", &c.ArxivSnapshot},
		{"wikipedia-base-url", "QUARRY_WIKIPEDIA_BASE_URL", "wikipedia_base_url", "MediaWiki API endpoint (default English Wikipedia)", &c.WikipediaBaseURL},
	}
}

// RegisterFlags adds a flag for every setting, and --config.
func (c *Config) RegisterFlags(fs *pflag.FlagSet) {
	fs.String("config", "", "config file (YAML; default $XDG_CONFIG_HOME/quarry/config.yaml)")
	for _, s := range c.settings() {
		switch p := s.ptr.(type) {
		case *string:
			fs.String(s.flag, "", s.usage+" [$"+s.env+"]")
		case *int:
			_ = p
			fs.Int(s.flag, 0, s.usage+" [$"+s.env+"]")
		case *bool:
			fs.Bool(s.flag, false, s.usage+" [$"+s.env+"]")
		}
	}
}

// Load fills c from the config file, then the environment (read through
// env, never the process's own: tests give their own), then flags. A bad
// value is an errcode.Invalid error naming the setting.
func (c *Config) Load(fs *pflag.FlagSet, env func(string) (string, bool)) error {
	return errcode.Wrap(errcode.Invalid, c.load(fs, env))
}

// load reads every setting in one place, each from the file, the
// environment and the flags in that order, so that their precedence is
// seen at once; it stays one function.
func (c *Config) load(fs *pflag.FlagSet, env func(string) (string, bool)) error {
	if env == nil {
		env = func(string) (string, bool) { return "", false }
	}
	getenv := func(k string) string { v, _ := env(k); return v }
	firstEnv := func(names ...string) string {
		for _, n := range names {
			if v := getenv(n); v != "" {
				return v
			}
		}
		return ""
	}
	path, err := fs.GetString("config")
	if err != nil {
		return err
	}
	explicit := path != ""
	if path == "" {
		path = getenv("QUARRY_CONFIG")
		explicit = path != ""
	}
	if path == "" {
		if dir, err := os.UserConfigDir(); err == nil {
			path = filepath.Join(dir, "quarry", "config.yaml")
		}
	}
	if path != "" {
		data, err := os.ReadFile(path)
		switch {
		case err == nil:
			if err := decodeConfig(data, c); err != nil {
				return fmt.Errorf("config file %s: %w", path, err)
			}
		case explicit || !errors.Is(err, os.ErrNotExist):
			return fmt.Errorf("config file: %w", err)
		}
	}
	fileEmbedder := c.Embedder != ""
	for _, s := range c.settings() {
		v, ok := env(s.env)
		if fs.Changed(s.flag) {
			v, ok = fs.Lookup(s.flag).Value.String(), true
		}
		if !ok {
			continue
		}
		switch p := s.ptr.(type) {
		case *string:
			*p = v
		case *int:
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				return fmt.Errorf("%s: must be an integer, got %q", s.flag, v)
			}
			*p = n
		case *bool:
			b, err := strconv.ParseBool(strings.TrimSpace(v))
			if err != nil {
				return fmt.Errorf("%s: must be true or false (1 or 0), got %q", s.flag, v)
			}
			*p = b
		}
	}
	if _, err := c.ThreadIdleAfter(); err != nil {
		return err
	}
	switch c.Search = strings.ToLower(strings.TrimSpace(c.Search)); c.Search {
	case "", SearchAuto, SearchDatabase, SearchMemory:
	default:
		return errcode.New(errcode.Invalid, "search", fmt.Sprintf("must be auto, database or memory, got %q", c.Search))
	}
	if c.IndexMemory != 0 && (c.IndexMemory < 64 || c.IndexMemory > 65536) {
		return errcode.New(errcode.Invalid, "index-memory", fmt.Sprintf("must be between 64 and 65536 (MB), got %d", c.IndexMemory))
	}
	if c.VectorEF != 0 && (c.VectorEF < 1 || c.VectorEF > 1000) {
		return errcode.New(errcode.Invalid, "vector-ef", fmt.Sprintf("must be between 1 and 1000, got %d", c.VectorEF))
	}
	if c.IndexEFConstruction != 0 && (c.IndexEFConstruction < 32 || c.IndexEFConstruction > 1000) {
		return errcode.New(errcode.Invalid, "index-ef-construction", fmt.Sprintf("must be between 32 and 1000, got %d", c.IndexEFConstruction))
	}
	c.embedderSet = fileEmbedder || getenv("QUARRY_EMBEDDER") != "" || fs.Changed("embedder")
	c.EmbedAPIKey = firstEnv("QUARRY_EMBED_API_KEY", "OPENAI_API_KEY")
	c.OpenAIBaseURL = getenv("OPENAI_BASE_URL")
	if c.EmbedBaseURL == "" {
		c.EmbedBaseURL = c.OpenAIBaseURL
	}
	c.OpenAIKey = getenv("OPENAI_API_KEY")
	c.AnthropicKey = getenv("ANTHROPIC_API_KEY")
	c.LLMAPIKey = getenv("QUARRY_LLM_API_KEY")
	c.GoogleKey = firstEnv("QUARRY_GOOGLE_API_KEY", "GOOGLE_API_KEY")
	c.BraveKey = firstEnv("QUARRY_BRAVE_API_KEY", "BRAVE_API_KEY")
	if c.DataDir == "" {
		base := getenv("XDG_DATA_HOME")
		if base == "" {
			home, err := os.UserHomeDir()
			if err != nil {
				return fmt.Errorf("data dir: %w (set --data-dir or QUARRY_DATA_DIR)", err)
			}
			base = filepath.Join(home, ".local", "share")
		}
		c.DataDir = filepath.Join(base, "quarry")
	}
	if c.LogLevel == "" {
		c.LogLevel = "warn"
	}
	if c.Embedder == "" {
		c.Embedder = "hash"
	}
	switch c.Embedder {
	case "hash", "openai":
	default:
		return fmt.Errorf("embedder: must be hash or openai, got %q", c.Embedder)
	}
	switch c.WebSearch {
	case "", "google", "searxng", "brave":
	default:
		return fmt.Errorf("web-search: must be google, searxng or brave, got %q", c.WebSearch)
	}
	if c.EmbedDim < 0 || c.EmbedDim > MaxEmbedDim {
		return fmt.Errorf("embed-dim: must be between 1 and %d (0 = the embedder's own), got %d", MaxEmbedDim, c.EmbedDim)
	}
	return nil
}

// MaxEmbedDim is the longest embedding a knowledge base takes: pgvector's
// limit for a stored vector (the largest models' are 3,072 or 4,096).
const MaxEmbedDim = 16000

var unknownKey = regexp.MustCompile(`line (\d+): field (\S+) not found in type`)

// decodeConfig reads the YAML config file strictly: a key Quarry does not
// know (a typo such as llm_modle) is an error naming it, not ignored.
func decodeConfig(data []byte, c *Config) error {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	err := dec.Decode(c)
	if errors.Is(err, io.EOF) {
		return nil // an empty file
	}
	var te *yaml.TypeError
	if errors.As(err, &te) {
		msgs := make([]string, len(te.Errors))
		for i, e := range te.Errors {
			if m := unknownKey.FindStringSubmatch(e); m != nil {
				e = fmt.Sprintf("line %s: unknown key %q (known keys: %s)", m[1], m[2], strings.Join(configKeys(), ", "))
			}
			msgs[i] = e
		}
		return errors.New(strings.Join(msgs, "; "))
	}
	return err
}

// configKeys are the keys the config file accepts.
func configKeys() []string {
	t := reflect.TypeFor[Config]()
	var keys []string
	for i := range t.NumField() {
		if k, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ","); k != "" && k != "-" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return keys
}

// Where long-lived processes search (Config.Search).
const (
	SearchAuto     = "auto"
	SearchDatabase = "database"
	SearchMemory   = "memory"
)

// ThreadIdleAfter is ThreadIdle as a duration (0: the default).
func (c *Config) ThreadIdleAfter() (time.Duration, error) {
	if c.ThreadIdle == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(strings.TrimSpace(c.ThreadIdle))
	if err != nil || d <= 0 {
		return 0, errcode.New(errcode.Invalid, "thread-idle", fmt.Sprintf("must be a positive duration such as 10m or 1h, got %q", c.ThreadIdle))
	}
	return d, nil
}
