package extract

import (
	"strings"
	"testing"
)

// A manual's menu paths and labels are inline elements whose classes read
// as page furniture to readability ("menuitem", "guimenu"); their words
// stay in the sentence, and another platform's hidden variant does not.
func TestMenuPathsStayInTheirSentence(t *testing.T) {
	page := `<!DOCTYPE html><html lang="ko"><head><title>공동 작업</title></head><body>
<header id="TopLeftHeader"><a class="logo" href="new_help.html"><p>LibreOffice 7.4 Help</p></a></header>
<aside class="leftside"><div id="Bookmarks"><nav class="index"></nav></div></aside>
<div id="DisplayArea" itemprop="softwareHelp">
<h1 id="hd_id130008">공동 작업</h1>
<p id="par_id5821710" class="paragraph">LibreOffice Writer와 Impress, Draw에서는 같은 시간에 한 사람의 사용자만 문서를 쓰기 가능한 상태로 열 수 있습니다. Calc에서는 많은 사용자들이 같은 시간에 같은 스프레드시트를 쓰기 가능한 상태로 열 수 있습니다.</p>
<h2 id="hd_id6917020">Calc에서의 협동</h2>
<p id="par_id4411145" class="paragraph">LibreOffice Calc에서 문서 공유를 사용하여 많은 사용자에게 동시 쓰기 액세스 권한을 허용합니다. 공동 작업할 모든 사용자는 <span class="emph"><span class="switchinline"><span hidden="true" class="MAC">LibreOffice - 환경 설정</span><span>도구 - 옵션</span></span> - LibreOffice - 사용자 데이터</span> 탭 페이지에 이름을 입력해야 합니다.</p>
<p id="par_id5288857" class="paragraph"><span class="menuitem">도구 - 문서 공유</span> 명령은 문서를 공유 상태로 전환할 때 사용할 수 있습니다. 공유된 문서를 공유 해제하려면, 공유 문서를 다른 이름이나 경로로 저장하십시오. 그러면 공유되지 않는 복사본이 만들어 집니다.</p>
<p id="par_id5288858" class="paragraph">To undo the last change choose <span class="guimenu">Edit</span> → <span class="guimenuitem">Undo</span>, or press <kbd class="shortcut">Ctrl+Z</kbd>. This works for every kind of change you make to an image, and the history keeps many steps.</p>
</div></body></html>`
	doc, err := HTML([]byte(page), "https://help.example.org/collab.html")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"도구 - 문서 공유 명령은", "사용자는 도구 - 옵션 - LibreOffice - 사용자 데이터 탭", "choose Edit → Undo, or press Ctrl+Z."} {
		if !strings.Contains(doc.Text, want) {
			t.Errorf("text lacks %q:\n%s", want, doc.Text)
		}
	}
	if strings.Contains(doc.Text, "환경 설정") {
		t.Errorf("a hidden variant reached the text:\n%s", doc.Text)
	}
}
