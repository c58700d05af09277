package kubernetes

import (
	"bytes"
	"fmt"
	"slices"

	"google.golang.org/protobuf/encoding/protowire"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// decodePod makes the cachedPod of a pod in its protobuf wire form (a corev1.Pod) without
// decoding the pod: the fields the cache keeps are read off the wire, and the spec is looked up
// by its security-relevant bytes (specFields), so a pod whose spec is known (every pod of a
// task after the first) never decodes it. At 50,000 pods decoding pods, their specs most of
// all, was the largest share of the workbench's CPU while the table loaded.
//
// It yields what t.cache yields for the decoded pod (TestDirectPodDecodeCachesTheSamePod).
// With bookmark, the end-of-initial-events annotation is kept too: the reflector reads it.
func (t *specTable) decodePod(raw []byte, bookmark bool) (*cachedPod, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	c := &cachedPod{}
	labels := t.wireLabels[:0]
	spec := t.wireSpec[:0] // repeated occurrences of a message merge: concatenated, they decode as one
	err := walkFields(raw, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
		if typ != protowire.BytesType {
			return nil
		}
		var err error
		switch num {
		case 1:
			labels, err = t.decodePodMeta(c, v, labels, bookmark)
		case 2:
			spec = append(spec, v...)
		case 3:
			err = t.decodePodStatus(c, v)
		}
		return err
	})
	t.wireLabels, t.wireSpec = labels, spec
	if err != nil {
		return nil, err
	}
	if c.spec, err = t.specOfWire(spec); err != nil {
		return nil, err
	}
	c.labels = t.labelSetOfWire(labels)
	return c, nil
}

// wireLabel is one label as it came off the wire (its bytes are the frame's: not to be kept).
type wireLabel struct{ key, val []byte }

// decodePodMeta reads an ObjectMeta: the identity, times and annotations a cachedPod keeps
// (into c) and its labels (appended to labels).
func (t *specTable) decodePodMeta(c *cachedPod, b []byte, labels []wireLabel, bookmark bool) ([]wireLabel, error) {
	err := walkFields(b, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
		if typ != protowire.BytesType {
			return nil
		}
		switch num {
		case 1:
			c.Name = string(v)
		case 3:
			c.Namespace = t.strOf(v)
		case 5:
			c.UID = types.UID(v)
		case 6:
			c.ResourceVersion = string(v)
		case 8:
			return c.CreationTimestamp.Unmarshal(v)
		case 9:
			c.DeletionTimestamp = &metav1.Time{}
			return c.DeletionTimestamp.Unmarshal(v)
		case 11:
			k, val, err := mapEntry(v)
			labels = append(labels, wireLabel{k, val})
			return err
		case 12:
			k, val, err := mapEntry(v)
			if string(k) == AnnotationTask || bookmark && string(k) == metav1.InitialEventsAnnotationKey {
				if c.Annotations == nil {
					c.Annotations = make(map[string]string, 1)
				}
				c.Annotations[t.strOf(k)] = t.strOf(val)
			}
			return err
		}
		return nil
	})
	if err != nil {
		return labels, fmt.Errorf("metadata: %w", err)
	}
	return labels, nil
}

