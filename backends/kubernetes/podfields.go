package kubernetes

import (
	"google.golang.org/protobuf/encoding/protowire"
)

// fieldSet says which fields of a protobuf message a decode keeps: those in only (a nil value
// keeps the field whole, a set filters the nested message in turn), or, with allBut, every field
// but those listed there. Dropped fields are never decoded: no allocation, no garbage.
type fieldSet struct {
	only   map[protowire.Number]*fieldSet
	allBut map[protowire.Number]bool
}

// specFields is what the pod cache reads of a corev1.PodSpec (field numbers of k8s.io/api/core/v1's
// generated.proto): slim.go's slimSpecInto and so the posture. The bytes it keeps of a spec are
// the key its shared podSpec is found by (poddecode.go), so nothing a pod's name or node puts in
// its spec (hostname, nodeName, env, probes, commands) keeps equal specs apart. A field
// slimSpecInto reads that is not kept here decodes as empty; TestDirectPodDecodeCachesTheSamePod
// checks them against each other on pods with every field set.
var specFields = func() *fieldSet {
	whole := (*fieldSet)(nil)
	container := &fieldSet{only: map[protowire.Number]*fieldSet{
		1: whole, 2: whole, // name, image
		6: whole, 9: whole, 15: whole, // ports, volumeMounts, securityContext
		8: {only: map[protowire.Number]*fieldSet{1: whole}}, // resources: limits
	}}
	return &fieldSet{only: map[protowire.Number]*fieldSet{
		1:  {only: map[protowire.Number]*fieldSet{1: whole, 2: {only: map[protowire.Number]*fieldSet{1: whole}}}}, // volumes: name, hostPath
		2:  container,                                                                                             // containers
		20: container,                                                                                             // initContainers
		34: {only: map[protowire.Number]*fieldSet{1: container}},                                                  // ephemeralContainers' common part
		6:  whole, 11: whole, 12: whole, 13: whole, 14: whole, 21: whole,                                          // dnsPolicy, host{Network,PID,IPC}, securityContext, automountServiceAccountToken
		27: whole, 29: whole, 30: whole, 37: whole, // shareProcessNamespace, runtimeClassName, enableServiceLinks, hostUsers
	}}
}()

// appendKept appends to out the fields of msg that s keeps, in their order, and returns it.
func (s *fieldSet) appendKept(out, msg []byte) ([]byte, error) {
	for len(msg) > 0 {
		num, typ, n := protowire.ConsumeTag(msg)
		if n < 0 {
			return out, protowire.ParseError(n)
		}
		m := protowire.ConsumeFieldValue(num, typ, msg[n:])
		if m < 0 {
			return out, protowire.ParseError(m)
		}
		field := msg[:n+m]
		msg = msg[n+m:]
		if s.allBut != nil {
			if !s.allBut[num] {
				out = append(out, field...)
			}
			continue
		}
		sub, kept := s.only[num]
		switch {
		case !kept:
		case sub == nil || typ != protowire.BytesType:
			out = append(out, field...)
		default:
			var err error
			if out, err = sub.appendNested(out, num, field[n:]); err != nil {
				return out, err
			}
		}
	}
	return out, nil
}

// appendNested appends field num, the length-delimited message value (its length prefix
// included) with only what s keeps of it. The kept bytes are written in place after room for
// the longest length prefix, then moved up to the prefix they need.
func (s *fieldSet) appendNested(out []byte, num protowire.Number, value []byte) ([]byte, error) {
	inner, m := protowire.ConsumeBytes(value)
	if m < 0 {
		return out, protowire.ParseError(m)
	}
	out = protowire.AppendTag(out, num, protowire.BytesType)
	const room = 5 // a length below 2^35: a frame is at most maxFrame
	at := len(out)
	out = append(out, make([]byte, room)...)
	out, err := s.appendKept(out, inner)
	if err != nil {
		return out, err
	}
	size := len(out) - at - room
	var prefix [room]byte
	p := protowire.AppendVarint(prefix[:0], uint64(size))
	copy(out[at:], p)
	copy(out[at+len(p):], out[at+room:])
	return out[:at+len(p)+size], nil
}
