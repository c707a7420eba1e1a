package app_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/quarryhq/quarry/app"
)

// FuzzConfigFile: whatever the config file holds, loading it never
// panics, and what it refuses is an error with a message.
func FuzzConfigFile(f *testing.F) {
	for _, s := range []string{
		"",
		"llm_model: gpt-4o-mini\nembedder: hash\n",
		"llm_modle: x\n",
		"embed_dim: -3\nthread_idle: 10x\n",
		"search: [1, 2]\nindex_memory: 1e99\n",
		"&a [*a, *a]\n",
		"data_dir: \"\\0\"\n---\nlog_level: debug\n",
	} {
		f.Add(s)
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data string) {
		path := filepath.Join(dir, "config.yaml")
		if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		var c app.Config
		fs := pflag.NewFlagSet("quarry", pflag.ContinueOnError)
		c.RegisterFlags(fs)
		env := func(k string) (string, bool) {
			switch k {
			case "QUARRY_CONFIG":
				return path, true
			case "XDG_DATA_HOME":
				return dir, true
			}
			return "", false
		}
		if err := c.Load(fs, env); err != nil && strings.TrimSpace(err.Error()) == "" {
			t.Fatalf("%q: an empty error", data)
		}
	})
}
