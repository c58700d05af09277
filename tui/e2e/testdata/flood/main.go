// Command flood prints lines at a fixed rate for a while, with one needle planted halfway, to
// test log readers under load: flood <lines/s> <seconds>. Odd lines go to stderr.
package main

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"time"
)

func main() {
	rate, _ := strconv.Atoi(os.Args[1])
	secs, _ := strconv.Atoi(os.Args[2])
	out, errw := bufio.NewWriterSize(os.Stdout, 1<<16), bufio.NewWriterSize(os.Stderr, 1<<16)
	total, start := rate*secs, time.Now()
	for i := 0; i < total; {
		due := min(int(time.Since(start).Seconds()*float64(rate)), total)
		for ; i < due; i++ {
			w := out
			if i%2 == 1 {
				w = errw
			}
			if i == total/2 {
				fmt.Fprintf(w, "NEEDLE-PLANTED-MID-STREAM %d\n", i)
				continue
			}
			fmt.Fprintf(w, "level=info msg=\"request served\" path=/api/v1/items/%d status=200 bytes=1234\n", i)
		}
		out.Flush()
		errw.Flush()
		time.Sleep(time.Millisecond)
	}
	out.Flush()
	errw.Flush()
	time.Sleep(time.Hour)
}
