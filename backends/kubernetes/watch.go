package kubernetes

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/internal/inputfirst"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/tools/cache"
)

var (
	secretsGVR = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	ciliumGVR  = schema.GroupVersionResource{Group: "cilium.io", Version: "v2", Resource: "ciliumnetworkpolicies"}
)

const (
	byRelease = "release"             // informer index: "<namespace>/<release>"
	debounce  = 50 * time.Millisecond // coalesces bursts (a reset touches every pod of a release)
)

// releaseKeyOfPod indexes a pod by its release.
func releaseKeyOfPod(obj any) ([]string, error) {
	p, ok := obj.(*cachedPod)
	if !ok || p.labels.get(LabelInstance) == "" {
		return nil, nil
	}
	return []string{p.Namespace + "/" + p.labels.get(LabelInstance)}, nil
}

// releaseKeyOfRecord indexes a Helm release Secret (labels name=<release>, owner=helm).
func releaseKeyOfRecord(obj any) ([]string, error) {
	m, err := meta.Accessor(obj)
	if err != nil || m.GetLabels()["name"] == "" {
		return nil, nil
	}
	return []string{m.GetNamespace() + "/" + m.GetLabels()["name"]}, nil
}

// releaseKeyOfPolicy indexes a CiliumNetworkPolicy by the release its endpointSelector picks.
func releaseKeyOfPolicy(obj any) ([]string, error) {
	p, ok := obj.(*cachedPolicy)
	if !ok || p.release == "" {
		return nil, nil
	}
	return []string{p.Namespace + "/" + p.release}, nil
}

// watcher turns informer events into backends.Events.
type watcher struct {
	b        *Backend
	emit     func(backends.Event)
	cancel   context.CancelCauseFunc
	pods     []cache.SharedIndexInformer
	records  []cache.SharedIndexInformer
	policies []cache.SharedIndexInformer
	cilium   bool
	// policiesSynced is false until the policy informers have listed: the fleet is emitted
	// before that (pods and records are what the table shows) with its network posture pending.
	policiesSynced bool

	heard atomic.Int64 // when the last informer event arrived (Unix ns)
	// listed is set once the first reset is out: the consumer's first event is the fleet, so
	// pod activity seen while the informers were still listing (a pod turning Running) is not
	// sent; the reset carries the state it led to.
	listed atomic.Bool

	mu    sync.Mutex
	dirty map[string]struct{}
	kick  chan struct{}

	emitted map[string]bool // release keys the consumer currently has

	specs *specTable // the pod specs of this watch, interned (podcache.go)
	// resetPace paces a reset's building of sandboxes while the operator types: at 50,000 pods
	// the reset after the list is ~0.7 s of CPU in one burst, which kept keys from a core.
	resetPace inputfirst.Pacer
}

// resetRate is how many sandboxes a reset builds a second while the operator types: 25,000
// releases in 2.5 s, at about a quarter of a core.
const resetRate = 10_000

