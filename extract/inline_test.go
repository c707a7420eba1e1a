package extract

import (
	"slices"
	"strings"
	"testing"
)

// A manual's menu paths and labels are inline elements whose classes read
// as page furniture to readability ("menuitem", "guimenu"); their words
// stay in the sentence, and another platform's hidden variant does not;
// of hidden alternatives only, the default (the last) stays.
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
<p id="par_id7" class="paragraph">표의 안을 클릭하고, <span id="swlnsys_7" class="switchinline"><span hidden="true" id="MAC_7" class="MAC">Command</span><span hidden="true" id="default_7">Ctrl</span></span> + A 를 두번 눌러 표 전체를 선택한 뒤, <span class="emph">삽입 - 프레임</span>을 선택하세요.</p>
<span id="swlnappl_2" class="switch">
  <span hidden="true" id="CALC_2" class="CALC"><p class="paragraph">셀의 서식이 지정된 값을 고려하여 검색합니다.</p></span>
</span>
<p id="par_id5288858" class="paragraph">To undo the last change choose <span class="guimenu">Edit</span> → <span class="guimenuitem">Undo</span>, or press <kbd class="shortcut">Ctrl+Z</kbd>. This works for every kind of change you make to an image, and the history keeps many steps.</p>
</div></body></html>`
	doc, err := HTML([]byte(page), "https://help.example.org/collab.html")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"도구 - 문서 공유 명령은", "사용자는 도구 - 옵션 - LibreOffice - 사용자 데이터 탭", "choose Edit → Undo, or press Ctrl+Z.", "표의 안을 클릭하고, Ctrl + A 를 두번 눌러 표 전체를 선택한 뒤, 삽입 - 프레임을 선택하세요."} {
		if !strings.Contains(doc.Text, want) {
			t.Errorf("text lacks %q:\n%s", want, doc.Text)
		}
	}
	if strings.Contains(doc.Text, "환경 설정") || strings.Contains(doc.Text, "Command") || strings.Contains(doc.Text, "서식이 지정된") {
		t.Errorf("a hidden variant reached the text:\n%s", doc.Text)
	}
}

// An option list's items are paragraphs of their own, and a heading's
// permalink mark is not a word of it: "timeout <number> Default: 0" does
// not run into the next option's description, and "requestTimeout#" is
// "requestTimeout".
func TestListItemsAreParagraphsWithoutPermalinks(t *testing.T) {
	page := `<!DOCTYPE html><html><head><meta charset="utf-8"><title>Child process</title></head><body><div id="apicontent">
<h3>child_process.exec(command[, options][, callback])<span><a class="mark" href="#child_processexeccommand-options-callback" id="x">#</a></span></h3>
<p>Spawns a shell then executes the command within that shell, buffering any generated output. The command string passed to the exec function is processed directly by the shell.</p>
<ul>
<li><code>command</code> <a href="https://developer.mozilla.org/" class="type">&lt;string&gt;</a> The command to run, with space-separated arguments.</li>
<li><code>options</code> <a href="https://developer.mozilla.org/" class="type">&lt;Object&gt;</a>
<ul>
<li><code>timeout</code> <a class="type">&lt;number&gt;</a> <strong>Default:</strong> <code>0</code></li>
<li><code>maxBuffer</code> <a class="type">&lt;number&gt;</a> Largest amount of data in bytes allowed on stdout or
stderr. If exceeded, the child process is terminated and any output is
truncated. <strong>Default:</strong> <code>1024 * 1024</code>.</li>
</ul>
</li>
</ul>
<h2 class="section">Logging<a class="headerlink" href="#logging" title="Permalink to this headline">¶</a></h2>
<p>A sentence long enough for readability to keep this page as an article and not fall back to the body of it.</p>
<dl><dt>gc.auto</dt><dd>When there are approximately more than this many loose objects in the repository, git gc --auto will pack them. The default value is 6700.</dd></dl>
<ul><li>Options of the watcher:<dl><dt>interval</dt><dd>How often the folder is read. Default: 5007.</dd></dl> and nothing else runs between reads.</li></ul>
</div></body></html>`
	doc, err := HTML([]byte(page), "https://docs.example.org/child_process.html")
	if err != nil {
		t.Fatal(err)
	}
	paragraphs := strings.Split(doc.Text, "\n\n")
	for _, want := range []string{
		"timeout <number> Default: 0",
		"maxBuffer <number> Largest amount of data in bytes allowed on stdout or stderr. If exceeded, the child process is terminated and any output is truncated. Default: 1024 * 1024.",
		"child_process.exec(command[, options][, callback])",
		"Logging",
		"gc.auto",
		"Options of the watcher:",
		"How often the folder is read. Default: 5007.",
		"and nothing else runs between reads.",
	} {
		if !slices.Contains(paragraphs, want) {
			t.Errorf("no paragraph %q in:\n%s", want, doc.Text)
		}
	}
	if strings.ContainsAny(doc.Text, "#¶") {
		t.Errorf("a permalink mark reached the text:\n%s", doc.Text)
	}
}
