package extract

import (
	"os"
	"path/filepath"
	"testing"
	"unicode/utf8"
)

// FuzzFile: a file of any name and content is read by the parser its name
// or content chooses, or refused, never a panic, and what is read is
// valid UTF-8 (a store refuses anything else).
func FuzzFile(f *testing.F) {
	f.Add("notes.md", []byte("# Title\n\nSome text.\n"))
	f.Add("page.rst.txt", []byte("Title\n=====\n\n.. note:: x\n"))
	f.Add("a.txt", []byte("caf\xe9 au lait\n"))
	f.Add("index", []byte("<html><title>t</title><body>b</body></html>"))
	f.Add("x.adoc", []byte("= T\n\ntext\n"))
	f.Add("blob", []byte("\x00\x01\x02"))
	f.Add("example.py", []byte("def f():\n    return 1\n"))
	f.Fuzz(func(t *testing.T, name string, data []byte) {
		name = filepath.Base(filepath.Clean("/" + name))
		if name == "/" || name == "." || name == ".." || len(name) > 200 {
			return
		}
		p := filepath.Join(t.TempDir(), name)
		if err := os.WriteFile(p, data, 0o600); err != nil {
			return // a name this file system does not take
		}
		doc, err := File(p)
		if err != nil {
			return
		}
		for field, s := range map[string]string{"title": doc.Title, "text": doc.Text, "description": doc.Description, "keywords": doc.Keywords, "language": doc.Language} {
			if !utf8.ValidString(s) {
				t.Fatalf("File(%q) of %q: the %s is not UTF-8: %q", name, data, field, s)
			}
		}
	})
}
