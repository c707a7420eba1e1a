package verify

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/quarryhq/quarry/kb/analyze"
)

var wordRE = regexp.MustCompile(`[\p{L}\p{N}]+`)

// monthTerms are the analysed month names: dates are values, not claim
// words.
var monthTerms = func() map[string]bool {
	m := map[string]bool{}
	for name := range months {
		analyze.TermsFunc(name, func(t string) { m[t] = true })
	}
	return m
}()

// terms are the analysed content words (kb/analyze: stemmed, no stop
// words, CJK bigrams) that say what is claimed: not the entity, not the
// values and their units.
func terms(s, ent string, vals []value) map[string]bool {
	skip := map[string]bool{}
	analyze.TermsFunc(ent, func(t string) { skip[t] = true })
	for _, v := range vals {
		analyze.TermsFunc(v.text, func(t string) { skip[t] = true })
	}
	out := map[string]bool{}
	analyze.TermsFunc(s, func(t string) {
		if !skip[t] && !monthTerms[t] && !isNumeric(t) && len(t) >= 3 {
			out[t] = true
		}
	})
	return out
}

// sameTopic: the same model topic for two model facts; otherwise the same
// entity and mostly the same claim words.
func sameTopic(a, b *Fact) bool {
	if a.topic != "" && b.topic != "" {
		return a.topic == b.topic
	}
	if a.entity == "" || a.entity != b.entity {
		return false
	}
	if sharesFunctional(a, b) {
		return true
	}
	inter := 0
	for t := range a.terms {
		if b.terms[t] {
			inter++
		}
	}
	small := min(len(a.terms), len(b.terms))
	return small > 0 && inter >= 1 && float64(inter) >= 0.5*float64(small)
}

// functionalRoles are the roles of dates a subject has only one of: a
// person is born once, a company founded once.
var functionalRoles = map[string]bool{"born": true, "birth": true, "die": true, "death": true, "found": true, "establish": true, "incorpor": true}

// sharesFunctional reports two facts about one entity that both give a
// value of a quantity it has only one of — a measure of the same kind and
// quantity (one may leave the quantity unnamed: "measured at 330 metres"),
// or a birth or founding date — so they are about the same thing however
// differently they are worded.
func sharesFunctional(a, b *Fact) bool {
	if a.entity == "" || a.entity[0] >= '0' && a.entity[0] <= '9' {
		return false // "2010 U.S": a census, not a subject
	}
	oneWord := !strings.Contains(a.entity, " ")
	for _, va := range a.values {
		for _, vb := range b.values {
			if va.kind != vb.kind {
				continue
			}
			switch {
			// A one-word name ("Ryan", "Nile") may name several things:
			// only a measure of a quantity both name joins them.
			case measure(va.kind) && va.role == vb.role && va.role != "":
				return true
			case measure(va.kind) && !oneWord && (va.role == "" || vb.role == "") && (va.role != "" || vb.role != ""):
				return true
			case (va.kind == "year" || va.kind == "day") && !oneWord && va.role == vb.role && functionalRoles[va.role]:
				return true
			}
		}
	}
	return false
}

// nameQuantities gives a measure whose words name no quantity ("measured
// at 330 metres") the quantity its group's other measures of that kind
// agree on, so they compare.
func nameQuantities(facts []Fact, idx []int) {
	roles := map[string]map[string]bool{}
	for _, i := range idx {
		for _, v := range facts[i].values {
			if measure(v.kind) && v.role != "" {
				if roles[v.kind] == nil {
					roles[v.kind] = map[string]bool{}
				}
				roles[v.kind][v.role] = true
			}
		}
	}
	for _, i := range idx {
		for k, v := range facts[i].values {
			if measure(v.kind) && v.role == "" && len(roles[v.kind]) == 1 {
				for r := range roles[v.kind] {
					facts[i].values[k].role = r
				}
			}
		}
	}
}

// approxMeasures maps each measure value of a group to the smallest value
// within 1% of it, chained: sources round ("4,000 miles", "6,400 km").
func approxMeasures(facts []Fact, idx []int, kind string) map[string]string {
	if k, _, _ := strings.Cut(kind, "@"); !measure(k) {
		return nil
	}
	var nums []float64
	for _, i := range idx {
		if v, ok := keyValue(&facts[i], kind); ok {
			nums = append(nums, v.num)
		}
	}
	sort.Float64s(nums)
	canon := map[string]string{}
	var rep float64
	for j, n := range nums {
		if j == 0 || n > rep*1.01 {
			rep = n
		}
		canon[strconv.FormatFloat(n, 'f', -1, 64)] = strconv.FormatFloat(rep, 'f', -1, 64)
	}
	return canon
}

