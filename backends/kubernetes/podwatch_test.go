package kubernetes

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	watchapi "k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/randfill"
)

// The slim decode leaves out what the pod cache never reads; for any pod, the cached pod it
// yields must be the one the whole pod yields. Random pods set every field, so a field the cache
// starts to read without podFields keeping it fails here.
func TestSlimPodDecodeCachesTheSamePod(t *testing.T) {
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
	tbl := newSpecTable(PostureOptions{})
	var scratch []byte
	for i, p := range cases {
		raw, err := p.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		var whole corev1.Pod
		if err := whole.Unmarshal(raw); err != nil {
			t.Fatal(err)
		}
		scratch, err = podFields.appendKept(scratch[:0], raw)
		if err != nil {
			t.Fatalf("pod %d: %v", i, err)
		}
		var slim corev1.Pod
		if err := slim.Unmarshal(scratch); err != nil {
			t.Fatalf("pod %d: the kept fields do not decode: %v", i, err)
		}
		if want, got := tbl.cache(&whole), tbl.cache(&slim); !reflect.DeepEqual(want, got) {
			t.Fatalf("pod %d: cached from the slim decode\n%+v\nwant\n%+v", i, got, want)
		}
		if len(p.ManagedFields) > 0 && len(slim.ManagedFields) > 0 {
			t.Fatalf("pod %d: managedFields decoded", i)
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
	d := &podEvents{body: io.NopCloser(bytes.NewReader(stream))}

	typ, obj, err := d.Decode()
	if err != nil || typ != watchapi.Added {
		t.Fatalf("first event: %s %v", typ, err)
	}
	got := obj.(*corev1.Pod)
	if got.Name != pod.Name || got.ResourceVersion != pod.ResourceVersion || got.Labels[LabelInstance] != pod.Labels[LabelInstance] ||
		got.Status.Phase != corev1.PodRunning || len(got.Spec.Containers) != len(pod.Spec.Containers) || got.Spec.Containers[0].Image != pod.Spec.Containers[0].Image {
		t.Errorf("pod decoded as %+v", got)
	}
	if len(got.ManagedFields) != 0 || len(got.Status.Conditions) != 0 || got.Spec.NodeName != "" {
		t.Errorf("fields the cache never reads were decoded: managedFields %d, conditions %d, nodeName %q",
			len(got.ManagedFields), len(got.Status.Conditions), got.Spec.NodeName)
	}

	typ, obj, err = d.Decode()
	if err != nil || typ != watchapi.Bookmark || obj.(*corev1.Pod).ResourceVersion != "4242" ||
		obj.(*corev1.Pod).Annotations[metav1.InitialEventsAnnotationKey] != "true" {
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
		_, _, err := (&podEvents{body: io.NopCloser(bytes.NewReader(stream))}).Decode()
		if err == nil || errors.Is(err, io.EOF) || !strings.Contains(err.Error(), "pod watch") {
			t.Errorf("%s: %v, want an error naming the pod watch (not a clean end)", name, err)
		}
	}
}

func BenchmarkPodWatchDecode(b *testing.B) {
	pods, _ := renderAgentEnv(b, "lsphdyup", "evals", map[string]any{"services": map[string]any{
		"default": map[string]any{"image": "python:3.12-bookworm"}, "victim": map[string]any{"image": "python:3.12-bookworm"}}})
	frame := watchFrames(b, watchapi.Event{Type: watchapi.Added, Object: servedPod(pods[0], 1)})
	dec := scheme.Codecs.UniversalDeserializer()
	raw := protobuf.NewRawSerializer(scheme.Scheme, scheme.Scheme)
	b.Run("whole", func(b *testing.B) { // what the typed informer did: the event, then every field of its object
		ev := frame[4:]
		b.ReportAllocs()
		for b.Loop() {
			var we metav1.WatchEvent
			if _, _, err := raw.Decode(ev, nil, &we); err != nil {
				b.Fatal(err)
			}
			if _, _, err := dec.Decode(we.Object.Raw, nil, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("slim", func(b *testing.B) {
		r := bytes.NewReader(frame)
		d := &podEvents{body: io.NopCloser(r)}
		b.ReportAllocs()
		for b.Loop() {
			r.Reset(frame)
			if _, _, err := d.Decode(); err != nil {
				b.Fatal(err)
			}
		}
	})
}
