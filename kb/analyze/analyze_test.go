package analyze

import (
	"slices"
	"testing"
)

func TestTerms(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want []string
	}{
		{"The crawlers were handling stale pages.", []string{"crawler", "handl", "stale", "page"}},
		{"COVID-19 vaccines", []string{"covid", "19", "vaccin"}},
		{"한글을 배운다", []string{"한글", "글을", "배운", "운다"}},
		{"한", []string{"한"}},
		{"", nil},
	}
	for _, tt := range tests {
		if got := Terms(tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("Terms(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestKoreanParticlesShareBigrams(t *testing.T) {
	t.Parallel()
	q, p := Terms("한글의 역사"), Terms("세종대왕이 한글을 창제했다")
	if !slices.ContainsFunc(q, func(s string) bool { return slices.Contains(p, s) }) {
		t.Fatalf("no shared term between %q and %q", q, p)
	}
}

func TestLanguage(t *testing.T) {
	t.Parallel()
	tests := map[string]string{
		"The knowledge base crawls a website and answers questions about it.": "en",
		"인터넷 서비스는 언제 개통되었나요? 설치 기사가 방문합니다.":                                   "ko",
		"!!":  "und",
		"123": "und",
	}
	for in, want := range tests {
		if got := Language(in); got != want {
			t.Errorf("Language(%q) = %q, want %q", in, got, want)
		}
	}
}