// keyValue is the value a topic's facts are compared on: the first value
// of the kind they share that the fact states as its own, not as the one
// a change it states went from (changed: "was almost always 1024 bytes,
// but … increased to 4096").
func keyValue(f *Fact, kind string) (value, bool) {
	for _, v := range f.values {
		if v.class() == kind && !(f.changes && v.kind != "year" && v.kind != "day" && slices.Contains(f.wasFrom, v.written())) {
			return v, true
		}
	}
	return value{}, false
}

// changeRE matches the words of a sentence that says a value changed to
// another: "increased to", "was raised from 5 to 10", "changed the
// limit to".
var changeRE = regexp.MustCompile(`(?i)\b(?:increased|decreased|raised|lowered|reduced|changed|bumped|grew|rose|fell|dropped|doubled|halved)\b[^.;:!?]{0,60}?\bto\b`)

// changed reads a sentence that says a value changed (changeRE): the
// numbers it gives up to the "to" of the change (what it changed from,
// among the others it gives there: "was 1024 bytes, but … increased
// to", "changed from 1024 to") and the first after it (what it changed
// to). ok is false for a sentence that states no change, or
// none to a number.
func changed(s string) (from []float64, to float64, ok bool) {
	loc := changeRE.FindStringIndex(s)
	if loc == nil {
		return nil, 0, false
	}
	found := false
	for _, m := range number.FindAllStringSubmatchIndex(s, -1) {
		n, err := parseNumber(s[m[2]:m[3]])
		if err != nil {
			continue
		}
		switch {
		case m[3] <= loc[1]:
			from = append(from, n)
		case !found:
			to, found = n, true
		}
	}
	if !found || slices.Contains(from, to) {
		return nil, 0, false
	}
	return from, to, true
}

// changeOf finds a fact of a discrepancy's that says its values are one
// value and the one it changed to ("… was almost always 1024 bytes, but
// beginning with … version 3.12.0 … increased to 4096"): the index of
// the side it changed to, when every other side's value is one it says
// it changed from; -1 when no fact says so.
func changeOf(facts []Fact, idx []int, nums []float64) (to, fact int) {
	for _, i := range idx {
		f := &facts[i]
		if !f.changes {
			continue
		}
		at := slices.Index(nums, f.changedTo)
		if at < 0 {
			continue
		}
		all := true
		for j, m := range nums {
			all = all && (j == at || slices.Contains(f.wasFrom, m))
		}
		if all {
			return at, i
		}
	}
	return -1, -1
}

// check groups facts by topic, marks the ones several domains state, and
// turns disagreeing values into discrepancies.
func check(facts []Fact, sources map[string]Source) []Discrepancy {
	roots, groups := topicGroups(facts)
	var out []Discrepancy
	lost := map[int]bool{} // facts a resolved discrepancy went against
	for _, r := range roots {
		idx := groups[r]
		if len(idx) < 2 {
			continue
		}
		nameQuantities(facts, idx)
		kinds := sharedKinds(facts, idx)
		if len(kinds) == 0 {
			// No comparable value: facts of several domains saying the
			// same thing support each other.
			// Facts with values of different kinds ("330 m", "300
			// metres") do not: their value lists must match.
			support(facts, idx, sources, func(i int) string { return signature(facts[i].values) })
			continue
		}
		kind, val, byValue, order := compareOn(facts, idx, kinds)
		support(facts, idx, sources, val)
		if len(order) < 2 || listed(facts, byValue) {
			continue
		}
		d, winKey := resolve(facts, idx, byValue, order, kind, sources)
		d.ID = "D" + strconv.Itoa(len(out)+1)
		out = append(out, d)
		if winKey != "" {
			for k, idx := range byValue {
				for _, i := range idx {
					lost[i] = lost[i] || k != winKey
				}
			}
		}
	}
	// Confidence: credibility, raised when verified, lowered when a
	// discrepancy went against the fact.
	for i := range facts {
		c := facts[i].Confidence
		if facts[i].Verified {
			c = min(1, c+0.15)
		}
		if lost[i] {
			c = max(0, c-0.3)
		}
		facts[i].Confidence = round2(c)
	}
	return out
}

