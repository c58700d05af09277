package pvesim

import (
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"
)

// state is the simulated cluster; every field is guarded by Server.mu.
type state struct {
	node    string
	vms     map[int]*vm
	pools   map[string]string // poolid -> comment; membership lives on the VM
	tasks   []*task
	byUPID  map[string]*task
	pid     uint32
	zones   map[string]map[string]any
	vnets   map[string]map[string]any
	subnets map[string]map[string]map[string]any // vnet -> subnet id -> subnet
	macSeq  int
}

func newState(node string) *state {
	return &state{
		node:    node,
		vms:     map[int]*vm{},
		pools:   map[string]string{},
		byUPID:  map[string]*task{},
		pid:     uint32(os.Getpid()) & 0xfffff,
		zones:   map[string]map[string]any{},
		vnets:   map[string]map[string]any{},
		subnets: map[string]map[string]map[string]any{},
	}
}

// vm is one QEMU guest: its config as PVE stores it (numbers for integers and booleans, strings
// for property strings), its run state, snapshots, firewall options and guest agent.
type vm struct {
	id      int
	conf    map[string]any
	running bool
	paused  bool
	started time.Time
	pool    string
	snaps   map[string]*snapshot
	fw      map[string]any
	agent   *Agent
}

type snapshot struct {
	name, desc string
	snaptime   int64
	vmstate    bool
	parent     string
	conf       map[string]any
	running    bool
	files      map[string][]byte // guest disk state, restored by rollback
}

func (v *vm) name() string {
	if n, ok := v.conf["name"].(string); ok && n != "" {
		return n
	}
	return fmt.Sprintf("VM %d", v.id)
}

func (v *vm) isTemplate() bool   { return truthy(v.conf["template"]) }
func (v *vm) protected() bool    { return truthy(v.conf["protection"]) }
func (v *vm) lock() string       { s, _ := v.conf["lock"].(string); return s }
func (v *vm) agentEnabled() bool { return agentOn(v.conf["agent"]) }

func truthy(x any) bool {
	switch v := x.(type) {
	case int:
		return v != 0
	case float64:
		return v != 0
	case string:
		return v == "1"
	case bool:
		return v
	}
	return false
}

// agentOn parses the agent property string: "1", "enabled=1,fstrim_cloned_disks=1", ...
func agentOn(x any) bool {
	s := fmt.Sprint(x)
	if x == nil || s == "" {
		return false
	}
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			if k == "1" {
				return true
			}
			continue
		}
		if k == "enabled" {
			return v == "1"
		}
	}
	return false
}

func (v *vm) digest() string {
	keys := make([]string, 0, len(v.conf))
	for k := range v.conf {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	h := sha1.New()
	for _, k := range keys {
		fmt.Fprintf(h, "%s: %v\n", k, v.conf[k])
	}
	return hex.EncodeToString(h.Sum(nil))
}

func cloneConf(m map[string]any) map[string]any { return maps.Clone(m) }

func cloneFiles(m map[string][]byte) map[string][]byte {
	out := make(map[string][]byte, len(m))
	for k, v := range m {
		out[k] = append([]byte(nil), v...)
	}
	return out
}

// maxmem is the config memory in bytes (memory is a property string "2048" or "current=2048").
func (v *vm) maxmem() int64 {
	s := strings.TrimPrefix(fmt.Sprint(v.conf["memory"]), "current=")
	var mb int64
	if _, err := fmt.Sscan(s, &mb); err != nil || mb == 0 {
		mb = 2048
	}
	return mb << 20
}

func (v *vm) cpus() int {
	n := 1
	if c, ok := v.conf["cores"].(int); ok && c > 0 {
		n = c
	}
	if s, ok := v.conf["sockets"].(int); ok && s > 0 {
		n *= s
	}
	return n
}

func (s *state) allocPID() uint32 {
	s.pid++
	return s.pid
}

// normalizeTags is GuestHelpers::get_unique_tags: lower-case, sorted, unique, ';'-joined.
func normalizeTags(raw string) (string, error) {
	seen := map[string]bool{}
	var out []string
	for _, t := range strings.FieldsFunc(raw, func(r rune) bool { return r == ';' || r == ',' || r == ' ' }) {
		t = strings.ToLower(t)
		if !tagRE.MatchString(t) {
			return "", paramErr(map[string]string{"tags": fmt.Sprintf("invalid format - invalid tag '%s'", t)})
		}
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	sort.Strings(out)
	return strings.Join(out, ";"), nil
}

func (s *state) newMAC() string {
	s.macSeq++
	return fmt.Sprintf("BC:24:11:%02X:%02X:%02X", (s.macSeq>>16)&0xff, (s.macSeq>>8)&0xff, s.macSeq&0xff)
}

// numericConfigKeys are config keys PVE types as boolean or integer: it stores and returns them as
// JSON numbers even when they arrived form-encoded as strings.
var numericConfigKeys = map[string]bool{
	"protection": true, "template": true, "onboot": true, "acpi": true, "kvm": true, "tablet": true,
	"numa": true, "localtime": true, "reboot": true, "freeze": true, "cores": true, "sockets": true,
	"vcpus": true, "cpuunits": true, "balloon": true, "shares": true, "enable": true, "dhcp": true,
	"ipfilter": true, "macfilter": true, "ndp": true, "radv": true, "snat": true, "isolate-ports": true,
}

// storeKey is storeValue plus the numeric conversion of boolean and integer keys.
func storeKey(key string, v any) any {
	if s, ok := v.(string); ok && numericConfigKeys[key] && intRE.MatchString(s) {
		n, _ := strconv.Atoi(s)
		return n
	}
	return storeValue(v)
}

// jsonNumber turns a decoded JSON value into what PVE stores: integers stay numbers, other
// numbers become strings (config "number" values come back as strings, e.g. cpulimit "1.5").
func storeValue(v any) any {
	switch x := v.(type) {
	case float64:
		if x == float64(int64(x)) {
			return int(x)
		}
		return fmt.Sprint(x)
	case bool:
		if x {
			return 1
		}
		return 0
	case json.Number:
		return x.String()
	}
	return v
}
