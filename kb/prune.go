package kb

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// PruneMissingFiles removes the knowledge base's sources read from local
// files (file:// URLs) under root whose file no longer exists, and
// returns their URLs. A folder ingested again this way mirrors it: a file
// deleted from the folder leaves the knowledge base too.
func (s *Service) PruneMissingFiles(ctx context.Context, kbName, root string) ([]string, error) {
	k, err := s.Get(ctx, kbName)
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("prune %s: %w", root, err)
	}
	srcs, err := s.store.SourceList(ctx, k.ID)
	if err != nil {
		return nil, err
	}
	var removed []string
	for _, src := range srcs {
		path, ok := filePath(src.URL)
		if !ok || (path != abs && !strings.HasPrefix(path, abs+string(filepath.Separator))) {
			continue
		}
		if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
			continue // there, or not readable right now: keep it
		}
		if err := s.store.SourceDelete(ctx, k.ID, src.URL); err != nil {
			return removed, fmt.Errorf("prune %s: %w", src.URL, err)
		}
		removed = append(removed, src.URL)
	}
	return removed, nil // SourceDelete moved the version: the index reloads
}

// filePath is the local path of a file:// URL as fileURL writes them (the
// absolute path, unescaped).
func filePath(u string) (string, bool) {
	p, ok := strings.CutPrefix(u, "file://")
	return filepath.FromSlash(p), ok
}