// listed reports values that the same sources give each: pages that
// list them ("… the TLS 1.2 protocol.", "… the TLS 1.3 protocol.";
// "60.0 seconds if None (default)." and "30.0 seconds …" of two
// functions), a page and its copy elsewhere, disagree with no one.
func listed(facts []Fact, byValue map[string][]int) bool {
	var first map[string]bool
	for _, idx := range byValue {
		srcs := map[string]bool{}
		for _, i := range idx {
			srcs[facts[i].SourceID] = true
		}
		if first == nil {
			first = srcs
		} else if !maps.Equal(first, srcs) {
			return false
		}
	}
	return true
}

// topicGroups unions the facts on one topic read from different sources:
// each group's facts under its root, the roots in the order of their
// first fact.
func topicGroups(facts []Fact) ([]int, map[int][]int) {
	parent := make([]int, len(facts))
	for i := range parent {
		parent[i] = i
	}
	var find func(int) int
	find = func(i int) int {
		if parent[i] != i {
			parent[i] = find(parent[i])
		}
		return parent[i]
	}
	union := func(i, j int) { parent[find(i)] = find(j) }
	// Only facts about the same model topic, or else the same entity, can
	// share a topic: compare within those buckets, not all pairs.
	byEntity := map[string][]int{}
	for i := range facts {
		switch f := &facts[i]; {
		case f.topic != "":
			byEntity["t\x00"+f.topic] = append(byEntity["t\x00"+f.topic], i)
		case f.entity != "":
			byEntity["e\x00"+f.entity] = append(byEntity["e\x00"+f.entity], i)
		}
	}
	for _, b := range byEntity {
		// Facts of the same wording (one sentence many pages repeat) are
		// compared once: what topic a fact is on follows from its text
		// and value, not from where it was read.
		var keys []string
		same := map[string][]int{}
		for _, i := range b {
			k := facts[i].Text + "\x00" + facts[i].Value
			if _, ok := same[k]; !ok {
				keys = append(keys, k)
			}
			same[k] = append(same[k], i)
		}
		// link joins each fact of xs to one of ys read from another source.
		link := func(xs, ys []int) {
			for _, i := range xs {
				for _, j := range ys {
					if facts[i].SourceID != facts[j].SourceID {
						union(i, j)
						break
					}
				}
			}
		}
		for x, ka := range keys {
			a := same[ka]
			if len(a) > 1 && sameTopic(&facts[a[0]], &facts[a[0]]) {
				link(a, a)
			}
			for _, kb := range keys[x+1:] {
				bs := same[kb]
				if sameTopic(&facts[a[0]], &facts[bs[0]]) {
					link(a, bs)
					link(bs, a)
				}
			}
		}
	}
	groups := map[int][]int{}
	var roots []int
	for i := range facts {
		r := find(i)
		if _, ok := groups[r]; !ok {
			roots = append(roots, r)
		}
		groups[r] = append(groups[r], i)
	}
	return roots, groups
}

// compareOn chooses the kind of value a group's facts are compared on:
// the first shared kind they disagree on ("born in 1813" vs "born in
// 1814", though both died in 1901), else the first; with each fact's
// value of that kind (val), the facts by value and the values in order.
func compareOn(facts []Fact, idx []int, kinds []string) (kind string, val func(int) string, byValue map[string][]int, order []string) {
	for n, k := range kinds {
		canon := names(facts, idx, k)
		if canon == nil {
			canon = approxMeasures(facts, idx, k)
		}
		kv := func(i int) string {
			v, _ := keyValue(&facts[i], k)
			if c, ok := canon[v.key()]; ok {
				return c
			}
			return v.key()
		}
		bv := map[string][]int{}
		var ord []string
		for _, i := range idx {
			if _, has := keyValue(&facts[i], k); !has {
				continue
			}
			key := kv(i)
			if _, seen := bv[key]; !seen {
				ord = append(ord, key)
			}
			bv[key] = append(bv[key], i)
		}
		if n == 0 || len(ord) >= 2 {
			kind, val, byValue, order = k, kv, bv, ord
		}
		if len(ord) >= 2 {
			break
		}
	}
	return kind, val, byValue, order
}

// names maps each name value of a group to the longest name in the group
// whose words include all of its words, so "Eiffel" and "Gustave Eiffel"
// are one value, not a conflict.
func names(facts []Fact, idx []int, kind string) map[string]string {
	if kind != kindName {
		return nil
	}
	var keys []string
	for _, i := range idx {
		if v, ok := keyValue(&facts[i], kind); ok {
			keys = appendUnique(keys, v.key())
		}
	}
	canon := map[string]string{}
	for _, a := range keys {
		best := a
		for _, b := range keys {
			if len(b) > len(best) && subset(strings.Fields(a), strings.Fields(b)) {
				best = b
			}
		}
		canon[a] = best
	}
	return canon
}

