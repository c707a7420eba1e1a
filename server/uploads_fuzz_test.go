package server

import (
	"bytes"
	"mime/multipart"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzReceiveFiles: whatever a multipart upload holds, receiving it never
// panics, and every file it keeps is written inside the upload's folder
// under a plain name of at most maxFileName bytes, with the bytes counted.
func FuzzReceiveFiles(f *testing.F) {
	part := func(name, file, body string) string {
		return "--B\r\nContent-Disposition: form-data; name=\"" + name + "\"; filename=\"" + file + "\"\r\nContent-Type: text/plain\r\n\r\n" + body + "\r\n"
	}
	for _, s := range []string{
		part("file", "notes.md", "# Notes\n\nHello.") + part("file", "b.txt", "x") + "--B--\r\n",
		part("file", "../../etc/passwd", "root") + "--B--\r\n",
		part("file", "..", "x") + "--B--\r\n",
		part("file", "a\x00b/c\\d.txt", "x") + "--B--\r\n",
		part("file", strings.Repeat("n", 300), "x") + "--B--\r\n",
		part("other", "a.txt", "x") + "--B--\r\n",
		part("file", "", "x") + "--B--\r\n",
		"--B\r\nContent-Disposition: form-data; name=\"file\"; filename*=UTF-8''%E2%80%AE.txt\r\n\r\nx\r\n--B--\r\n",
		"--B\r\n\r\n",
		"",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		dir := t.TempDir()
		paths, names, total, err := receiveFiles(multipart.NewReader(bytes.NewReader([]byte(body)), "B"), dir)
		if err != nil {
			return
		}
		var sum int64
		for _, p := range paths {
			rel, rerr := filepath.Rel(dir, p)
			if rerr != nil || strings.HasPrefix(rel, "..") || filepath.IsAbs(rel) {
				t.Fatalf("%q: %s written outside %s", body, p, dir)
			}
			n := names[p]
			if n == "" || n == "." || n == ".." || strings.ContainsAny(n, "/\x00") || len(n) > maxFileName || filepath.Base(p) != n {
				t.Fatalf("%q: file name %q for %s", body, n, p)
			}
			fi, serr := os.Stat(p)
			if serr != nil {
				t.Fatal(serr)
			}
			sum += fi.Size()
		}
		if sum != total {
			t.Fatalf("%q: %d bytes counted, %d written", body, total, sum)
		}
	})
}
