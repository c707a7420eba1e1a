package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestKillDuringUpload: a server is SIGKILLed while it ingests a large
// upload (2 MB here, 320 KB under -race, QUARRY_TEST_UPLOAD_MB for more;
// an attempt must end within 0.9 of --rescue-after, 40 s here). Nothing of the
// document is searchable then; a new server on the same store takes the
// upload's job over (its files are kept in the store) and finishes it:
// the upload ends completed and the whole document is searchable.
func TestKillDuringUpload(t *testing.T) {
	kib, rescue, wait := 2048, "40s", 5*time.Minute
	if raceOn {
		kib = 320
	}
	if v := os.Getenv("QUARRY_TEST_UPLOAD_MB"); v != "" {
		mb, _ := strconv.Atoi(v)
		kib, rescue, wait = mb<<10, "4m30s", 15*time.Minute // the rescue, then the whole ingest
	}
	data := t.TempDir()
	if _, errOut, err := run(t, data, "kb", "create", "big"); err != nil {
		t.Fatalf("%v %s", err, errOut)
	}
	var doc bytes.Buffer
	for i := 0; doc.Len() < kib<<10; i++ {
		fmt.Fprintf(&doc, "Paragraph %d: the river queue keeps every upload until a worker has ingested it whole, chunk by chunk, and the crawl schedule runs once per slot.\n\n", i)
	}
	doc.WriteString("The last sentence names the sentinel word zanzibarquux.\n")

	serve := func() (*serverProc, string) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		p := &serverProc{cmd: quarryProcess(t, "--data-dir", data, "serve", "--addr", addr, "--sync-upload", "262144", "--max-upload", strconv.Itoa(kib<<10+1<<20), "--rescue-after", rescue)}
		base := "http://" + addr
		deadline := time.Now().Add(30 * time.Second)
		for {
			if r, err := http.Get(base + "/healthz"); err == nil {
				r.Body.Close()
				return p, base
			}
			if time.Now().After(deadline) {
				t.Fatal("the server did not start")
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	a, base := serve()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, _ := mw.CreateFormFile("file", "big.md")
	_, _ = fw.Write(doc.Bytes())
	_ = mw.Close()
	resp, err := http.Post(base+"/v1/knowledge-bases/big/documents", mw.FormDataContentType(), &body)
	if err != nil {
		t.Fatal(err)
	}
	out, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("upload: %d %s", resp.StatusCode, out)
	}
	var in struct {
		Links map[string]string
	}
	_ = json.Unmarshal(out, &in)
	time.Sleep(300 * time.Millisecond) // its job is ingesting
	if err := a.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_, _ = a.cmd.Process.Wait()
	searchable := func() bool {
		out, _, err := run(t, data, "kb", "search", "big", "zanzibarquux paragraph river", "--json")
		return err == nil && strings.Contains(out, "kb://big/upload/big.md")
	}
	if searchable() {
		t.Fatal("part of the document is searchable after the kill")
	}
	_, base = serve()
	restarted := time.Now()
	deadline := restarted.Add(wait)
	var st struct {
		Status string
		Error  *struct{ Message string }
		Report *struct{ Added, Chunks int }
	}
	for {
		r, err := http.Get(base + in.Links["self"])
		if err == nil {
			_ = json.NewDecoder(r.Body).Decode(&st)
			r.Body.Close()
		}
		if st.Status != "" && st.Status != "running" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the upload never ended after the restart")
		}
		time.Sleep(200 * time.Millisecond)
	}
	if st.Status != "completed" || st.Report == nil || st.Report.Added != 1 {
		t.Fatalf("upload after the restart: %+v %+v", st, st.Error)
	}
	if !searchable() {
		t.Fatal("the finished upload is not searchable")
	}
	t.Logf("%d KiB upload finished %s after the restart: %d chunks", kib, time.Since(restarted).Round(time.Second), st.Report.Chunks)
}

type serverProc struct{ cmd *exec.Cmd }
