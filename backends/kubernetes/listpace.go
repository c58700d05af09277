package kubernetes

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	watchapi "k8s.io/apimachinery/pkg/watch"

	"github.com/rangekeeper/rangekeeper/internal/inputfirst"
)

// listPace paces a watch's streamed initial list while the operator presses keys
// (internal/inputfirst): the API server sends the list only as fast as it is read, so at 50,000
// pods (and as many policies after them) the machine's cores go to the keys first. From the
// end-of-initial-events bookmark on, live events pass unpaced. The zero value never paces.
type listPace struct {
	pacer  inputfirst.Pacer // without a Signal it never waits
	listed bool             // the initial events have ended
}

// newListPace paces by input (nil: never).
func newListPace(input *inputfirst.Signal) listPace {
	return listPace{pacer: inputfirst.Pacer{Signal: input}}
}

// step comes before each event is read.
func (l *listPace) step() {
	if !l.listed {
		l.pacer.Step()
	}
}

// saw notes an event read; the bookmark that ends the initial events ends the pace.
func (l *listPace) saw(typ watchapi.EventType, annotations map[string]string) {
	if typ == watchapi.Bookmark && annotations[metav1.InitialEventsAnnotationKey] == "true" {
		l.listed = true
	}
}
