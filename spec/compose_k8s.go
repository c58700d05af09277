package spec

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// A Compose file named as a k8s sandbox config (`("k8s", "compose.yaml")`) is converted by
// inspect_k8s_sandbox into agent-env values (inspect-sandboxes.md §3.8). It is linted as those
// values, with findings pointed back at the Compose keys they come from.

// composeK8sKeys are the service keys the converter maps or ignores; anything else is rejected
// by Inspect ("Unsupported key(s) in 'service'"). networks, volumes and ports are accepted here
// on the design inference that the chart has equivalents; the brief does not list them.
var composeK8sKeys = setOf("image", "build", "command", "entrypoint", "working_dir", "environment",
	"healthcheck", "mem_limit", "mem_reservation", "memswap_limit", "cpus", "deploy", "user",
	"security_opt", "network_mode", "runtime", "init", "expose", "networks", "volumes", "ports", "hostname")

// composeToValuesKey names the Compose key each converted values key comes from.
var composeToValuesKey = map[string]string{
	"image": "image", "command": "entrypoint", "args": "command", "workingDir": "working_dir",
	"env": "environment", "resources": "mem_limit", "securityContext": "user",
	"runtimeClassName": "runtime", "networkIsolated": "network_mode", "networks": "networks",
}

func parseComposeK8s(doc *document, opts Options) error {
	if err := parseCompose(doc, opts); err != nil {
		return err
	}
	view := newComposeView(doc.model, doc.root, opts)
	// The converter renames the x-default service (or else the first one) to "default".
	rename := map[string]string{}
	defaultSvc := ""
	if view.services["default"] != nil {
		defaultSvc = "default"
	} else {
		for _, n := range view.order {
			if b, _ := getBool(view.services[n], "x-default"); b {
				defaultSvc = n
			}
		}
		if defaultSvc == "" && len(view.order) > 0 {
			defaultSvc = view.order[0]
		}
	}
	values := map[string]any{}
	services := map[string]any{}
	for _, name := range view.order {
		svc := view.services[name]
		for _, k := range sortedKeys(svc) {
			if !composeK8sKeys[k] && !strings.HasPrefix(k, "x-") {
				pos := doc.position(svcPath(name, k))
				return &InputError{File: doc.name, Line: pos.Line, Column: pos.Column, Msg: fmt.Sprintf("service %q: key %q is not supported when Inspect converts Compose to k8s (it rejects the file)", name, k)}
			}
		}
		for i, o := range strList(svc["security_opt"]) {
			if !strings.HasPrefix(strings.ToLower(o), "seccomp") {
				pos := doc.position(svcPath(name, "security_opt", i))
				return &InputError{File: doc.name, Line: pos.Line, Column: pos.Column, Msg: fmt.Sprintf("service %q: security_opt %q is rejected by the k8s conversion (only seccomp is mapped)", name, o)}
			}
		}
		if nm := getString(svc, "network_mode"); nm != "" && nm != "none" && nm != "bridge" {
			pos := doc.position(svcPath(name, "network_mode"))
			return &InputError{File: doc.name, Line: pos.Line, Column: pos.Column, Msg: fmt.Sprintf("service %q: network_mode %q is rejected by the k8s conversion (only none and bridge)", name, nm)}
		}
		out := name
		if name == defaultSvc {
			out = "default"
		}
		rename[out] = name
		services[out] = convertService(svc)
	}
	values["services"] = services
	for _, ext := range []string{"x-inspect_k8s_sandbox", "x-k8s"} {
		x := getMap(doc.model, ext)
		if x == nil {
			continue
		}
		for from, to := range map[string]string{"allow_domains": "allowDomains", "allow_entities": "allowEntities", "service_account_name": "serviceAccountName", "automount_service_account_token": "automountServiceAccountToken"} {
			if v, ok := x[from]; ok {
				values[to] = v
			}
		}
	}
	if nets := getMap(doc.model, "networks"); len(nets) > 0 {
		conv := map[string]any{}
		for n := range nets {
			if n != "default" {
				conv[n] = map[string]any{}
			}
		}
		if len(conv) > 0 {
			values["networks"] = conv
		}
	}
	doc.model = values
	doc.remap = func(p Path) Path {
		// env[i] is the i-th environment key in sorted order (convertService builds it so).
		if len(p) >= 4 && p[0] == "services" && p[2] == "env" {
			orig := rename[p[1]]
			vars := envVars(view.services[orig]["environment"])
			if i, err := strconv.Atoi(p[3]); err == nil && i < len(vars) {
				return svcPath(orig, "environment", vars[i].key)
			}
		}
		return composeK8sSource(p, rename)
	}
	return nil
}