func subset(a, b []string) bool {
	in := map[string]bool{}
	for _, w := range b {
		in[w] = true
	}
	for _, w := range a {
		if !in[w] {
			return false
		}
	}
	return true
}

// signature is a fact's values as one comparable string.
func signature(vals []value) string {
	parts := make([]string, len(vals))
	for i, v := range vals {
		parts[i] = v.class() + "=" + v.key()
	}
	sort.Strings(parts)
	return strings.Join(parts, ";")
}

// sharedKinds are the value classes (kind and role) that at least two
// facts of the group have, most shared first, then years and dates before
// names, units, ranks and bare numbers.
func sharedKinds(facts []Fact, idx []int) []string {
	count := map[string]int{}
	for _, i := range idx {
		seen := map[string]bool{}
		for _, v := range facts[i].values {
			if c := v.class(); !seen[c] {
				seen[c] = true
				count[c]++
			}
		}
	}
	var out []string
	for k, n := range count {
		if n >= 2 {
			out = append(out, k)
		}
	}
	rank := func(class string) int {
		switch k, _, _ := strings.Cut(class, "@"); k {
		case "year", "day":
			return 0
		case kindName:
			return 1
		case "ordinal":
			return 3
		case "":
			return 4
		}
		return 2 // a unit
	}
	sort.Slice(out, func(a, b int) bool {
		ka, kb := out[a], out[b]
		if count[ka] != count[kb] {
			return count[ka] > count[kb]
		}
		if rank(ka) != rank(kb) {
			return rank(ka) < rank(kb)
		}
		return ka < kb
	})
	return out
}

// support marks facts whose value (or, with no value, whose topic) is
// stated by sources of at least two domains; SupportedBy lists the other
// sources that state it.
func support(facts []Fact, idx []int, sources map[string]Source, val func(int) string) {
	type stated struct {
		domains map[string]bool
		by      []string // sources, in fact order, each once
	}
	byVal := map[string]*stated{}
	vals := make([]string, len(idx))
	for k, i := range idx {
		v := val(i)
		vals[k] = v
		st := byVal[v]
		if st == nil {
			st = &stated{domains: map[string]bool{}}
			byVal[v] = st
		}
		st.domains[sources[facts[i].SourceID].Domain] = true
		st.by = appendUnique(st.by, facts[i].SourceID)
	}
	for k, i := range idx {
		st := byVal[vals[k]]
		var by []string
		for _, id := range st.by {
			if id != facts[i].SourceID {
				by = append(by, id)
			}
		}
		facts[i].SupportedBy = by
		facts[i].Verified = len(st.domains) >= 2
	}
}

func appendUnique(xs []string, x string) []string {
	for _, y := range xs {
		if y == x {
			return xs
		}
	}
	return append(xs, x)
}

