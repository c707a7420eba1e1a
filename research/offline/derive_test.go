package offline

import "testing"

func TestDerivedOrder(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		question string
		labels   [2]string
		quotes   [2]string
		want     string
	}{
		{"Which composer was born first, Antonín Dvořák or Giuseppe Verdi?", [2]string{"Antonín Dvořák", "Giuseppe Verdi"},
			[2]string{"Antonín Leopold Dvořák (8 September 1841 – 1 May 1904) was a Czech composer.", "Giuseppe Fortunino Francesco Verdi (9 or 10 October 1813 – 27 January 1901) was an Italian opera composer."},
			"Derived from the quotes below: Giuseppe Verdi (1813) was born before Antonín Dvořák (1841)."},
		{"Who died later, Dvořák or Verdi?", [2]string{"Antonín Dvořák", "Giuseppe Verdi"},
			[2]string{"Dvořák died in Prague on 1 May 1904.", "Verdi died in Milan on 27 January 1901, at the age of 87."},
			"Derived from the quotes below: Giuseppe Verdi (1901) died before Antonín Dvořák (1904)."},
		{"Which band was formed first, +44 or Avenged Sevenfold?", [2]string{"+44 (band)", "Avenged Sevenfold"},
			[2]string{"+44 was an American rock supergroup formed in Los Angeles, California in 2005.", "Avenged Sevenfold is an American heavy metal band from Huntington Beach, California, formed in 1999."},
			"Derived from the quotes below: Avenged Sevenfold (1999) was formed before +44 (band) (2005)."},
		// No order asked, no year for the role, or the same year: nothing.
		{"Are Verdi and Dvořák of the same nationality?", [2]string{"a", "b"}, [2]string{"born in 1813", "born in 1841"}, ""},
		{"Which was founded first, A or B?", [2]string{"a", "b"}, [2]string{"A has 40 members.", "B was founded in 1901."}, ""},
		{"Who was born first, A or B?", [2]string{"a", "b"}, [2]string{"A was born in 1901.", "B was born in 1901."}, ""},
		// A year of another event in the sentence is not the one asked about.
		{"Who was born first, A or B?", [2]string{"a", "b"}, [2]string{"A was born in Le Roncole and died in Milan in 1901.", "B was born in 1841."}, ""},
		{"Who died first, A or B?", [2]string{"a", "b"}, [2]string{"A studied in 1850 and lived long.", "B died in 1841."}, ""},
	} {
		if got := derivedOrder(c.question, c.labels, c.quotes); got != c.want {
			t.Errorf("%s\n got %q\nwant %q", c.question, got, c.want)
		}
	}
}
