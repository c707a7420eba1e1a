package extract

import (
	"slices"
	"strings"
	"testing"
)

// sphinxPage is the shape of a Sphinx source page, as Python's
// documentation is written.
const sphinxPage = `.. _venv-def:

=================================
:mod:` + "`venv`" + ` --- Virtual environments
=================================

.. module:: venv
   :synopsis: Creation of virtual environments.

.. versionadded:: 3.3

The :mod:` + "`venv`" + ` module creates lightweight "virtual environments", see
:pep:` + "`405`" + ` and :ref:` + "`the tutorial <tut-venv>`" + `.

.. toctree::
   :maxdepth: 2

   tutorial

API
---

.. class:: EnvBuilder(system_site_packages=False, clear=False, \
                      symlinks=False)

   The :class:` + "`EnvBuilder`" + ` class accepts keyword arguments.

   * ` + "``system_site_packages``" + ` -- a Boolean value, *false* by default.
   * ` + "``clear``" + ` -- a Boolean value.

   .. versionchanged:: 3.9
      Added the *clear* parameter

.. method:: str.removeprefix(prefix, /)

   Return a copy without the prefix, as :meth:` + "`~str.startswith`" + ` tells::

      >>> 'TestHook'.removeprefix('Test')
      'Hook'

.. availability:: Unix, not Emscripten.

.. note::

   The ` + "``pip install -r\n   requirements.txt``" + ` command installs them.

.. code-block:: shell
   :linenos:

   python -m venv /path/to/new/virtual/environment

.. This is a comment
   that spans two lines.

Glossary
   A term, its text indented under it.
`

func TestRST(t *testing.T) {
	t.Parallel()
	doc, err := File(writeTemp(t, "venv.rst", sphinxPage))
	if err != nil {
		t.Fatal(err)
	}
	if doc.Format != "rst" || doc.Title != "venv --- Virtual environments" {
		t.Fatalf("read as %q, titled %q:\n%s", doc.Format, doc.Title, doc.Text)
	}
	paragraphs := strings.Split(doc.Text, "\n\n")
	for _, want := range []string{
		"New in version 3.3.",
		"The venv module creates lightweight \"virtual environments\", see\nPEP 405 and the tutorial.",
		"API",
		"EnvBuilder(system_site_packages=False, clear=False, symlinks=False)", // a signature continued over lines
		"The EnvBuilder class accepts keyword arguments.",
		"system_site_packages -- a Boolean value, false by default.", // a list item, a paragraph of its own
		"Changed in version 3.9: Added the clear parameter",
		"str.removeprefix(prefix, /)",
		"Return a copy without the prefix, as startswith tells:",
		"```text\n>>> 'TestHook'.removeprefix('Test')\n'Hook'\n```",   // a literal block
		"The pip install -r\nrequirements.txt command installs them.", // a literal over a line's end
		"```text\npython -m venv /path/to/new/virtual/environment\n```",
		"Availability: Unix, not Emscripten.",
		"Glossary", // a definition list's term
		"A term, its text indented under it.",
	} {
		if !slices.Contains(paragraphs, want) {
			t.Errorf("no paragraph %q in:\n%s", want, doc.Text)
		}
	}
	for _, markup := range []string{":mod:", "`venv`", ".. ", "toctree", "maxdepth", "linenos", "synopsis", "===", "comment", "``pip", "tut-venv", "~str"} {
		if strings.Contains(doc.Text, markup) {
			t.Errorf("%q reached the text:\n%s", markup, doc.Text)
		}
	}
	checkFences(t, doc.Text)
	// Sphinx publishes a page's source beside it as _sources/page.rst.txt.
	if src, err := File(writeTemp(t, "venv.rst.txt", sphinxPage)); err != nil || src.Format != "rst" || src.Text != doc.Text {
		t.Errorf("venv.rst.txt read as %q: %v", src.Format, err)
	}
}

func FuzzRST(f *testing.F) {
	f.Add([]byte(sphinxPage))
	f.Add([]byte("T\n=\n\n::\n\n  x\n\n.. code::\n\n>>> 1\n.. [1] note\n\n.. function:: f(a, \\\n"))
	f.Add([]byte("=\n=\n=\n::\n\n| quoted\n| block\n\n- a\n\n   b\n\t\tc"))
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, err := RST(data, "f.rst")
		if err != nil {
			return
		}
		checkExtracted(t, doc, 2*len(data)+2)
	})
}

// TestRSTHostile: what the review found — asterisks in literals and
// signatures, prose that would read as a fence, a lone "::", tabs inside
// a line, a long continued signature and deeply nested directives (in
// bounded time: the test's own deadline).
func TestRSTHostile(t *testing.T) {
	t.Parallel()
	render := func(src string) string {
		doc, err := RST([]byte(src), "x.rst")
		if err != nil {
			t.Fatal(err)
		}
		checkFences(t, doc.Text)
		return doc.Text
	}
	for src, want := range map[string]string{
		"Takes ``*args`` and ``**kwargs``.\n":                           "Takes *args and **kwargs.",
		".. function:: f(*args, **kwargs)\n\n   Calls it.\n":            "f(*args, **kwargs)\n\nCalls it.",
		".. rubric:: ```text\n\nprose\n":                                "text\n\nprose",
		"Paragraph:\n\n::\n\n    for x in y:\n        print(x)\n":       "Paragraph:\n\n```text\nfor x in y:\n    print(x)\n```",
		".. code::\n\n x\t\t\t\ty\n":                                    "```text\nx\t\t\t\ty\n```",
		"- Example::\n\n    run it\n":                                   "Example:\n\n```text\nrun it\n```",
		".. deprecated-removed:: 3.9 3.11\n":                            "Deprecated since version 3.9, will be removed in version 3.11.",
		"\uFEFF.. _label:\n\nText after a target.\n":                    "Text after a target.",
		"..\n   An empty comment's text.\n\nShown.\n":                   "Shown.",
		"Use `the default role` and *emphasis* and **strong** words.\n": "Use the default role and emphasis and strong words.",
	} {
		if got := render(src); got != want {
			t.Errorf("%q:\ngot  %q\nwant %q", src, got, want)
		}
	}
	var long strings.Builder
	long.WriteString(".. function:: f \\\n")
	for long.Len() < 1<<20 {
		long.WriteString(" x\\\n")
	}
	long.WriteString(" y\n")
	if got := render(long.String()); !strings.HasPrefix(got, "f x x") {
		t.Errorf("a long signature: %.40q", got)
	}
	var nested strings.Builder
	for d := 0; nested.Len() < 1<<19; d++ {
		nested.WriteString(strings.Repeat("\t", d%700) + ".. a::\n")
	}
	render(nested.String())
}