// Watch lists the releases with informers (list + watch), emits one EventReset, then one
// EventUpsert or EventRemove per changed release. The first reset comes as soon as pods and
// release records have listed; the CiliumNetworkPolicies (JSON, and as many as releases) list
// after them, so with Cilium the first reset's sandboxes carry PosturePending and a second
// reset follows once the policies have listed. A dropped watch is resumed (or re-listed) by the
// informers; when the API server itself is unreachable or RBAC refuses, Watch returns the error
// and the supervisor calls it again, which re-lists from scratch.
func (b *Backend) Watch(ctx context.Context, emit func(backends.Event)) error {
	helmRecords, err := b.preflight(ctx)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	w := &watcher{b: b, emit: emit, cancel: cancel, dirty: map[string]struct{}{}, kick: make(chan struct{}, 1), emitted: map[string]bool{},
		specs:     newSpecTable(PostureOptions{RuntimePolicy: b.policy, RuntimeClasses: b.runtimeClasses(ctx)}),
		resetPace: inputfirst.Pacer{Signal: b.input, Rate: resetRate}} // no input signal: never waits
	w.cilium = b.hasCilium(ctx)
	b.refreshSnapshotCapability(ctx) // so Unsupported, called by the UI, never waits

	var synced, policiesSynced []cache.DoneChecker
	var startPolicies []func()
	for _, ns := range b.listNamespaces() {
		// No namespace index (the informer factory's default): nothing looks pods up by
		// namespace, and each of 50,000 pods would be indexed twice. prepare adds byRelease.
		// The watch's objects are cachedPods (podListWatch); the reflector drops any of another type.
		pi := cache.NewSharedIndexInformer(podListWatch(b.cs.CoreV1().RESTClient(), ns, LabelService, w.specs, b.input), &cachedPod{}, 0, cache.Indexers{})
		ok, err := w.prepare(pi, w.specs.transform, releaseKeyOfPod)
		if err != nil {
			return err
		}
		w.pods = append(w.pods, pi)
		synced = append(synced, ok)
		if err := w.watchPodActivity(pi); err != nil { // phase changes, restarts as Activity
			return err
		}
		go pi.RunWithContext(ctx)

		if helmRecords {
			mf := metadatainformer.NewFilteredSharedInformerFactory(b.md, 0, ns,
				func(o *metav1.ListOptions) { o.LabelSelector = helmOwnerLabel + "=helm" })
			si := mf.ForResource(secretsGVR).Informer()
			ok, err := w.prepare(si, w.specs.slimRecord, releaseKeyOfRecord)
			if err != nil {
				return err
			}
			w.records = append(w.records, si)
			synced = append(synced, ok)
			mf.Start(ctx.Done())
		}
		if w.cilium {
			ci := cache.NewSharedIndexInformer(policyListWatch(b.cs.CoreV1().RESTClient(), ns, b.input), &cachedPolicy{}, 0, cache.Indexers{})
			ok, err := w.prepare(ci, w.specs.cachePolicy, releaseKeyOfPolicy)
			if err != nil {
				return err
			}
			w.policies = append(w.policies, ci)
			policiesSynced = append(policiesSynced, ok)
			startPolicies = append(startPolicies, func() { go ci.RunWithContext(ctx) })
		}
	}
	if !allDone(ctx, synced) {
		return w.result(ctx)
	}
	// The policies list only now: listed beside the pods, their JSON took half the CPU (ours and
	// the API server's) the table waited for; the table comes first, its network posture pending.
	for _, start := range startPolicies {
		start()
	}
	var policiesDone chan struct{}
	w.policiesSynced = len(policiesSynced) == 0
	if !w.policiesSynced {
		policiesDone = make(chan struct{})
		go func() {
			if allDone(ctx, policiesSynced) {
				close(policiesDone)
			}
		}()
	}
	w.reset()
	go w.heartbeat(ctx)
	for {
		select {
		case <-ctx.Done():
			return w.result(ctx)
		case <-policiesDone:
			w.policiesSynced, policiesDone = true, nil
			w.reset()
			continue
		case <-w.kick:
		}
		select { // let a burst settle so each release is rebuilt once
		case <-ctx.Done():
			return w.result(ctx)
		case <-time.After(debounce):
		}
		for _, key := range w.takeDirty() {
			w.update(key)
		}
	}
}

// allDone waits until every checker is done (an informer's handler has seen its whole initial
// list: a channel, so the reset follows at once rather than at client-go's next 100 ms poll);
// false when ctx ends first.
func allDone(ctx context.Context, checkers []cache.DoneChecker) bool {
	for _, c := range checkers {
		select {
		case <-ctx.Done():
			return false
		case <-c.Done():
		}
	}
	return true
}

