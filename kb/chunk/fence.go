package chunk

import "strings"

// Fenced wraps fn, which takes a text's chunks in order, so that a block
// of code fenced in Markdown's way (three or more backticks or tildes on a
// line of their own, as extract fences a page's <pre>) that a cut splits
// stays code in every chunk it spans: a chunk that begins inside the block
// opens with its fence line, and one that ends inside it closes it. Read
// alone (ask reads chunks one by one), the lines of a listing's middle
// would otherwise be prose. The fences added make a chunk's Text differ
// from the input between Start and End, and its Tokens count them.
func Fenced(fn func(Chunk) error) func(Chunk) error {
	open := "" // the fence line of the block the last chunk ended inside
	return func(c Chunk) error {
		text := c.Text
		starts := open
		open = fenceAtEnd(text, open)
		if starts == "" && open == "" {
			return fn(c)
		}
		if starts != "" {
			text = starts + "\n" + text
		}
		if open != "" {
			text += "\n" + closing(open)
		}
		n, err := CountTokens(text)
		if err != nil {
			return err
		}
		c.Text, c.Tokens = text, n
		return fn(c)
	}
}

// fenceAtEnd returns the fence line of the block left open at the end of
// text, given the one open at its start ("" for none).
func fenceAtEnd(text, open string) string {
	if !strings.ContainsAny(text, "`~") {
		return open
	}
	for line := range strings.SplitSeq(text, "\n") {
		t := strings.TrimSpace(line)
		mark := fenceMark(t)
		switch {
		case mark == "":
		case open == "":
			open = t
		case strings.Trim(t, mark[:1]) == "" && len(t) >= len(fenceMark(open)) && t[0] == open[0]:
			open = ""
		}
	}
	return open
}

// fenceMark is the run of three or more backticks or tildes a line opens
// with, or "".
func fenceMark(line string) string {
	if len(line) < 3 || line[0] != '`' && line[0] != '~' {
		return ""
	}
	n := len(line) - len(strings.TrimLeft(line, line[:1]))
	if n < 3 {
		return ""
	}
	return line[:n]
}

// closing is the line that closes the block open opened.
func closing(open string) string { return fenceMark(open) }
