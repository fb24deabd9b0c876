// Package shareddata owns the lookup of the project's shared folder (real datasets and sample
// traces), which lives beside the repository as ../shared and is never committed.
package shareddata
