package chunk

import (
	"fmt"
	"strings"
	"testing"
)

// TestFencedKeepsCodeInEveryChunk: a listing longer than a chunk, split
// over several, is fenced in each: the chunk that opens it closes it, the
// ones after open and close it again, the one where it ends only opens
// it; prose around it is left as it is, and the code's lines are all
// there, in order.
func TestFencedKeepsCodeInEveryChunk(t *testing.T) {
	for _, fence := range []string{"```text", "````text", "~~~python"} {
		closer := fenceMark(fence)
		var b strings.Builder
		b.WriteString("The module below runs the migration.\n\n" + fence + "\n")
		var code []string
		for i := range 120 {
			l := fmt.Sprintf("def step_%d(self, schema_editor):", i)
			code = append(code, l)
			b.WriteString(l + "\n")
		}
		b.WriteString(closer + "\n\nAfter the listing, prose goes on as before.\n")
		var got []Chunk
		if err := Each(b.String(), Options{MaxTokens: 128}, Fenced(func(c Chunk) error { got = append(got, c); return nil })); err != nil {
			t.Fatal(err)
		}
		if len(got) < 3 {
			t.Fatalf("%s: %d chunks, want the listing over several", fence, len(got))
		}
		var lines []string
		for i, c := range got {
			if open := fenceAtEnd(c.Text, ""); open != "" {
				t.Errorf("%s: chunk %d leaves %q open:\n%s", fence, i, open, c.Text)
			}
			n, err := CountTokens(c.Text)
			if err != nil || n != c.Tokens {
				t.Errorf("%s: chunk %d counts %d tokens, its text %d (%v)", fence, i, c.Tokens, n, err)
			}
			inside := false
			for _, l := range strings.Split(c.Text, "\n") {
				switch {
				case fenceMark(strings.TrimSpace(l)) != "":
					inside = !inside
				case inside:
					lines = append(lines, l)
				case strings.Contains(l, "def ") || strings.Contains(l, "schema_editor"):
					t.Errorf("%s: chunk %d holds code outside a fence: %q", fence, i, l)
				}
			}
		}
		// A cut may fall inside a line: compare the code without its spaces.
		squeeze := func(ss []string) string { return strings.Join(strings.Fields(strings.Join(ss, " ")), "") }
		if squeeze(lines) != squeeze(code) {
			t.Errorf("%s: the code read back from the chunks differs from the listing", fence)
		}
		if !strings.HasPrefix(got[0].Text, "The module below") || !strings.HasSuffix(got[len(got)-1].Text, "prose goes on as before.") {
			t.Errorf("%s: the prose around the listing changed: %q … %q", fence, got[0].Text[:40], got[len(got)-1].Text)
		}
	}
}

// TestFencedLeavesProse: a text with no fence, or with an inline run of
// backticks, passes through untouched.
func TestFencedLeavesProse(t *testing.T) {
	text := strings.Repeat("Use ``` to open a block in Markdown, or `code` inline. ", 80)
	var plain, fenced []Chunk
	if err := Each(text, Options{MaxTokens: 64}, func(c Chunk) error { plain = append(plain, c); return nil }); err != nil {
		t.Fatal(err)
	}
	if err := Each(text, Options{MaxTokens: 64}, Fenced(func(c Chunk) error { fenced = append(fenced, c); return nil })); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(plain) != fmt.Sprint(fenced) {
		t.Errorf("prose changed by Fenced")
	}
}

// FuzzFenced: any text, fences or not, is chunked without a panic, and no
// chunk leaves a block open.
func FuzzFenced(f *testing.F) {
	f.Add("```text\nx = 1\n```\nprose")
	f.Add("~~~\n````\n~~~~\n```")
	f.Add("```\n" + strings.Repeat("line of code\n", 200))
	f.Fuzz(func(t *testing.T, text string) {
		err := Each(text, Options{MaxTokens: 32}, Fenced(func(c Chunk) error {
			if open := fenceAtEnd(c.Text, ""); open != "" {
				t.Fatalf("chunk leaves %q open:\n%s", open, c.Text)
			}
			return nil
		}))
		if err != nil {
			t.Fatal(err)
		}
	})
}