// resolve decides which value stands; it returns the discrepancy and the
// winning value's key ("" when unresolved).
func resolve(facts []Fact, group []int, byValue map[string][]int, order []string, kind string, sources map[string]Source) (Discrepancy, string) {
	type side struct {
		key     string
		idx     []int
		sources map[string]bool
		newest  *time.Time
		cred    float64
		text    string
	}
	var sides []*side
	for _, k := range order {
		s := &side{key: k, idx: byValue[k], sources: map[string]bool{}}
		for _, i := range s.idx {
			src := sources[facts[i].SourceID]
			s.sources[src.ID] = true
			if src.Published != nil && (s.newest == nil || src.Published.After(*s.newest)) {
				t := *src.Published
				s.newest = &t
			}
			s.cred = max(s.cred, src.Credibility)
		}
		v, _ := keyValue(&facts[s.idx[0]], kind)
		s.text = v.text
		sides = append(sides, s)
	}
	var quoted []int
	for _, s := range sides {
		quoted = append(quoted, s.idx...)
	}
	d := Discrepancy{Topic: topicLabel(facts, quoted, kind)}
	for _, s := range sides {
		for _, i := range s.idx {
			d.FactIDs = append(d.FactIDs, facts[i].ID)
		}
	}
	sort.SliceStable(sides, func(a, b int) bool { return len(sides[a].sources) > len(sides[b].sources) })
	stated := func() string {
		var parts []string
		for _, s := range sides {
			parts = append(parts, fmt.Sprintf("%s (%s)", s.text, plural(len(s.sources), "source")))
		}
		return strings.Join(parts, " vs ")
	}()
	win := func(s *side, strategy, why string, conf float64) (Discrepancy, string) {
		d.Strategy, d.Winner, d.Confidence = strategy, facts[s.idx[0]].ID, round2(conf)
		d.Resolution = fmt.Sprintf("%s: %s; %s", s.text, why, stated)
		return d, s.key
	}
	// Change: a source says the value changed from the others' to one
	// side's. The sides do not disagree: one states what was, the other
	// what is.
	nums := make([]float64, len(sides))
	for k, s := range sides {
		v, _ := keyValue(&facts[s.idx[0]], kind)
		nums[k] = v.written()
	}
	if k, i := changeOf(facts, group, nums); k >= 0 {
		var was []string
		for j, s := range sides {
			if j != k {
				was = append(was, s.text)
			}
		}
		if !slices.Contains(d.FactIDs, facts[i].ID) {
			d.FactIDs = append(d.FactIDs, facts[i].ID)
		}
		return win(sides[k], Recency, fmt.Sprintf("the last quote says the value changed from %s to it", strings.Join(was, ", ")), 0.7)
	}
	// Consensus: three or more sources against one.
	if len(sides) == 2 && len(sides[0].sources) >= 3 && len(sides[1].sources) == 1 {
		n := len(sides[0].sources)
		return win(sides[0], Consensus, fmt.Sprintf("%d sources agree against 1", n), float64(n)/float64(n+1))
	}
	// Recency: every side dated, one strictly newest.
	dated := true
	for _, s := range sides {
		dated = dated && s.newest != nil
	}
	if dated {
		byDate := append([]*side(nil), sides...)
		sort.SliceStable(byDate, func(a, b int) bool { return byDate[a].newest.After(*byDate[b].newest) })
		if byDate[0].newest.After(*byDate[1].newest) {
			return win(byDate[0], Recency, fmt.Sprintf("the newer source (%s) wins over %s", byDate[0].newest.Format("2006-01-02"), byDate[1].newest.Format("2006-01-02")), 0.7)
		}
	}
	// Credibility: one side's best source clearly more credible.
	byCred := append([]*side(nil), sides...)
	sort.SliceStable(byCred, func(a, b int) bool { return byCred[a].cred > byCred[b].cred })
	if diff := byCred[0].cred - byCred[1].cred; diff >= 0.1 {
		return win(byCred[0], Credibility, fmt.Sprintf("the more credible source (%.2f vs %.2f) wins", byCred[0].cred, byCred[1].cred), min(0.9, 0.55+diff))
	}
	d.Strategy, d.Confidence = Uncertainty, 0.3
	d.Resolution = "unresolved: the sources disagree and none is newer, more credible or backed by a consensus; " + stated
	return d, ""
}

// topicLabel names a topic: the entity, the kind of value, and the first
// few words of its first fact that say what is claimed ("Giuseppe Verdi
// (year): born, Roncole"), those every fact of idx says first (a page
// size's facts say "default", "page", "size", not only the first's
// "Since").
func topicLabel(facts []Fact, idx []int, kind string) string {
	f := &facts[idx[0]]
	label := f.Section
	if k, _, _ := strings.Cut(kind, "@"); k != "" {
		label += " (" + k + ")"
	}
	shared := func(t string) bool {
		for _, i := range idx {
			if !facts[i].terms[t] {
				return false
			}
		}
		return true
	}
	var words []string
	for _, all := range []bool{true, false} {
		seen := map[string]bool{}
		for _, w := range wordRE.FindAllString(f.Text, -1) {
			ts := analyze.Terms(w)
			if len(ts) == 0 || !f.terms[ts[0]] || seen[ts[0]] || all && !shared(ts[0]) {
				continue
			}
			seen[ts[0]] = true
			words = append(words, w)
			if len(words) == 3 {
				break
			}
		}
		if len(words) > 0 {
			break
		}
	}
	if len(words) > 0 {
		label += ": " + strings.Join(words, ", ")
	}
	return label
}

func plural(n int, w string) string {
	if n == 1 {
		return "1 " + w
	}
	return strconv.Itoa(n) + " " + w + "s"
}

func round2(f float64) float64 { return float64(int(f*100+0.5)) / 100 }
