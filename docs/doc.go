// Package docs holds the user guides, in Markdown. Its test keeps the parts of them that restate
// the code (the region names the trace reader maps to roles, the breakdown's priority) generated
// from the code and checked against what the reader and the analyzer do.
package docs

//go:generate go test -run TestTorchGuide -update
