package verify

import (
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/kljensen/snowball/english"

	"github.com/quarryhq/quarry/kb/analyze"
)

type value struct {
	kind string
	num  float64
	text string
	// name is a name value's comparison form (kind "name").
	name string
	// role is the word that says what a date, count or rank is of.
	role string
	// digits is the number as written ("1,083").
	digits string
}

// class is what makes two values comparable: their kind and role.
func (v value) class() string {
	if v.role == "" {
		return v.kind
	}
	return v.kind + "@" + v.role
}

// key is what values are compared on.
func (v value) key() string {
	if v.kind == kindName {
		return v.name
	}
	return strconv.FormatFloat(v.num, 'f', -1, 64)
}

// written is the number as written, before any unit's conversion.
func (v value) written() float64 {
	n, _ := parseNumber(v.digits)
	return n
}

// parseNumber reads a number as the number pattern finds it written,
// its thousands separated by commas or not ("1,083", "3.5").
func parseNumber(digits string) (float64, error) {
	return strconv.ParseFloat(strings.ReplaceAll(digits, ",", ""), 64)
}

var number = regexp.MustCompile(`(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)\s*(%|[A-Za-z]+)?`)

var months = map[string]bool{"january": true, "february": true, "march": true, "april": true, "may": true, "june": true, "july": true, "august": true, "september": true, "october": true, "november": true, "december": true}

func values(s string) []value {
	var out []value
	for _, m := range number.FindAllStringSubmatchIndex(s, -1) {
		if r, _ := utf8.DecodeLastRuneInString(s[:m[0]]); m[0] > 0 && unicode.IsLetter(r) {
			continue // "A400M", "H2O": part of a name
		}
		digits := s[m[2]:m[3]]
		n, err := parseNumber(digits)
		if err != nil {
			continue
		}
		unit := ""
		if m[4] >= 0 {
			unit = strings.ToLower(s[m[4]:m[5]])
		}
		kind := unit
		monthBefore := monthBefore(s[:m[0]])
		switch {
		case monthBefore > 0 && n >= 1 && n <= 31 && !strings.Contains(digits, "."):
			// "May 19, 1928": the day of a month named before it.
			kind = "day"
			n = n*100 + float64(monthBefore)
		case months[unit]:
			kind = "day"
			n = n*100 + float64(monthIndex(unit))
		case ordinalSuffix[unit]:
			kind = "ordinal"
		case !strings.Contains(digits, ",") && !strings.Contains(digits, ".") && n >= 1000 && n <= 2100 && (unit == "" || !unitWord(unit) || yearFollower(unit)):
			kind = "year"
		case !unitWord(unit):
			kind = ""
		}
		v := value{kind: kind, num: n, text: strings.TrimSpace(s[m[0]:m[1]]), digits: digits}
		if u, ok := units[unit]; ok && kind != "year" && kind != "day" && plainMeasure(s, m) {
			// A measure: compared in its dimension's base unit, on the
			// quantity the words around it name ("tall", "depth").
			v.kind, v.num, v.role = u.dim, n*u.factor, quantityNear(s[:m[0]], s[m[1]:])
			out = append(out, v)
			continue
		}
		if kind == "" || peopleUnit[unit] {
			// A count of people: a population however it is worded ("a
			// population of 30,000", "home to 30,000 people").
			if q := quantityNear(s[:m[0]], s[m[1]:]); q == "population" || peopleUnit[unit] && housesPeople(s[:m[0]]) {
				v.kind, v.role = "count", "population"
				out = append(out, v)
				continue
			}
			if peopleUnit[unit] {
				// Any other count of people is of what the word before it
				// says: "killed 5 people" is not a town's 5 people.
				v.kind, v.role = "count", role(s[:m[0]])
				out = append(out, v)
				continue
			}
		}
		switch kind {
		case "year", "", "ordinal", "day":
			// A date, a count or a rank says nothing of what it measures:
			// the word before it does ("born in 1813", "released on").
			v.role = role(s[:m[0]])
			switch {
			case monthBefore > 0 && kind == "day":
				v.text = strings.TrimRight(lastWord(s[:m[0]])+" "+digits, ",")
			case kind != "day" && kind != "ordinal":
				v.text = digits
			}
		}
		out = append(out, v)
	}
	return out
}

// unit is a unit of measure: its dimension and its size in the
// dimension's base unit (metres, kilograms, square metres, seconds).
type unit struct {
	dim    string
	factor float64
}

var units = func() map[string]unit {
	m := map[string]unit{}
	add := func(dim string, factor float64, names string) {
		for _, n := range strings.Fields(names) {
			m[n] = unit{dim, factor}
		}
	}
	add("length", 1, "m metre metres meter meters")
	add("length", 1000, "km kilometre kilometres kilometer kilometers")
	add("length", 0.01, "cm centimetre centimetres centimeter centimeters")
	add("length", 0.001, "mm millimetre millimetres millimeter millimeters")
	add("length", 0.3048, "ft foot feet")
	add("length", 0.9144, "yd yard yards")
	add("length", 0.0254, "in inch inches")
	add("length", 1609.344, "mi mile miles")
	add("mass", 1, "kg kilogram kilograms kilogramme kilogrammes")
	add("mass", 0.001, "g gram grams gramme grammes")
	add("mass", 1000, "t tonne tonnes")
	add("mass", 907.18474, "ton tons")
	add("mass", 0.45359237, "lb lbs pound pounds")
	add("area", 10000, "ha hectare hectares")
	add("area", 4046.8564224, "acre acres")
	delete(m, "in") // "in 1813": a preposition far more often than inches
	return m
}()

