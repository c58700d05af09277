package kubernetes

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	watchapi "k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/randfill"
)

// The direct decode reads the pod cache's fields off the wire and looks specs up by the bytes
// specFields keeps; for any pod, the cached pod it yields must be the one the whole pod yields.
// Random pods set every field, so a field the cache starts to read without the decode reading
// it, or without specFields keeping it, fails here.
func TestDirectPodDecodeCachesTheSamePod(t *testing.T) {
	pods, _ := renderAgentEnv(t, "lsphdyup", "evals", map[string]any{"services": map[string]any{
		"default": map[string]any{"image": "python:3.12-bookworm"}, "victim": map[string]any{"image": "python:3.12-bookworm"}}})
	var cases []*corev1.Pod
	for i, p := range pods {
		cases = append(cases, servedPod(p, i))
	}
	fill := randfill.NewWithSeed(18).NilChance(0.2).NumElements(1, 3)
	for range 300 {
		p := &corev1.Pod{}
		fill.Fill(p)
		cases = append(cases, p)
	}
	// A label set twice on the wire: the decoded map keeps the last value.
	twice := servedPod(pods[0], 99)
	cases = append(cases, twice)
	tbl := newSpecTable(PostureOptions{})
	for i, p := range cases {
		raw, err := p.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		if p == twice {
			again, err := (&metav1.ObjectMeta{Labels: map[string]string{LabelInstance: "again"}}).Marshal()
			if err != nil {
				t.Fatal(err)
			}
			raw = protowire.AppendBytes(protowire.AppendTag(raw, 1, protowire.BytesType), again)
		}
		var whole corev1.Pod
		if err := whole.Unmarshal(raw); err != nil {
			t.Fatal(err)
		}
		got, err := tbl.decodePod(raw, false)
		if err != nil {
			t.Fatalf("pod %d: %v", i, err)
		}
		if want := tbl.cache(&whole); !reflect.DeepEqual(want, got) {
			t.Fatalf("pod %d: cached from the direct decode\n%+v\nwant\n%+v", i, got, want)
		}
	}
}

// watchFrames encodes events as the API server streams them over protobuf: each a bare
// WatchEvent behind a 4-byte length, its object in the envelope.
func watchFrames(t testing.TB, events ...watchapi.Event) []byte {
	t.Helper()
	enc := scheme.Codecs.EncoderForVersion(protobuf.NewSerializer(scheme.Scheme, scheme.Scheme), corev1.SchemeGroupVersion)
	raw := protobuf.NewRawSerializer(scheme.Scheme, scheme.Scheme)
	var out bytes.Buffer
	for _, ev := range events {
		obj, err := runtime.Encode(enc, ev.Object)
		if err != nil {
			t.Fatal(err)
		}
		frame, err := runtime.Encode(raw, &metav1.WatchEvent{Type: string(ev.Type), Object: runtime.RawExtension{Raw: obj}})
		if err != nil {
			t.Fatal(err)
		}
		out.Write(binary.BigEndian.AppendUint32(nil, uint32(len(frame))))
		out.Write(frame)
	}
	return out.Bytes()
}

func TestPodEventsDecodesTheWatchStream(t *testing.T) {
	pods, _ := renderAgentEnv(t, "lsphdyup", "evals", nil)
	pod := servedPod(pods[0], 7)
	bookmark := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{ResourceVersion: "4242",
		Annotations: map[string]string{metav1.InitialEventsAnnotationKey: "true"}}}
	gone := &metav1.Status{Status: metav1.StatusFailure, Code: 410, Reason: metav1.StatusReasonExpired, Message: "too old resource version"}
	stream := watchFrames(t, watchapi.Event{Type: watchapi.Added, Object: pod}, watchapi.Event{Type: watchapi.Bookmark, Object: bookmark},
		watchapi.Event{Type: watchapi.Error, Object: gone})
	specs := newSpecTable(PostureOptions{})
	d := &podEvents{body: io.NopCloser(bytes.NewReader(stream)), specs: specs}

	typ, obj, err := d.Decode()
	if err != nil || typ != watchapi.Added {
		t.Fatalf("first event: %s %v", typ, err)
	}
	served, err := pod.Marshal() // as the API server sends it (times in the local zone)
	if err != nil {
		t.Fatal(err)
	}
	var whole corev1.Pod
	if err := whole.Unmarshal(served); err != nil {
		t.Fatal(err)
	}
	if got, want := obj.(*cachedPod), specs.cache(&whole); !reflect.DeepEqual(got, want) {
		t.Errorf("pod decoded as\n%+v\nwant\n%+v", got, want)
	}

	typ, obj, err = d.Decode()
	if err != nil || typ != watchapi.Bookmark || obj.(*cachedPod).ResourceVersion != "4242" ||
		obj.(*cachedPod).Annotations[metav1.InitialEventsAnnotationKey] != "true" {
		t.Fatalf("bookmark: %s %+v %v (the reflector needs its version and the end-of-initial-events mark)", typ, obj, err)
	}
	typ, obj, err = d.Decode()
	if st, ok := obj.(*metav1.Status); err != nil || typ != watchapi.Error || !ok || st.Code != 410 {
		t.Fatalf("error event: %s %#v %v", typ, obj, err)
	}
	if _, _, err := d.Decode(); !errors.Is(err, io.EOF) {
		t.Fatalf("after the last event: %v, want io.EOF", err)
	}
}

