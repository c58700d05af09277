package logs

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/internal/tuitest"
)

// flood is a source producing rate lines a second (in 1 ms bursts) until ctx ends, with a
// needle planted once; lines are ~90 bytes like a chatty service's.
func flood(rate int, needleAt int) Source {
	return func(ctx context.Context) (backends.LogStream, error) {
		s := backends.NewChanStream(ctx)
		s.Go(func(ctx context.Context) error {
			tick := time.NewTicker(time.Millisecond)
			defer tick.Stop()
			start, sent := time.Now(), 0
			for {
				select {
				case <-ctx.Done():
					return nil
				case <-tick.C:
				}
				due := int(time.Since(start).Seconds() * float64(rate))
				for ; sent < due; sent++ {
					text := fmt.Sprintf("%s level=info msg=\"request served\" path=/api/v1/items/%d status=200 bytes=1234", time.Now().Format(time.RFC3339), sent)
					if sent == needleAt {
						text = "NEEDLE-PLANTED-MID-STREAM"
					}
					member := "default"
					if sent%2 == 1 {
						member = "web"
					}
					if !s.Send(backends.LogLine{Time: time.Now(), Member: member, Stream: backends.LogStdout, Text: text}) {
						return nil
					}
				}
			}
		})
		s.Start()
		return s, nil
	}
}

// BenchmarkKeyToFrameUnderFlood runs the screen the way the program does — one loop taking
// messages (the feed's batches and keys) in arrival order, Update then View for each — while
// 100,000 lines a second arrive, and measures each key from the moment it is queued to the end
// of the frame that shows it. Reported: p50/p99 key-to-frame (goal p99 < 50 ms), lines taken,
// lines held (must stay within the ring) and the heap in use after a GC.
func BenchmarkKeyToFrameUnderFlood(b *testing.B) {
	const rate, ringSize = 100_000, 10_000
	c := ctxFor(160, 50)
	m := New(Options{Title: "flood", Lines: ringSize, Source: flood(rate, rate/2)})
	defer m.Close()

	type queued struct {
		msg tea.Msg
		at  time.Time
		key bool
	}
	msgs := make(chan queued, 256)
	run := func(cmd tea.Cmd) { // the program runs commands on goroutines and queues their results
		if cmd == nil {
			return
		}
		go func() {
			if msg := cmd(); msg != nil {
				msgs <- queued{msg: msg, at: time.Now()}
			}
		}()
	}
	run(m.Open(c))
	keys := []string{"k", "j", "T", "w", "T", "w", "pgup", "G"}
	var lat []time.Duration
	b.ResetTimer()
	deadline := time.Now().Add(time.Duration(b.N) * time.Second) // b.N seconds of flood
	nextKey := time.Now().Add(10 * time.Millisecond)
	for i := 0; time.Now().Before(deadline); {
		var q queued
		select {
		case q = <-msgs:
		case <-time.After(time.Until(nextKey)):
			q = queued{msg: tuitest.Key(keys[i%len(keys)]), at: time.Now(), key: true}
			i++
			nextKey = time.Now().Add(10 * time.Millisecond)
		}
		run(m.Update(c, q.msg))
		_ = m.View(c)
		if q.key {
			lat = append(lat, time.Since(q.at))
		}
		if m.ring.Len() > m.ring.Cap() || m.feed.staging() > 2*ringSize {
			b.Fatalf("bound broken: ring %d/%d, staged %d", m.ring.Len(), m.ring.Cap(), m.feed.staging())
		}
	}
	b.StopTimer()
	slices.Sort(lat)
	pct := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) / 1000 }
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	b.ReportMetric(float64(m.ring.Total())/float64(b.N), "lines/s")
	b.ReportMetric(float64(m.ring.Len()), "held")
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(ms.HeapInuse)/(1<<20), "heap-MB")
	if pct(0.99) >= 50 {
		b.Errorf("key-to-frame p99 %.1f ms, goal < 50 ms", pct(0.99))
	}
}
