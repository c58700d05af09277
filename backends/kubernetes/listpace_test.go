package kubernetes

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	watchapi "k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/internal/inputfirst"
)

// While the operator types, a watch's initial list is paced (the server streams it only as fast
// as it is read); from the end-of-initial-events bookmark on, live events are not. Both paced
// decoders: the pods' protobuf stream and the policies' JSON stream.
func TestWatchesPaceOnlyTheInitialListWhileTyping(t *testing.T) {
	const listed, live = 400, 400
	pods, _ := renderAgentEnv(t, "lsphdyup", "evals", nil)
	pod := servedPod(pods[0], 7)
	podBookmark := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{ResourceVersion: "4242",
		Annotations: map[string]string{metav1.InitialEventsAnnotationKey: "true"}}}
	podStream := watchFrames(t, listThenLive(listed, live, pod, podBookmark)...)
	policyStream := policyWatchJSON(listed, live)

	decoders := []struct {
		name string
		open func(pace listPace) watchapi.Decoder
	}{
		{"pods", func(pace listPace) watchapi.Decoder {
			return &podEvents{body: io.NopCloser(bytes.NewReader(podStream)), specs: newSpecTable(PostureOptions{}), pace: pace}
		}},
		{"policies", func(pace listPace) watchapi.Decoder {
			r := bytes.NewReader(policyStream)
			return &policyEvents{body: io.NopCloser(r), dec: json.NewDecoder(r), pace: pace}
		}},
	}
	for _, dec := range decoders {
		for _, typing := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/typing=%v", dec.name, typing), func(t *testing.T) {
				var input inputfirst.Signal
				if typing {
					input.Mark()
				}
				pace := newListPace(&input)
				pace.pacer.Window = time.Hour // the test's own speed must not end the window
				var slept time.Duration
				lastPacedAt, n := -1, 0
				pace.pacer.Sleep = func(d time.Duration) { slept += d; lastPacedAt = n }
				d := dec.open(pace)
				for ; ; n++ {
					if _, _, err := d.Decode(); errors.Is(err, io.EOF) {
						break
					} else if err != nil {
						t.Fatalf("event %d: %v", n, err)
					}
				}
				if n != listed+1+live {
					t.Fatalf("decoded %d events, want %d", n, listed+1+live)
				}
				if !typing {
					if slept != 0 {
						t.Fatalf("paced %v with nobody typing", slept)
					}
					return
				}
				if want := listed * time.Second / inputfirst.DefaultRate; slept < want*9/10 || slept > want*11/10 {
					t.Errorf("the %d listed objects slept %v while typing, want about %v (the default rate)", listed, slept, want)
				}
				if lastPacedAt > listed {
					t.Errorf("paced at event %d, after the initial list ended (event %d)", lastPacedAt, listed)
				}
			})
		}
	}
}

func TestListPaceWithoutASignalNeverPaces(t *testing.T) {
	pace := newListPace(nil)
	for range 1000 {
		pace.step() // no pacer: no panic, no wait
	}
	pace.saw(watchapi.Bookmark, map[string]string{metav1.InitialEventsAnnotationKey: "true"})
	if !pace.listed {
		t.Error("the end-of-initial-events bookmark did not end the list")
	}
}

// listThenLive is listed ADDED events, the bookmark that ends them, then live MODIFIED events.
func listThenLive(listed, live int, obj, bookmark runtime.Object) []watchapi.Event {
	var events []watchapi.Event
	for range listed {
		events = append(events, watchapi.Event{Type: watchapi.Added, Object: obj})
	}
	events = append(events, watchapi.Event{Type: watchapi.Bookmark, Object: bookmark})
	for range live {
		events = append(events, watchapi.Event{Type: watchapi.Modified, Object: obj})
	}
	return events
}

// policyWatchJSON is a CiliumNetworkPolicy watch stream as the API server sends it (JSON
// events one after another): listed policies, the end-of-initial-events bookmark, live ones.
func policyWatchJSON(listed, live int) []byte {
	var b bytes.Buffer
	policy := func(typ string, i int) {
		fmt.Fprintf(&b, `{"type":%q,"object":{"kind":"CiliumNetworkPolicy","apiVersion":"cilium.io/v2","metadata":{"name":"p%d","namespace":"evals","resourceVersion":"%d"}}}`+"\n", typ, i, i+1)
	}
	for i := range listed {
		policy("ADDED", i)
	}
	fmt.Fprintf(&b, `{"type":"BOOKMARK","object":{"kind":"CiliumNetworkPolicy","apiVersion":"cilium.io/v2","metadata":{"resourceVersion":"4242","annotations":{%q:"true"}}}}`+"\n", metav1.InitialEventsAnnotationKey)
	for i := range live {
		policy("MODIFIED", listed+i)
	}
	return b.Bytes()
}

// A reset builds every sandbox in one burst (0.7 s of CPU at 25,000 releases): while the
// operator types it is paced to resetRate, and it still emits the whole fleet.
func TestResetPacedWhileTypingStillEmitsTheFleet(t *testing.T) {
	const releases = 200
	specs := newSpecTable(PostureOptions{})
	inf := cache.NewSharedIndexInformer(nil, &cachedPod{}, 0, cache.Indexers{byRelease: releaseKeyOfPod})
	for i := range releases {
		rel := fmt.Sprintf("r%03d", i)
		name := "agent-env-" + rel + "-default-0"
		pod := specs.cache(&corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "evals", UID: types.UID(name),
				Labels: map[string]string{LabelInstance: rel, LabelService: "default"}},
			Spec:   corev1.PodSpec{Containers: []corev1.Container{{Name: "default", Image: "python:3.12"}}},
			Status: corev1.PodStatus{Phase: corev1.PodRunning},
		})
		if err := inf.GetIndexer().Add(pod); err != nil {
			t.Fatal(err)
		}
	}
	for _, typing := range []bool{false, true} {
		t.Run(fmt.Sprintf("typing=%v", typing), func(t *testing.T) {
			var input inputfirst.Signal
			if typing {
				input.Mark()
			}
			var slept time.Duration
			var events []backends.Event
			w := &watcher{b: &Backend{context: "envtest"}, pods: []cache.SharedIndexInformer{inf}, specs: specs,
				dirty: map[string]struct{}{}, emitted: map[string]bool{}, emit: func(e backends.Event) { events = append(events, e) },
				resetPace: inputfirst.Pacer{Signal: &input, Rate: resetRate, Window: time.Hour, Sleep: func(d time.Duration) { slept += d }}}
			w.reset()
			if len(events) != 1 || events[0].Type != backends.EventReset || len(events[0].Sandboxes) != releases {
				t.Fatalf("reset emitted %d events (first: %+v), want one reset of %d sandboxes", len(events), events, releases)
			}
			want := time.Duration(0)
			if typing {
				want = releases * time.Second / resetRate
			}
			if slept < want*9/10 || slept > want*11/10 {
				t.Errorf("the reset of %d releases slept %v, want about %v", releases, slept, want)
			}
		})
	}
}
