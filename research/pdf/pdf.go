// Package pdf renders a research report to PDF: the sanitised HTML
// report (research.HTML) printed by headless Chromium through chromedp,
// its citations links to the references, lines never cut across pages.
// Chromium must be installed (Debian: apt-get install chromium, and
// fonts-noto-cjk for Korean); without it Render says what to install.
package pdf

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/quarryhq/quarry/errcode"
	"github.com/quarryhq/quarry/kb/analyze"
	"github.com/quarryhq/quarry/research"
)

// Timeout bounds one rendering.
const Timeout = 60 * time.Second

// ErrNoChromium is Render without a browser to print with.
var ErrNoChromium = errcode.New(errcode.Unavailable, "format", "PDF export needs Chromium: install it (Debian: apt-get install chromium fonts-noto-cjk; or set QUARRY_CHROMIUM to its path)")

// Chromium finds the browser: the given path, else Debian's chromium,
// chromium-browser, google-chrome on PATH.
func Chromium(path string) (string, error) {
	if path != "" {
		if _, err := os.Stat(path); err != nil {
			return "", fmt.Errorf("%w (%s: %v)", ErrNoChromium, path, err)
		}
		return path, nil
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", ErrNoChromium
}

// style paginates a report: A4 with margins, a CJK font after the Latin
// ones, no break inside a paragraph, a list item or a heading and the
// paragraph after it, links visibly links.
const style = `@page { size: A4; margin: 18mm 16mm; }
body { font-family: "DejaVu Sans", "Noto Sans", "Noto Sans CJK KR", "Noto Sans CJK SC", sans-serif; font-size: 10.5pt; line-height: 1.45; color: #111; }
h1 { font-size: 18pt; } h2 { font-size: 13.5pt; margin-top: 1.4em; } h3 { font-size: 11.5pt; }
h1, h2, h3 { break-after: avoid; }
p, li, blockquote, tr { break-inside: avoid; orphans: 3; widows: 3; }
a { color: #1a4fa0; text-decoration: none; }
.note { font-size: 9pt; color: #555; }
`

// Document is a report's HTML as a page of its own.
func Document(rep *research.Report, sources []research.Source) string {
	lang, title := "en", ""
	if rep != nil {
		title = rep.Title
		if analyze.Language(rep.Title+" "+rep.Summary) == "ko" {
			lang = "ko"
		}
	}
	return fmt.Sprintf("<!DOCTYPE html>\n<html lang=%q><head><meta charset=\"utf-8\"><title>%s</title><style>%s</style></head><body>\n%s</body></html>\n",
		lang, htmlEscape(title), style, research.HTML(rep, sources))
}

// Render prints the report to PDF with the browser at chromium.
func Render(ctx context.Context, chromium string, rep *research.Report, sources []research.Source) ([]byte, error) {
	if rep == nil {
		return nil, errors.New("pdf: no report")
	}
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium),
		chromedp.NoSandbox, // containers and CI run as root
		chromedp.Flag("disable-gpu", true),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	defer cancelAlloc()
	bctx, cancelBrowser := chromedp.NewContext(actx)
	defer cancelBrowser()
	doc := Document(rep, sources)
	if err := chromedp.Do(bctx,
		chromedp.Navigate("about:blank"),
		chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
			tree, err := chromedp.Call(ctx, page.GetFrameTree, cdp.Empty{})
			if err != nil {
				return err
			}
			_, err = chromedp.Call(ctx, page.SetDocumentContent, page.SetDocumentContentParams{FrameID: tree.FrameTree.Frame.ID, HTML: doc})
			return err
		}),
	); err != nil {
		return nil, fmt.Errorf("pdf: chromium: %w", err)
	}
	out, err := chromedp.Run(bctx, chromedp.PrintToPDF(
		chromedp.PDFPreferCSSPageSize(),
		chromedp.PDFPrintBackground(),
		chromedp.PDFOutlineAndTagged(),
		chromedp.PDFHeaderTemplate(`<span></span>`),
		chromedp.PDFFooterTemplate(`<div style="font-size:8pt;width:100%;text-align:center;color:#777"><span class="pageNumber"></span> / <span class="totalPages"></span></div>`),
	))
	if err != nil {
		return nil, fmt.Errorf("pdf: chromium: %w", err)
	}
	return out, nil
}

func htmlEscape(s string) string {
	r := []rune{}
	for _, c := range s {
		switch c {
		case '<':
			r = append(r, []rune("&lt;")...)
		case '>':
			r = append(r, []rune("&gt;")...)
		case '&':
			r = append(r, []rune("&amp;")...)
		case '"':
			r = append(r, []rune("&quot;")...)
		default:
			r = append(r, c)
		}
	}
	return string(r)
}
