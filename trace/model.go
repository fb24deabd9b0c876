package trace

import (
	"fmt"

	"github.com/gnnprof/gnnprof/role"
)

// Kind is what an event is.
type Kind uint8

const (
	KindSpan    Kind = iota // a timed interval that nests strictly on its lane
	KindInstant             // a point in time
	KindCopy                // a memory copy (H2D, D2H, D2D) with bytes and duration
	KindMemory              // an allocation (+bytes) or free (−bytes) with the running total
	KindCounter             // a sampled value
	numKinds
)

var kindNames = [numKinds]string{"span", "instant", "copy", "memory", "counter"}

func (k Kind) String() string {
	if k < numKinds {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", k)
}

// Dir is a copy's direction.
type Dir uint8

const (
	DirNone Dir = iota
	DirH2D
	DirD2H
	DirD2D
	DirH2H
	numDirs
)

var dirNames = [numDirs]string{"", "HtoD", "DtoH", "DtoD", "HtoH"}

func (d Dir) String() string {
	if d < numDirs {
		return dirNames[d]
	}
	return fmt.Sprintf("dir(%d)", d)
}

// Role returns the breakdown role of a copy in direction d.
func (d Dir) Role() role.Role {
	switch d {
	case DirH2D:
		return role.H2D
	case DirD2H:
		return role.D2H
	case DirD2D:
		return role.D2D
	}
	return role.Other
}

// Flags are boolean attributes of an event.
type Flags uint8

const (
	FlagPinned Flags = 1 << iota // copy: the host side is pinned (page-locked) memory
	FlagAsync                    // copy: asynchronous with respect to the host
)

// NoDevice is the Device of an event that concerns host memory or no device.
const NoDevice = -1

// ComputeCPUCounter names the counter gnnprof's trainers record as each span of a compute phase
// (forward, backward, optimizer) ends, on the phase's lane: the process's CPU time during the
// span, all its threads, in nanoseconds. Beside the spans' wall time it says how many cores the
// compute keeps busy, and so how much of the host a background worker finds free when the
// device's compute runs on the host's own cores (the CPU backend).
const ComputeCPUCounter = "compute.cpu_ns"

// The counters gnnprof's trainers record after each epoch's training (on Linux, from the threads'
// schedstat): the time the process's threads ran (TrainCPUCounter) and the time they were ready to
// run but waited for a core (TrainWaitCounter), in nanoseconds. Their ratio is the share of the
// cores the machine gave the run: other processes' load takes the rest.
const (
	TrainCPUCounter  = "train.cpu_ns"
	TrainWaitCounter = "train.wait_ns"
)

// Event is one recorded event, in the form a [Sink] takes and [Table.Event] gives back.
// Times are nanoseconds since the trace's origin.
type Event struct {
	Kind   Kind
	Role   role.Role
	Dir    Dir   // copies
	Flags  Flags // copies
	Device int16 // copies and memory: the device index, or NoDevice for host memory
	Step   int32 // the step the event was recorded in, or -1 outside steps
	Lane   int32 // index into the trace's lanes
	Name   string
	Start  int64
	Dur    int64
	Bytes  int64 // copies: bytes moved; memory: +allocated / −freed; spans: bytes touched
	FLOPs  int64 // spans: floating-point operations done
	Total  int64 // memory: the device's allocated bytes (in use) after this event
	// Reserved, for memory events, is the bytes the device's allocator holds after this event,
	// the allocated ones and those it keeps cached for reuse (Kineto's "Total Reserved"); 0 where
	// the trace does not say.
	Reserved int64
	Value    float64 // counters
}

// LaneInfo describes a lane: a host thread or a device stream. Pid and Tid are the Chrome trace
// process and thread ids it is written under (strings, since foreign traces use names too).
type LaneInfo struct {
	Name   string
	Pid    string
	Tid    string
	Device int16 // the device index of a stream lane, or NoDevice for a host lane
	Stream int32 // the stream id of a stream lane
}
