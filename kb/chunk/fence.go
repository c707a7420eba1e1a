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
			text += "\n" + fenceMark(open) // the line that closes it
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
	openMark := fenceMark(open)
	for line := range strings.SplitSeq(text, "\n") {
		t := strings.TrimSpace(line)
		mark := fenceMark(t)
		switch {
		case mark == "":
		case open == "":
			open, openMark = t, mark
		case len(mark) == len(t) && len(t) >= len(openMark) && t[0] == open[0]:
			open, openMark = "", ""
		}
	}
	return open
}

// fenceMark is the run of three or more backticks or tildes a line opens
// with, or "" — also where more backticks follow it, inline code, as
// internal/passage reads fences ("```x``` is code").
func fenceMark(line string) string {
	if len(line) < 3 || line[0] != '`' && line[0] != '~' {
		return ""
	}
	rest := strings.TrimLeft(line, line[:1])
	n := len(line) - len(rest)
	if n < 3 || line[0] == '`' && strings.Contains(rest, "`") {
		return ""
	}
	return line[:n]
}
