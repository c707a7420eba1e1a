package textseg

import "testing"

func TestPointsBack(t *testing.T) {
	t.Parallel()
	for text, want := range map[string]bool{
		"It is based on adult life events of the composer Giuseppe Verdi.":            true,
		"She created the role of Desdemona.":                                          true,
		"Written in 1876, it was the first of three concertos that Dvořák completed.": true,
		"This is the default.":                                                          true,
		"It is possible to run it twice.":                                               false,
		"This option recreates the topic branch.":                                       false,
		"Its stems are those of Snowball.":                                              true,
		"Italy is a country.":                                                           false,
		"In Git, it is recommended that you sign tags.":                                 false,
		"When the file is large, the reader stops early.":                               false,
		"Giuseppe Verdi, released theatrically in the USA as The Life, is a 1953 film.": false,
	} {
		if got := PointsBack(text); got != want {
			t.Errorf("PointsBack(%q) = %v, want %v", text, got, want)
		}
	}
}

func TestPointsBackAtSentence(t *testing.T) {
	t.Parallel()
	for text, want := range map[string]bool{
		"This is not the fastest hashing algorithm available.": true,
		"These are kept in the index.":                         true,
		"This option recreates the topic branch.":              false,
		"It is based on adult life events of the composer.":    false,
		"She created the role of Desdemona.":                   false,
	} {
		if got := PointsBackAtSentence(text); got != want {
			t.Errorf("PointsBackAtSentence(%q) = %v, want %v", text, got, want)
		}
	}
}

func TestContinues(t *testing.T) {
	t.Parallel()
	for text, want := range map[string]bool{
		"so that if the logger's threshold is set above DEBUG, the calls are never made.": true,
		"without making any other changes.":                                               true,
		"because there is another reference pointing to it.":                              true,
		"that is to say, the branch is not reset.":                                        true,
		"So that is how it ends.":                                                         false, // a sentence's own opening
		"venv is the standard tool for creating virtual environments.":                    false,
		"git log shows the commits.":                                                      false,
		"to_json returns a string.":                                                       false, // code
		"for(;;) loops forever.":                                                          false,
		"또한 설정할 수 있습니다.":                                                                  false,
		"":                                                                                false,
		"and\u00a0then it stops.":                                                         true,
		"for loops repeat a block for each item.":                                         false, // a keyword it is about
		"with statements close the file for you.":                                         false,
	} {
		if got := Continues(text); got != want {
			t.Errorf("Continues(%q) = %v, want %v", text, got, want)
		}
	}
}