// decodePodStatus reads a PodStatus: its phase and, of each container's status, the restarts,
// the waiting reason and the last exit.
func (t *specTable) decodePodStatus(c *cachedPod, b []byte) error {
	err := walkFields(b, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
		switch {
		case num == 1 && typ == protowire.BytesType:
			c.phase = corev1.PodPhase(t.strOf(v))
		case num == 8 && typ == protowire.BytesType:
			return t.decodeContainerStatus(c, v)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("status: %w", err)
	}
	return nil
}

// decodeContainerStatus reads a ContainerStatus (state = 2, lastState = 3, restartCount = 5)
// into c as cache does: restarts summed, the first waiting reason and the first last exit kept.
func (t *specTable) decodeContainerStatus(c *cachedPod, b []byte) error {
	return walkFields(b, func(num protowire.Number, typ protowire.Type, v []byte, x uint64) error {
		switch {
		case num == 5 && typ == protowire.VarintType:
			c.restarts += int(int32(x))
		case num == 2 && typ == protowire.BytesType && c.waiting == "":
			return t.decodeWaiting(c, v)
		case num == 3 && typ == protowire.BytesType && c.lastExit == "":
			return decodeLastExit(c, v)
		}
		return nil
	})
}

// decodeWaiting reads a ContainerState's waiting reason (waiting = 1 {reason = 1}), if any.
func (t *specTable) decodeWaiting(c *cachedPod, state []byte) error {
	waiting, ok, err := lastBytes(state, 1)
	if !ok || err != nil {
		return err
	}
	reason, _, err := lastBytes(waiting, 1)
	if len(reason) > 0 {
		c.waiting = t.strOf(reason)
	}
	return err
}

// decodeLastExit reads how a ContainerState ended (terminated = 3 {exitCode = 1, reason = 3}),
// if it did.
func decodeLastExit(c *cachedPod, state []byte) error {
	term, ok, err := lastBytes(state, 3)
	if !ok || err != nil {
		return err
	}
	var code int32
	var reason []byte
	err = walkFields(term, func(num protowire.Number, typ protowire.Type, s []byte, x uint64) error {
		switch {
		case num == 1 && typ == protowire.VarintType:
			code = int32(x)
		case num == 3 && typ == protowire.BytesType:
			reason = s
		}
		return nil
	})
	c.lastExit = fmt.Sprintf("%s %d", reason, code)
	return err
}

// specOfWire is the shared podSpec of a spec in wire form: looked up by the bytes specFields
// keeps of it, decoded only when they are new (t.mu held).
func (t *specTable) specOfWire(spec []byte) (*podSpec, error) {
	key, err := specFields.appendKept(t.wireKey[:0], spec)
	t.wireKey = key
	if err != nil {
		return nil, fmt.Errorf("spec: %w", err)
	}
	if s, ok := t.wire[string(key)]; ok {
		return s, nil
	}
	var full corev1.PodSpec
	if err := full.Unmarshal(key); err != nil {
		return nil, fmt.Errorf("spec: %w", err)
	}
	s := t.internLocked(&full)
	if len(t.wire) >= maxSpecs {
		clear(t.wire)
	}
	t.wire[string(key)] = s
	return s, nil
}

// labelSetOfWire is the labelSet of labels as they came off the wire: as labelSet makes of the
// decoded map (a key set twice keeps its last value), with no string made for a key or value
// already known (t.mu held).
func (t *specTable) labelSetOfWire(labels []wireLabel) labelSet {
	if len(labels) == 0 {
		return labelSet{}
	}
	slices.SortStableFunc(labels, func(a, b wireLabel) int { return bytes.Compare(a.key, b.key) })
	n := 0
	for i, l := range labels { // of equal keys, the last set wins (as in the decoded map)
		if i+1 < len(labels) && bytes.Equal(l.key, labels[i+1].key) {
			continue
		}
		labels[n] = l
		n++
	}
	labels = labels[:n]
	id := t.keyID[:0]
	for _, l := range labels {
		id = append(append(id, l.key...), 0)
	}
	t.keyID = id
	keys := t.sharedKeys(id, len(labels), func(i int) string { return t.strOf(labels[i].key) })
	vals := make([]string, len(labels))
	for i, l := range labels {
		vals[i] = t.strOf(l.val)
	}
	return labelSet{keys: keys, vals: vals}
}

// strOf is str for bytes: the interned string, made only when it is new (t.mu held).
func (t *specTable) strOf(b []byte) string {
	if s, ok := t.strs[string(b)]; ok {
		return s
	}
	return t.str(string(b))
}

// lastBytes is the value of msg's length-delimited field num (its last occurrence, which a
// decode keeps) and whether msg has it.
func lastBytes(msg []byte, num protowire.Number) (v []byte, ok bool, err error) {
	err = eachField(msg, func(n protowire.Number, b []byte) {
		if n == num {
			v, ok = b, true
		}
	})
	return v, ok, err
}

// mapEntry reads a protobuf map entry (key = 1, value = 2).
func mapEntry(b []byte) (key, val []byte, err error) {
	err = eachField(b, func(num protowire.Number, v []byte) {
		switch num {
		case 1:
			key = v
		case 2:
			val = v
		}
	})
	return key, val, err
}

// walkFields calls f with each field of the message b, in order: v is a length-delimited
// field's value, x a varint's; fields of other wire types are skipped over. It stops at f's
// first error.
func walkFields(b []byte, f func(num protowire.Number, typ protowire.Type, v []byte, x uint64) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		var v []byte
		var x uint64
		switch typ {
		case protowire.BytesType:
			v, n = protowire.ConsumeBytes(b)
		case protowire.VarintType:
			x, n = protowire.ConsumeVarint(b)
		default:
			n = protowire.ConsumeFieldValue(num, typ, b)
		}
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		if typ == protowire.VarintType || typ == protowire.BytesType {
			if err := f(num, typ, v, x); err != nil {
				return err
			}
		}
	}
	return nil
}
