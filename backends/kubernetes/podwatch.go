package kubernetes

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/http"

	"google.golang.org/protobuf/encoding/protowire"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	watchapi "k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/rangekeeper/rangekeeper/internal/inputfirst"
)

// podListWatch lists and watches the sandbox pods of ns ("" for all). The watch (and with it the
// streamed initial list) makes each pod's cachedPod straight from its protobuf wire form
// (specs.decodePod): managedFields, env, probes, commands, conditions and IPs are never decoded,
// nor a spec already known. At 50,000 pods decoding whole pods was a third of the workbench's
// CPU while the table loaded, and most of the garbage the collector then marked. The
// list (used only when the server cannot stream) decodes whole pods; the informer's transform
// makes them the same cachedPods.
// While the operator presses keys (input, when set), the streamed initial list is paced
// (listPace).
func podListWatch(rc rest.Interface, ns, selector string, specs *specTable, input *inputfirst.Signal) *cache.ListWatch {
	req := func(opts *metav1.ListOptions) *rest.Request {
		opts.LabelSelector = selector
		return rc.Get().Namespace(ns).Resource("pods").VersionedParams(opts, scheme.ParameterCodec)
	}
	return &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			list := &corev1.PodList{}
			return list, req(&opts).Do(ctx).Into(list)
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watchapi.Interface, error) {
			opts.Watch = true
			body, err := req(&opts).SetHeader("Accept", protobufWatch).Stream(ctx)
			if err != nil {
				return nil, err
			}
			return watchapi.NewStreamWatcher(&podEvents{body: body, specs: specs, pace: newListPace(input)},
				apierrors.NewClientErrorReporter(http.StatusInternalServerError, "GET", "ClientWatchDecoding")), nil
		},
	}
}

// protobufWatch asks for the protobuf watch stream: length-prefixed frames, each a WatchEvent
// whose object is in the API machinery's envelope. Every API server serves core types so.
const protobufWatch = "application/vnd.kubernetes.protobuf;stream=watch"

// maxFrame bounds one watch frame: an object is at most ~1.5 MB in etcd; a corrupt length must
// not become an allocation of gigabytes.
const maxFrame = 16 << 20

// podEvents decodes a protobuf watch stream of pods into cachedPods (a watch.Decoder).
type podEvents struct {
	body  io.ReadCloser
	specs *specTable
	frame []byte // the current frame (reused)
	pace  listPace
}

func (d *podEvents) Decode() (watchapi.EventType, runtime.Object, error) {
	d.pace.step()
	var size [4]byte
	if _, err := io.ReadFull(d.body, size[:]); err != nil {
		return "", nil, err // io.EOF: the stream ended
	}
	n := binary.BigEndian.Uint32(size[:])
	if n > maxFrame {
		return "", nil, fmt.Errorf("pod watch: a frame of %d bytes", n)
	}
	if cap(d.frame) < int(n) {
		d.frame = make([]byte, n)
	}
	d.frame = d.frame[:n]
	if _, err := io.ReadFull(d.body, d.frame); err != nil {
		return "", nil, fmt.Errorf("pod watch: %w", noEOF(err))
	}
	typ, obj, err := d.decodeEvent(d.frame)
	if err != nil {
		return "", nil, fmt.Errorf("pod watch: %w", err)
	}
	if p, ok := obj.(*cachedPod); ok {
		d.pace.saw(typ, p.Annotations)
	}
	return typ, obj, nil
}

func (d *podEvents) Close() { d.body.Close() }

// noEOF: a stream that ends inside a frame is cut, not finished.
func noEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

// decodeEvent decodes one frame: a WatchEvent (type = 1, object = 2), its object in the
// envelope. A pod becomes a cachedPod; anything else (a Status with an ERROR event) is decoded
// by the client's scheme.
func (d *podEvents) decodeEvent(ev []byte) (watchapi.EventType, runtime.Object, error) {
	var typ string
	var object []byte
	err := eachField(ev, func(num protowire.Number, v []byte) {
		switch num {
		case 1:
			typ = string(v)
		case 2: // RawExtension{raw = 1}
			_ = eachField(v, func(num protowire.Number, raw []byte) {
				if num == 1 {
					object = raw
				}
			})
		}
	})
	if err != nil {
		return "", nil, fmt.Errorf("watch event: %w", err)
	}
	kind, raw, err := unwrapEnvelope(object)
	if err != nil {
		return "", nil, fmt.Errorf("%s event: %w", typ, err)
	}
	if kind != "Pod" {
		obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(object, nil, nil)
		if err != nil {
			return "", nil, fmt.Errorf("%s event: %w", typ, err)
		}
		return watchapi.EventType(typ), obj, nil
	}
	pod, err := d.specs.decodePod(raw, typ == string(watchapi.Bookmark))
	if err != nil {
		return "", nil, fmt.Errorf("%s event: pod: %w", typ, err)
	}
	return watchapi.EventType(typ), pod, nil
}

// envelopeMagic starts every protobuf-encoded object of the API machinery; a runtime.Unknown
// (typeMeta = 1 {apiVersion = 1, kind = 2}, raw = 2, contentEncoding = 3) follows.
var envelopeMagic = []byte{'k', '8', 's', 0}

// unwrapEnvelope returns the kind and the raw message of an enveloped object.
func unwrapEnvelope(b []byte) (kind string, raw []byte, err error) {
	if !bytes.HasPrefix(b, envelopeMagic) {
		return "", nil, errors.New("not a protobuf-encoded object")
	}
	var encoding string
	err = eachField(b[len(envelopeMagic):], func(num protowire.Number, v []byte) {
		switch num {
		case 1:
			_ = eachField(v, func(num protowire.Number, s []byte) {
				if num == 2 {
					kind = string(s)
				}
			})
		case 2:
			raw = v
		case 3:
			encoding = string(v)
		}
	})
	if err == nil && encoding != "" {
		err = fmt.Errorf("content encoding %q", encoding)
	}
	return kind, raw, err
}

// eachField calls f with each length-delimited field of the message b (other wire types are
// skipped: the envelope and the event hold none that matter).
func eachField(b []byte, f func(num protowire.Number, v []byte)) error {
	return walkFields(b, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
		if typ == protowire.BytesType {
			f(num, v)
		}
		return nil
	})
}
