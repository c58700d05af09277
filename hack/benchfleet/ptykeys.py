#!/usr/bin/env python3
"""Key to frame without tmux: starts rangekeeper on a pseudo-terminal of its own (200x50) against
a held bench cluster (benchfleet -hold prints its kubeconfig), presses '?' a random 60-140 ms
after each answer (presses land at random against the 60 fps frames, as a person's do) and times
each write to the first output byte after it. A press is "loading" until the output first
contains FULL (e.g. 25000/25000, the table's count once every release is in); pressing goes on
5 s past that. Writes one line per press (time since start, ms, phase) to OUT and prints the
loading presses' quantiles. The tmux harness's own terminal path reached a p99 of 55-90 ms
under the same load; this driver has none of it.

Usage: ptykeys.py OUT KUBECONFIG CONTEXT FULL BIN [ARGS...]"""
import os, sys, pty, time, select, fcntl, termios, struct, random, signal, tempfile, shutil

out, KC, CONTEXT, FULL = sys.argv[1:5]
argv = sys.argv[5:]
FULLMARK = FULL.encode()
d = tempfile.mkdtemp(prefix="ptykeys-")
open(d + "/config.yaml", "w").write("kubernetes:\n  enabled: true\n  kubeconfig: %s\n  contexts: [%s]\n" % (KC, CONTEXT))
env = {"PATH": os.environ["PATH"], "HOME": d, "XDG_CONFIG_HOME": d + "/config", "XDG_STATE_HOME": d + "/state",
       "XDG_DATA_HOME": d + "/data", "XDG_CACHE_HOME": d + "/cache", "KUBECONFIG": KC, "TERM": "xterm-256color",
       "HTTP_PROXY": "http://127.0.0.1:9", "HTTPS_PROXY": "http://127.0.0.1:9", "NO_PROXY": "127.0.0.1,localhost,::1"}
argv = argv + ["--config", d + "/config.yaml", "--state", d + "/state.db"]
pid, fd = pty.fork()
if pid == 0:
    os.execve(argv[0], argv, env)
fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 200, 0, 0))
t0 = time.monotonic()
buf = b""; full_at = None; rows = []
def drain(timeout):
    global buf, full_at
    r, _, _ = select.select([fd], [], [], timeout)
    if not r: return False
    try: data = os.read(fd, 65536)
    except OSError: return None
    buf = (buf + data)[-4096:]
    if full_at is None and FULLMARK in buf: full_at = time.monotonic() - t0
    return True
# wait for the first frame
while time.monotonic() - t0 < 10:
    if drain(0.5): break
end = None
while True:
    now = time.monotonic() - t0
    if full_at is not None and end is None: end = now + 5  # a few presses past the load
    if end is not None and now > end: break
    if now > 60: break
    # quiet gap: swallow output for a random 60-140 ms
    gap_end = time.monotonic() + random.uniform(0.06, 0.14)
    while time.monotonic() < gap_end:
        drain(max(0, gap_end - time.monotonic()))
    k0 = time.monotonic()
    os.write(fd, b"?")
    got = None
    while time.monotonic() - k0 < 5:
        r = drain(5 - (time.monotonic() - k0))
        if r: got = time.monotonic(); break
        if r is None: break
    if got is None: break
    rows.append((k0 - t0, (got - k0) * 1000, "loading" if full_at is None else "full"))
os.write(fd, b"q")
time.sleep(2)
try: os.kill(pid, signal.SIGTERM)
except ProcessLookupError: pass
os.waitpid(pid, 0)
shutil.rmtree(d, ignore_errors=True)
with open(out, "w") as f:
    for t, ms, ph in rows: f.write("%.3f\t%.2f\t%s\n" % (t, ms, ph))
    f.write("# full_at %s\n" % full_at)
lo = sorted(ms for _, ms, ph in rows if ph == "loading")
if lo:
    q = lambda p: lo[min(len(lo)-1, max(0, int(-(-p*len(lo)//1))-1))]
    print("%s: loading n=%d p50 %.1f p90 %.1f p99 %.1f max %.1f, >50ms %d; full at %s s" % (out, len(lo), q(.5), q(.9), q(.99), lo[-1], sum(1 for x in lo if x > 50), full_at))
else:
    print(out, "no loading presses; full at", full_at)