// convertService maps one Compose service to an agent-env service the way the converter does.
func convertService(svc map[string]any) map[string]any {
	out := map[string]any{"image": getString(svc, "image"), "dnsRecord": true}
	if v := strList(svc["entrypoint"]); len(v) > 0 {
		out["command"] = toAny(v)
	}
	if v := strList(svc["command"]); len(v) > 0 {
		out["args"] = toAny(v)
	}
	if wd := getString(svc, "working_dir"); wd != "" {
		out["workingDir"] = wd
	}
	if env := envVars(svc["environment"]); len(env) > 0 {
		var list []any
		for _, e := range env {
			list = append(list, map[string]any{"name": e.name, "value": e.value})
		}
		out["env"] = list
	}
	limits := map[string]any{}
	if m := svc["mem_limit"]; m != nil {
		limits["memory"] = m
	} else if m := get(svc, "deploy", "resources", "limits", "memory"); m != nil {
		limits["memory"] = m
	}
	if c := svc["cpus"]; c != nil {
		limits["cpu"] = c
	} else if c := get(svc, "deploy", "resources", "limits", "cpus"); c != nil {
		limits["cpu"] = c
	}
	if x := getMap(svc, "x-inspect_k8s_sandbox", "resources", "limits"); x != nil {
		for k, v := range x {
			limits[k] = v
		}
	}
	if len(limits) > 0 {
		out["resources"] = map[string]any{"limits": limits}
	}
	sc := map[string]any{}
	if u := getString(svc, "user"); u != "" {
		uid, _, _ := strings.Cut(u, ":")
		if n, err := strconv.Atoi(uid); err == nil {
			sc["runAsUser"] = n
			if n != 0 {
				sc["runAsNonRoot"] = true
			}
		}
	}
	for _, o := range strList(svc["security_opt"]) {
		if v, ok := strings.CutPrefix(strings.ToLower(o), "seccomp"); ok {
			v = strings.TrimLeft(v, ":=")
			if v == "unconfined" {
				sc["seccompProfile"] = map[string]any{"type": "Unconfined"}
			} else {
				sc["seccompProfile"] = map[string]any{"type": "Localhost", "localhostProfile": v}
			}
		}
	}
	out["securityContext"] = sc
	if rt := getString(svc, "runtime"); rt != "" {
		out["runtimeClassName"] = rt
	}
	if getString(svc, "network_mode") == "none" {
		out["networkIsolated"] = true
	}
	if nets := getMap(svc, "networks"); len(nets) > 0 {
		names := sortedKeys(nets)
		sort.Strings(names)
		out["networks"] = toAny(names)
	}
	return out
}

func toAny(xs []string) []any {
	out := make([]any, len(xs))
	for i, x := range xs {
		out[i] = x
	}
	return out
}

// composeK8sSource maps a values path back to the Compose key it was converted from.
func composeK8sSource(p Path, rename map[string]string) Path {
	if len(p) == 0 {
		return p
	}
	switch p[0] {
	case "allowDomains", "allowEntities", "serviceAccountName", "automountServiceAccountToken":
		return P("x-inspect_k8s_sandbox")
	case "services":
		if len(p) < 2 {
			return p
		}
		out := P("services", rename[p[1]])
		if len(p) > 2 {
			if src, ok := composeToValuesKey[p[2]]; ok {
				out = append(out, src)
			}
		}
		return out
	}
	return p
}
