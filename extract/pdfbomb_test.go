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
	return pdfOf("<< /Length " + fmt.Sprint(z.Len()) + " /Filter /FlateDecode >>\nstream\n" + z.String() + "\nendstream")
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
