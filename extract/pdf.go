package extract

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"time"

	"github.com/ledongthuc/pdf"
)

// ErrNoTextLayer is returned for PDFs with no extractable text (scans).
var ErrNoTextLayer = errors.New("pdf has no text layer (scanned? run OCR first)")

// PDF extracts a PDF's text. It prefers poppler's pdftotext when installed
// (the pure-Go reader garbles some CJK fonts) and falls back to the Go reader.
func PDF(data []byte) (doc Doc, err error) {
	if !bytes.HasPrefix(bytes.TrimLeft(data, "\x00\t\r\n "), []byte("%PDF-")) {
		return Doc{}, errors.New("not a PDF: missing %PDF- header")
	}
	doc.Format = "pdf"
	text, perr := pdftotext(data)
	if perr != nil || strings.TrimSpace(text) == "" {
		text, err = goPDFWithin(data, PDFTimeout)
		if err != nil {
			if perr != nil && !errors.Is(perr, exec.ErrNotFound) {
				return Doc{}, fmt.Errorf("pdf: %v; pdftotext: %v", err, perr)
			}
			return Doc{}, fmt.Errorf("pdf: %w", err)
		}
	}
	text = normalize(text)
	if strings.TrimSpace(text) == "" {
		return Doc{}, ErrNoTextLayer
	}
	doc.Text = text
	doc.Title = firstLineTitle(text, "")
	return doc, nil
}

func pdftotext(data []byte) (string, error) {
	bin, err := exec.LookPath("pdftotext")
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-q", "-enc", "UTF-8", "-", "-")
	cmd.Stdin = bytes.NewReader(data)
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("pdftotext: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	return strings.ReplaceAll(out.String(), "\f", "\n\n"), nil
}

// PDFTimeout bounds the pure-Go reader, which can spin on some malformed
// files; past it the file is reported as unreadable.
var PDFTimeout = 20 * time.Second

// pdfParses counts the Go reader's parses running.
var pdfParses atomic.Int64

func goPDFWithin(data []byte, d time.Duration) (string, error) {
	type result struct {
		text string
		err  error
	}
	ch := make(chan result, 1)
	src := &deadlineReader{r: bytes.NewReader(data), deadline: time.Now().Add(d)}
	pdfParses.Add(1)
	go func() {
		defer pdfParses.Add(-1)
		t, err := goPDF(src, int64(len(data)))
		ch <- result{t, err}
	}()
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case r := <-ch:
		// The reader's own recovery may have turned the deadline's panic
		// into an error of its own words: the deadline decides.
		if r.err == nil || !errors.Is(r.err, errPDFDeadline) && !time.Now().After(src.deadline) {
			return r.text, r.err
		}
	case <-timer.C:
		src.stop.Store(true)
		// The parse ends at its next read; what it built is garbage now,
		// and the memory goes back to the system rather than staying with
		// the process (a bomb inflates to hundreds of megabytes).
		select {
		case <-ch:
		case <-time.After(2 * time.Second):
		}
	}
	debug.FreeOSMemory()
	return "", fmt.Errorf("malformed pdf: reading took longer than %s", d)
}

// deadlineReader is what the Go reader reads the file through. Past its
// deadline every read panics with errPDFDeadline: the reader's own
// recovery and goPDF's turn that into an error, so the parse stops there
// instead of running on, unseen, after its caller was told it failed.
type deadlineReader struct {
	r        *bytes.Reader
	deadline time.Time
	stop     atomic.Bool
}

func (d *deadlineReader) ReadAt(p []byte, off int64) (int, error) {
	if d.stop.Load() || time.Now().After(d.deadline) {
		panic(errPDFDeadline)
	}
	return d.r.ReadAt(p, off)
}

// pdfDeadline is a runtime.Error, so the Go reader's recovery from parse
// errors (which keeps reading past a bad operand) passes it on.
type pdfDeadline struct{}

func (pdfDeadline) Error() string { return "pdf: past the reading deadline" }
func (pdfDeadline) RuntimeError() {}

var errPDFDeadline error = pdfDeadline{}

func goPDF(f io.ReaderAt, size int64) (text string, err error) {
	// The Go reader panics on some malformed files; a bad PDF is an error,
	// not a crash.
	defer func() {
		if r := recover(); r != nil {
			if r == errPDFDeadline {
				err = errPDFDeadline
				return
			}
			err = fmt.Errorf("malformed pdf: %v", r)
		}
	}()
	r, err := pdf.NewReader(f, size)
	if err != nil {
		return "", fmt.Errorf("malformed pdf: %w", err)
	}
	var b strings.Builder
	for i := 1; i <= r.NumPage(); i++ {
		p := r.Page(i)
		if p.V.IsNull() {
			continue
		}
		t, err := p.GetPlainText(nil)
		if err != nil {
			return "", fmt.Errorf("page %d: %w", i, err)
		}
		b.WriteString(t)
		b.WriteString("\n\n")
	}
	return b.String(), nil
}
