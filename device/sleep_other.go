//go:build !unix

package device

import "time"

func sleepFor(d time.Duration) { time.Sleep(d) }
