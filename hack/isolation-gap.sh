#!/bin/sh
# isolation-gap.sh: shows the Docker 20.10 isolation gap verify.confirmEgress guards against.
# A container on an internal network dials a port published on another bridge's gateway, 150
# times at once in a loop; on its own no connect succeeds. While bridge networks are created
# and removed (what any other process on the engine may do), libnetwork deletes and re-inserts
# FORWARD's jump to DOCKER-ISOLATION-STAGE-1, and connects opened in between succeed (the SYN is
# accepted by the DOCKER chain and the SYN-ACK returns before the jump is back). Everything it
# creates carries dev.rangekeeper.test=1 and is removed on exit. Needs the docker CLI and a
# static busybox (Debian's busybox-static) at /bin/busybox. Traffic stays on the engine's bridges.
set -eu
L="--label dev.rangekeeper.test=1 --label dev.rangekeeper.test.run=isolation-gap"
N=${CHURN:-40}
dir=$(mktemp -d)
cleanup() {
	docker rm -f rkgap-agent rkgap-canary >/dev/null 2>&1 || true
	for i in $(seq 1 "$N"); do docker network rm "rkgap-churn-$i" >/dev/null 2>&1 || true; done
	docker network rm rkgap-int rkgap-out >/dev/null 2>&1 || true
	docker rmi rangekeeper-test/isolation-gap:1 >/dev/null 2>&1 || true
	rm -rf "$dir"
}
trap cleanup EXIT INT TERM
cp /bin/busybox "$dir/busybox"
printf 'FROM scratch\nCOPY busybox /bin/busybox\nLABEL dev.rangekeeper.test=1\n' >"$dir/Dockerfile"
docker build -q -t rangekeeper-test/isolation-gap:1 "$dir" >/dev/null
docker network create $L rkgap-out >/dev/null
docker network create $L --internal rkgap-int >/dev/null
gw=$(docker network inspect rkgap-out -f '{{(index .IPAM.Config 0).Gateway}}')
docker run -d $L --name rkgap-canary --network rkgap-out -p "$gw::8080" rangekeeper-test/isolation-gap:1 \
	/bin/busybox httpd -f -p 8080 >/dev/null
sleep 1
port=$(docker port rkgap-canary 8080/tcp | head -1 | sed 's/.*://')
docker run -d $L --name rkgap-agent --network rkgap-int rangekeeper-test/isolation-gap:1 /bin/busybox sh -c \
	"for i in \$(/bin/busybox seq 1 150); do (while true; do /bin/busybox nc -w 1 $gw $port </dev/null >/dev/null 2>&1 && echo CONNECTED; done) & /bin/busybox usleep 7000; done; wait" >/dev/null
sleep 15
before=$(docker logs rkgap-agent 2>&1 | grep -c CONNECTED || true)
echo "internal network → $gw:$port, 15 s without network changes: $before connect(s)"
for i in $(seq 1 "$N"); do
	docker network create $L "rkgap-churn-$i" >/dev/null
	docker network rm "rkgap-churn-$i" >/dev/null
done
sleep 3
after=$(docker logs rkgap-agent 2>&1 | grep -c CONNECTED || true)
echo "while $N bridge networks were created and removed: $((after - before)) connect(s)"