// result is nil when the caller cancelled, else the error that ended the watch.
func (w *watcher) result(ctx context.Context) error {
	if err := context.Cause(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}

// prepare wires an informer before it starts: a transform, the release index, the event
// handler and the watch-error handler. It returns the handler's sync check.
func (w *watcher) prepare(inf cache.SharedIndexInformer, slim cache.TransformFunc, key cache.IndexFunc) (cache.DoneChecker, error) {
	if err := inf.SetTransform(slim); err != nil {
		return nil, err
	}
	if err := inf.AddIndexers(cache.Indexers{byRelease: key}); err != nil {
		return nil, err
	}
	if err := inf.SetWatchErrorHandlerWithContext(w.onWatchError); err != nil {
		return nil, err
	}
	mark := func(obj any) {
		w.heard.Store(time.Now().UnixNano())
		if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = d.Obj
		}
		keys, _ := key(obj)
		w.markDirty(keys...)
	}
	reg, err := inf.AddEventHandler(cache.ResourceEventHandlerDetailedFuncs{
		// An object of the informer's initial list marks nothing: the reset that follows the
		// list carries it (the policies list after the first reset, and their own reset follows).
		AddFunc: func(obj any, initial bool) {
			if initial {
				w.heard.Store(time.Now().UnixNano())
				return
			}
			mark(obj)
		},
		UpdateFunc: func(old, cur any) { mark(old); mark(cur) },
		DeleteFunc: mark,
	})
	if err != nil {
		return nil, err
	}
	// The registration has synced once the handler has seen every listed object.
	return reg.HasSyncedChecker(), nil
}

// onWatchError decides between "the informer will recover" (a dropped or expired watch) and
// "the connection is lost" (end Watch so the supervisor reconnects and re-lists).
func (w *watcher) onWatchError(ctx context.Context, _ *cache.Reflector, err error) {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || apierrors.IsResourceExpired(err) || apierrors.IsGone(err) {
		return
	}
	if apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err) {
		w.cancel(w.b.explainAPIError("watch", "pods", "", err))
		return
	}
	if perr := w.b.ping(ctx); perr != nil {
		w.cancel(fmt.Errorf("%s: API server unreachable: %w", w.b.Name(), err))
	}
}

// heartbeat ends Watch after two failed health checks in a row: a reflector retries a refused
// connection forever without telling its error handler. An event received since the last
// check proves the server alive, so a busy cluster is never pinged; an idle one is, once per
// interval.
func (w *watcher) heartbeat(ctx context.Context) {
	t := time.NewTicker(w.b.health)
	defer t.Stop()
	failures := 0
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if time.Since(time.Unix(0, w.heard.Load())) < w.b.health {
			failures = 0
			continue
		}
		err := w.b.ping(ctx)
		if err == nil {
			failures = 0
			continue
		}
		if failures++; failures >= 2 && ctx.Err() == nil {
			w.cancel(fmt.Errorf("%s: API server unreachable: %w", w.b.Name(), err))
			return
		}
	}
}

// ping asks the API server for its version, the cheapest authenticated round trip.
func (b *Backend) ping(ctx context.Context) error {
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	return b.cs.Discovery().RESTClient().Get().AbsPath("/version").Do(pctx).Error()
}

func (w *watcher) markDirty(keys ...string) {
	if len(keys) == 0 {
		return
	}
	w.mu.Lock()
	for _, k := range keys {
		w.dirty[k] = struct{}{}
	}
	w.mu.Unlock()
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

func (w *watcher) takeDirty() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	keys := make([]string, 0, len(w.dirty))
	for k := range w.dirty {
		keys = append(keys, k)
	}
	clear(w.dirty)
	sort.Strings(keys)
	return keys
}