func TestPodEventsRefusesBrokenFrames(t *testing.T) {
	pods, _ := renderAgentEnv(t, "lsphdyup", "evals", nil)
	good := watchFrames(t, watchapi.Event{Type: watchapi.Added, Object: servedPod(pods[0], 1)})
	for name, stream := range map[string][]byte{
		"cut inside a frame":   good[:len(good)-10],
		"huge length":          binary.BigEndian.AppendUint32(nil, 1<<31),
		"object not enveloped": append(binary.BigEndian.AppendUint32(nil, 8), 0x0a, 1, 'A', 0x12, 3, 0x0a, 1, '{'),
		"bad field":            append(binary.BigEndian.AppendUint32(nil, 4), 0xff, 0xff, 0xff, 0xff),
	} {
		_, _, err := (&podEvents{body: io.NopCloser(bytes.NewReader(stream)), specs: newSpecTable(PostureOptions{})}).Decode()
		if err == nil || errors.Is(err, io.EOF) || !strings.Contains(err.Error(), "pod watch") {
			t.Errorf("%s: %v, want an error naming the pod watch (not a clean end)", name, err)
		}
	}
}

// BenchmarkPodWatchDecode is one pod's watch event made into its cachedPod: "whole" as the typed
// informer did (the event, every field of the pod, then the transform); "direct" as podEvents
// does, the pod's spec already known (as for every pod of a task but the first).
func BenchmarkPodWatchDecode(b *testing.B) {
	pods, _ := renderAgentEnv(b, "lsphdyup", "evals", map[string]any{"services": map[string]any{
		"default": map[string]any{"image": "python:3.12-bookworm"}, "victim": map[string]any{"image": "python:3.12-bookworm"}}})
	frame := watchFrames(b, watchapi.Event{Type: watchapi.Added, Object: servedPod(pods[0], 1)})
	dec := scheme.Codecs.UniversalDeserializer()
	raw := protobuf.NewRawSerializer(scheme.Scheme, scheme.Scheme)
	b.Run("whole", func(b *testing.B) {
		specs := newSpecTable(PostureOptions{})
		ev := frame[4:]
		b.ReportAllocs()
		for b.Loop() {
			var we metav1.WatchEvent
			if _, _, err := raw.Decode(ev, nil, &we); err != nil {
				b.Fatal(err)
			}
			pod, _, err := dec.Decode(we.Object.Raw, nil, nil)
			if err != nil {
				b.Fatal(err)
			}
			specs.cache(pod.(*corev1.Pod))
		}
	})
	b.Run("direct", func(b *testing.B) {
		r := bytes.NewReader(frame)
		d := &podEvents{body: io.NopCloser(r), specs: newSpecTable(PostureOptions{})}
		b.ReportAllocs()
		for b.Loop() {
			r.Reset(frame)
			if _, _, err := d.Decode(); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// Pods of two releases of one task differ in names, hostnames and labels, not in what the posture
// reads: the second release's pods must find their specs by the kept bytes, never decoding them.
func TestDirectDecodeFindsAnotherReleasesSpec(t *testing.T) {
	values := map[string]any{"services": map[string]any{
		"default": map[string]any{"image": "python:3.12-bookworm"}, "victim": map[string]any{"image": "python:3.12-bookworm"}}}
	first, _ := renderAgentEnv(t, "lsphdyup", "evals", values)
	second, _ := renderAgentEnv(t, "qwzrtmne", "evals", values)
	tbl := newSpecTable(PostureOptions{})
	decode := func(p *corev1.Pod, i int) *cachedPod {
		raw, err := servedPod(p, i).Marshal()
		if err != nil {
			t.Fatal(err)
		}
		c, err := tbl.decodePod(raw, false)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	specs := map[string]*podSpec{}
	for i, p := range first {
		specs[p.Labels[LabelService]] = decode(p, i).spec
	}
	known := len(tbl.wire)
	for i, p := range second {
		if c := decode(p, 100+i); c.spec != specs[p.Labels[LabelService]] {
			t.Errorf("%s: the second release's pod has its own spec", p.Name)
		}
	}
	if len(tbl.wire) != known || known != len(specs) {
		t.Errorf("%d wire keys after the first release, %d after the second; want %d (one per service)", known, len(tbl.wire), len(specs))
	}
}
