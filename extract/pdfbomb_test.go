package extract

import (
	"bytes"
	"compress/flate"
	"compress/zlib"
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
	"time"
)

// bombPDF is a PDF of one page whose content stream inflates to about
// size bytes of text operators from a small file.
func bombPDF(t testing.TB, size int) []byte {
	t.Helper()
	var z bytes.Buffer
	zw, err := zlib.NewWriterLevel(&z, flate.BestSpeed)
	if err != nil {
		t.Fatal(err)
	}
	chunk := []byte(strings.Repeat("BT /F1 12 Tf 72 720 Td (Solid state batteries store energy.) Tj ET\n", 1<<14))
	for n := 0; n < size; n += len(chunk) {
		_, _ = zw.Write(chunk)
	}
	_ = zw.Close()
	objs := []string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
		fmt.Sprintf("<< /Length %d /Filter /FlateDecode >>\nstream\n%s\nendstream", z.Len(), z.String()),
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
	}
	var b strings.Builder
	b.WriteString("%PDF-1.4\n")
	offs := make([]int, len(objs))
	for i, o := range objs {
		offs[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(objs)+1)
	for _, o := range offs {
		fmt.Fprintf(&b, "%010d 00000 n \n", o)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(objs)+1, xref)
	return []byte(b.String())
}

func heapInUse() uint64 {
	runtime.GC()
	debug.FreeOSMemory()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

// TestPDFBombStopsAtItsDeadline: a PDF that inflates far beyond its size
// is reported unreadable at the deadline, and its parse stops then: it
// does not go on eating CPU and memory after the caller was told it
// failed.
func TestPDFBombStopsAtItsDeadline(t *testing.T) {
	data := bombPDF(t, 256<<20)
	before := heapInUse()
	start := time.Now()
	_, err := goPDFWithin(data, 300*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "longer than") {
		t.Fatalf("err = %v, want the deadline", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("reported after %s", d)
	}
	for pdfParses.Load() > 0 {
		if time.Since(start) > 5*time.Second {
			t.Fatalf("the parse still runs %s after its deadline", time.Since(start))
		}
		time.Sleep(10 * time.Millisecond)
	}
	if after := heapInUse(); after > before+64<<20 {
		t.Fatalf("heap in use %d MB after the failed parse, %d MB before", after>>20, before>>20)
	}
}
