package report

// hostileNames are operator names a trace may carry that must never become markup, script or
// broken JSON anywhere gnnprof writes them.
var hostileNames = []string{
	`<script>alert(1)</script>`,
	`"><img src=x onerror=alert(2)>`,
	`</script><script>alert(3)</script>`,
	`'; alert(4); '`,
	"__f__function(){alert(5)}__f__",
	"line\nbreak\ttab\x00nul\x1fus",
	"bad utf8 \xff\xfe",
	"\u2028\u2029 separators",
	`{{.}} {{template "x"}}`,
	`&lt;already&gt; escaped &amp;`,
	`<svg onload=alert(6)>`,
	"]]></text><text>",
}
