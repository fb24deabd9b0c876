// Package report renders what the analyzer computed for people and tools: a profile as the
// terminal summary ([WriteSummary]), plain text ([WriteText]), JSON ([WriteJSON], the schema in
// analyze/SCHEMA.md) and a single-file offline HTML page ([WriteHTML]), a diff as text and HTML
// ([WriteDiffText], [WriteDiffSummary], [WriteHTMLDiff]), and a trace's span tree as a pprof
// profile ([WritePprof]) or a strictly nested Chrome/Perfetto trace ([ExportChrome]). It also
// takes the Go CPU profile of a training run, labelled by role ([StartCPUProfile]).
//
// Every number is formatted here (format.go), so the renderings agree; the HTML page is built
// section by section (html_sections.go) into one template (page.html).
package report