// plainMeasure reports a number and unit that read as a measure: not
// money ("$1.5m") and, for one-letter units, set apart by a space ("828
// m", not "5G").
func plainMeasure(s string, m []int) bool {
	if r, _ := utf8.DecodeLastRuneInString(strings.TrimRight(s[:m[0]], " ")); strings.ContainsRune("$£€¥₩", r) {
		return false
	}
	return m[5]-m[4] > 1 || m[4] > m[3]
}

// housesPeople reports a count of people that a place holds: "has",
// "had", "with" or "home to" just before it.
func housesPeople(before string) bool {
	ws := wordRE.FindAllString(strings.ToLower(before), -1)
	if len(ws) == 0 {
		return false
	}
	switch ws[len(ws)-1] {
	case "has", "had", "have", "with", "houses", "housed":
		return true
	case "to":
		return len(ws) > 1 && ws[len(ws)-2] == "home"
	}
	return false
}

// peopleUnit are the words that make a number a count of people.
var peopleUnit = map[string]bool{"people": true, "inhabitants": true, "residents": true, "persons": true}

// quantities maps the words that say which quantity a measure is of to
// that quantity: "330 metres tall" and "a height of 330 metres" are both
// the height.
var quantities = func() map[string]string {
	m := map[string]string{}
	add := func(q, words string) {
		for _, w := range strings.Fields(words) {
			m[w] = q
		}
	}
	add("height", "tall taller tallest height high higher highest rise rises rising rose stands standing elevation altitude summit")
	add("length", "long longer longest length stretches stretch stretching runs flowing flows")
	add("depth", "deep deeper deepest depth plunges")
	add("width", "wide wider widest width breadth")
	add("span", "span")
	add("mass", "weighs weigh weighing weight mass heavy")
	add("area", "area covers covering")
	add("population", "population inhabitants residents people populace")
	return m
}()

// quantityNear is the quantity named by the nearest quantity word within
// three words before or after a measure ("" when none).
func quantityNear(before, after string) string {
	bw := wordRE.FindAllString(before, -1)
	aw := wordRE.FindAllString(after, -1)
	for d := 0; d < 3; d++ {
		if d < len(aw) {
			if q, ok := quantities[strings.ToLower(aw[d])]; ok {
				return q
			}
		}
		if d < len(bw) {
			if q, ok := quantities[strings.ToLower(bw[len(bw)-1-d])]; ok {
				return q
			}
		}
	}
	return ""
}

// measure reports a value kind compared across units and wordings.
func measure(kind string) bool {
	switch kind {
	case "length", "mass", "area", "count":
		return true
	}
	return false
}

// monthBefore is the month (1–12) named right before a number, or 0.
func monthBefore(before string) int {
	return monthIndex(strings.ToLower(strings.Trim(lastWord(before), ".,")))
}

func lastWord(s string) string {
	f := strings.Fields(s)
	if len(f) == 0 {
		return ""
	}
	return f[len(f)-1]
}

var ordinalSuffix = map[string]bool{"st": true, "nd": true, "rd": true, "th": true}

// role is the nearest content word (analysed) among the three words
// before a value, not counting the numbers and month names of a date.
func role(before string) string {
	ws := wordRE.FindAllString(before, -1)
	seen := 0
	for i := len(ws) - 1; i >= 0 && seen < 3; i-- {
		if isNumeric(ws[i]) || months[strings.ToLower(ws[i])] {
			continue // part of the date: "born on 19 May 1928"
		}
		seen++
		if ts := analyze.Terms(ws[i]); len(ts) > 0 {
			return ts[0]
		}
	}
	return ""
}

// withoutEntity drops the values that are part of the entity's name ("the
// 1904 Tour de France" is not a claim about 1904).
func withoutEntity(vals []value, display string) []value {
	out := vals[:0]
	for _, v := range vals {
		if !numeralIn(display, v.digits) {
			out = append(out, v)
		}
	}
	return out
}

// numeralIn reports a word of the name that is the number, bare or as an
// ordinal, plural or range ("1904", "188th", "1950s", "1952-53").
func numeralIn(display, digits string) bool {
	if digits == "" {
		return false
	}
	for _, w := range strings.Fields(display) {
		w, _, _ = strings.Cut(w, "-")
		w, _, _ = strings.Cut(w, "–")
		w = strings.TrimRightFunc(w, unicode.IsLetter)
		if w == digits {
			return true
		}
	}
	return false
}

func monthIndex(m string) int {
	for i, name := range []string{"january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december"} {
		if name == m {
			return i + 1
		}
	}
	return 0
}

// yearFollower reports a preposition after a four-digit number that
// leaves it a year ("born in 1814 near Busseto") though Snowball does not
// list it as a stop word.
func yearFollower(w string) bool { return yearPrepositions[w] }

var yearPrepositions = map[string]bool{"near": true, "beside": true, "outside": true, "inside": true, "toward": true, "towards": true, "amid": true, "despite": true, "upon": true, "via": true, "across": true, "along": true, "around": true, "behind": true, "beyond": true, "within": true, "without": true, "until": true}

// unitWord reports a word that measures the number before it rather than
// starting the next phrase.
func unitWord(w string) bool {
	if w == "%" {
		return true
	}
	if w == "" || english.IsStopWord(w) {
		return false
	}
	return len(w) <= 12
}
