// Package browsertest drives headless Chromium for the tests of the pages gnnprof makes (the
// HTML report, gnnprof serve): one browser for a package's tests, started by the first test that
// opens a tab, a tab per test, and what each page reported (console errors, exceptions, the
// requests it made).
package browsertest
