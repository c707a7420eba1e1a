package extract

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
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

func goPDFWithin(data []byte, d time.Duration) (string, error) {
	type result struct {
		text string
		err  error
	}
	ch := make(chan result, 1)
	go func() {
		t, err := goPDF(data)
		ch <- result{t, err}
	}()
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case r := <-ch:
		return r.text, r.err
	case <-timer.C:
		return "", fmt.Errorf("malformed pdf: reading took longer than %s", d)
	}
}

func goPDF(data []byte) (text string, err error) {
	// The Go reader panics on some malformed files; a bad PDF is an error,
	// not a crash.
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("malformed pdf: %v", r)
		}
	}()
	r, err := pdf.NewReader(bytes.NewReader(data), int64(len(data)))
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
