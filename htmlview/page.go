package htmlview

import "html/template"

// page is the whole document. Columns of unchanged passes start collapsed
// (a click on any column's header folds or unfolds it); a double click on a
// word of IR marks it in every column, as GOSSAFUNC's view does for values.
var page = template.Must(template.New("page").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>phasec: {{.Title}}</title>
<style>
body { font-family: system-ui, sans-serif; margin: 0; font-size: 13px; }
header.top { padding: 6px 10px; border-bottom: 1px solid #ccc; }
header.top h1 { font-size: 15px; margin: 0 0 4px 0; }
header.top .help { color: #555; }
main { display: flex; align-items: flex-start; overflow-x: auto; }
section.group { border-right: 2px solid #888; }
section.group > h2 { font-size: 13px; margin: 0; padding: 4px 8px; background: #e8eef7; border-bottom: 1px solid #bbb; white-space: nowrap; }
section.group > h2 .phase { color: #235; font-weight: normal; }
.cols { display: flex; align-items: flex-start; }
.col { border-right: 1px solid #ddd; min-width: 28em; max-width: 60em; }
.col > .body { overflow-x: auto; }
.col > .head { cursor: pointer; padding: 4px 6px; background: #f4f4f4; border-bottom: 1px solid #ddd; }
.col > .head .name { font-weight: bold; }
.col > .head .meta { color: #555; font-size: 12px; }
.col > .head .props { color: #165; font-size: 12px; }
.col > .head .err { color: #a00; font-size: 12px; white-space: pre-wrap; }
.col.collapsed { min-width: 0; width: 1.8em; }
.col.collapsed > .head { writing-mode: vertical-rl; min-height: 12em; }
.col.collapsed > .head .meta, .col.collapsed > .head .props, .col.collapsed > .body { display: none; }
.col.failed > .head { background: #fbe4e4; }
pre.ir { margin: 0; padding: 4px 6px; font-size: 12px; line-height: 1.35; }
pre.ir span { display: block; white-space: pre; }
pre.ir span.chg { background: #fff3b0; }
pre.ir mark { background: #9cf; }
details.graphs { border-bottom: 1px solid #ddd; padding: 2px 6px; }
.graph .gname { font-weight: bold; margin: 4px 0; }
svg.dataflow .node rect { fill: #fff; stroke: #446; }
svg.dataflow .node.param rect { fill: #e6f2e6; }
svg.dataflow .node.result rect { fill: #f2e6e6; }
svg.dataflow .node.group rect { fill: #fdf6e3; stroke: #b58900; stroke-dasharray: 4 2; }
svg.dataflow text { font: 11px monospace; fill: #111; }
svg.dataflow text.member { fill: #555; }
svg.dataflow .edge { fill: none; stroke: #778; }
</style>
</head>
<body>
<header class="top">
<h1>phasec: {{.Title}}</h1>
<div class="help">{{.Passes}} passes. Columns of passes that changed nothing are folded: click a column's header to fold or unfold it. Highlighted lines are the ones a pass wrote. Double-click a word to mark it everywhere.</div>
</header>
<main>
{{range .Groups}}<section class="group" data-step="{{.Step}}">
<h2>{{.Step}}{{if .Phase}} <span class="phase">→ {{.Phase}}</span>{{end}}</h2>
<div class="cols">
{{range .Columns}}<div class="col{{if and (not .Input) (not .Changed)}} collapsed{{end}}{{if .Err}} failed{{end}}" data-pass="{{.Pass}}" data-changed="{{.ChangedN}}">
<div class="head"><span class="name">{{.Pass}}</span>
<div class="meta">{{if .Input}}input module{{else}}{{.Duration}}{{if .Changed}}, {{.ChangedN}} lines written{{else}}, unchanged{{end}}{{end}}</div>
{{if .Established}}<div class="props">establishes {{range $i, $p := .Established}}{{if $i}}, {{end}}{{$p}}{{end}}</div>{{end}}
{{if .Err}}<div class="err">{{.Err}}</div>{{end}}
</div>
<div class="body">
{{if .Graphs}}<details class="graphs"{{if .Input}} open{{end}}><summary>dataflow</summary>{{range .Graphs}}{{.}}{{end}}</details>{{end}}
<pre class="ir">{{range .Lines}}<span{{if .Changed}} class="chg"{{end}}>{{.Text}}</span>{{end}}</pre>
</div>
</div>
{{end}}</div>
</section>
{{end}}</main>
<svg width="0" height="0" style="position:absolute"><defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="6" markerHeight="6" orient="auto-start-reverse"><path d="M0 0 L10 5 L0 10 z" fill="#778"/></marker></defs></svg>
<script>
for (const head of document.querySelectorAll('.col > .head')) {
  head.addEventListener('click', () => head.parentElement.classList.toggle('collapsed'));
}
document.addEventListener('dblclick', () => {
  const word = String(window.getSelection()).trim();
  for (const m of document.querySelectorAll('pre.ir mark')) m.replaceWith(...m.childNodes);
  if (!/^[\w.%]+$/.test(word)) return;
  for (const span of document.querySelectorAll('pre.ir span')) {
    const t = span.textContent;
    if (!t.includes(word)) continue;
    span.replaceChildren(...t.split(word).flatMap((part, i) => {
      if (i === 0) return [part];
      const m = document.createElement('mark');
      m.textContent = word;
      return [m, part];
    }));
  }
});
</script>
</body>
</html>
`))