// reset emits the whole fleet. Dirty marks are cleared first: an event that lands while the
// fleet is built marks its release again and is re-sent as an (idempotent) upsert.
func (w *watcher) reset() {
	w.takeDirty()
	keys := map[string]struct{}{}
	for _, inf := range w.pods {
		for _, k := range inf.GetIndexer().ListIndexFuncValues(byRelease) {
			keys[k] = struct{}{}
		}
	}
	fleet := make([]backends.Sandbox, 0, len(keys))
	for k := range keys {
		w.resetPace.Step()
		if sb, ok := w.build(k); ok {
			fleet = append(fleet, sb)
			w.emitted[k] = true
		}
	}
	sort.Slice(fleet, func(i, j int) bool { return fleet[i].ID < fleet[j].ID })
	w.emit(backends.Event{Type: backends.EventReset, Sandboxes: fleet})
	w.listed.Store(true)
}

func (w *watcher) update(key string) {
	sb, ok := w.build(key)
	switch {
	case ok:
		w.emitted[key] = true
		w.emit(backends.Event{Type: backends.EventUpsert, Sandbox: sb})
	case w.emitted[key]:
		delete(w.emitted, key)
		ns, rel, _ := strings.Cut(key, "/")
		w.emit(backends.Event{Type: backends.EventRemove, ID: w.b.sandboxID(ns, rel)})
	}
}

// build makes the sandbox of one release from the caches; false when it has no pods left.
func (w *watcher) build(key string) (backends.Sandbox, bool) {
	var pods []*cachedPod
	for _, inf := range w.pods {
		objs, _ := inf.GetIndexer().ByIndex(byRelease, key)
		for _, o := range objs {
			if p, ok := o.(*cachedPod); ok {
				pods = append(pods, p) // read-only: buildSandbox never mutates a cached pod
			}
		}
	}
	if len(pods) == 0 {
		return backends.Sandbox{}, false
	}
	var rec *releaseRecord
	var recs []*metav1.PartialObjectMetadata
	for _, inf := range w.records {
		objs, _ := inf.GetIndexer().ByIndex(byRelease, key)
		for _, o := range objs {
			if m, ok := o.(*metav1.PartialObjectMetadata); ok {
				recs = append(recs, m)
			}
		}
	}
	if r, ok := latestRecord(recs); ok {
		rec = &r
	}
	var pols []*cachedPolicy
	for _, inf := range w.policies {
		objs, _ := inf.GetIndexer().ByIndex(byRelease, key)
		for _, o := range objs {
			if p, ok := o.(*cachedPolicy); ok {
				pols = append(pols, p)
			}
		}
	}
	ns, rel, _ := strings.Cut(key, "/")
	if w.cilium && !w.policiesSynced {
		sb := w.b.buildSandbox(ns, rel, pods, rec, nil, false)
		sb.PosturePending = "network posture: CiliumNetworkPolicies still loading"
		return sb, true
	}
	return w.b.buildSandbox(ns, rel, pods, rec, pols, w.cilium), true
}

// hasCilium reports whether the cluster serves CiliumNetworkPolicies that we may list.
func (b *Backend) hasCilium(ctx context.Context) bool {
	if _, err := b.cs.Discovery().ServerResourcesForGroupVersion(ciliumGVR.GroupVersion().String()); err != nil {
		return false
	}
	for _, ns := range b.listNamespaces() {
		if _, err := b.dyn.Resource(ciliumGVR).Namespace(ns).List(ctx, metav1.ListOptions{Limit: 1}); err != nil {
			return false
		}
	}
	return true
}

// runtimeClasses lists the RuntimeClass handlers the cluster offers, so K8S-H18 is graded by
// what the cluster can actually run; nil when they cannot be listed (RBAC, an old API), which
// the rule treats as unknown rather than as "none offered".
func (b *Backend) runtimeClasses(ctx context.Context) []string {
	list, err := b.cs.NodeV1().RuntimeClasses().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil
	}
	out := make([]string, 0, 2*len(list.Items))
	for _, rc := range list.Items {
		out = append(out, rc.Name, rc.Handler) // either names the runtime ("gvisor", "runsc")
	}
	return out
}
