package trace

import (
	"cmp"
	"strings"

	"github.com/gnnprof/gnnprof/internal/jsonscan"
)

// How the reader settles lanes once every event is read.

// laneState is what the events and metadata say about a lane.
type laneState struct {
	laneKey
	work      bool // device work ran on it
	name      string
	meta      bool // a thread_name event gave its device and stream
	device    int64
	stream    int64
	laneID    int64
	hasLaneID bool
}

// info is the lane as the table describes it. Device work on a lane, not metadata, makes it a
// device stream (Kineto names streams with thread_name events that carry no device), except in
// gnnprof's own traces, whose thread_name events say what each lane is.
func (l *laneState) info() LaneInfo {
	info := LaneInfo{Pid: l.pid, Tid: l.tid, Device: NoDevice, Name: l.pid + "/" + l.tid}
	switch {
	case l.meta:
		info.Device, info.Stream = int16(l.device), int32(l.stream)
		info.Name = "stream " + l.tid
	case l.isDevice():
		info.Device = 0
		if d, ok := jsonscan.ParseInt([]byte(l.pid)); ok && d >= 0 && d < 1<<15 {
			info.Device = int16(d)
		}
		s, _ := jsonscan.ParseInt([]byte(l.tid))
		info.Stream = int32(s)
		info.Name = "stream " + l.tid
	}
	if l.name != "" {
		info.Name = l.name
	}
	return info
}

// isDevice reports whether the lane is a device stream: device work ran on it, unless gnnprof's
// own metadata (which numbers its lanes and says which are streams) says otherwise.
func (l *laneState) isDevice() bool {
	if l.hasLaneID {
		return l.meta
	}
	return l.work || l.meta
}

// compareLanes orders lanes whatever order their events came in: lanes numbered by their
// metadata (gnnprof's) by that number, then host threads before device streams, each by process
// and thread id (numerically where both are numbers).
func compareLanes(a, b *laneState) int {
	if a.hasLaneID != b.hasLaneID {
		if a.hasLaneID {
			return -1
		}
		return 1
	}
	if a.hasLaneID {
		if c := cmp.Compare(a.laneID, b.laneID); c != 0 {
			return c
		}
	}
	da, db := a.isDevice(), b.isDevice()
	if da != db {
		if db {
			return -1
		}
		return 1
	}
	if c := compareIDs(a.pid, b.pid); c != 0 {
		return c
	}
	return compareIDs(a.tid, b.tid)
}

// compareIDs compares process or thread ids: numbers numerically, before names.
func compareIDs(a, b string) int {
	na, aok := jsonscan.ParseInt([]byte(a))
	nb, bok := jsonscan.ParseInt([]byte(b))
	switch {
	case aok && bok:
		return cmp.Compare(na, nb)
	case aok:
		return -1
	case bok:
		return 1
	}
	return strings.Compare(a, b)
}
