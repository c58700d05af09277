package docker

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"
)

// Snapshot records keep a member's environment as variable names and salted hashes, never
// values. The values stay where the engine already holds them: in the member's snapshot image,
// whose config the commit copied from the container. A revert takes each value from the image
// and checks it against its hash, so a record can tell a changed value without holding one.

// envVar is one recorded variable: its name and a salted hash of its value.
type envVar struct {
	Name string `json:"name"`
	Hash string `json:"hash"`
}

func newSalt() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func envHash(salt, name, value string) string {
	m := hmac.New(sha256.New, []byte(salt))
	m.Write([]byte(name + "=" + value))
	return hex.EncodeToString(m.Sum(nil))[:32]
}

// sealEnv turns "NAME=value" entries into names and salted hashes, in order.
func sealEnv(salt string, env []string) []envVar {
	out := make([]envVar, 0, len(env))
	for _, kv := range env {
		name, value, _ := strings.Cut(kv, "=")
		out = append(out, envVar{Name: name, Hash: envHash(salt, name, value)})
	}
	return out
}

// unsealEnv rebuilds the environment from the image's config: every recorded variable must be
// there with the value its hash names. Variables it cannot restore are returned by name.
func unsealEnv(salt string, vars []envVar, imageEnv []string) (env []string, missing []string) {
	have := map[string][]string{}
	for _, kv := range imageEnv {
		name, value, _ := strings.Cut(kv, "=")
		have[name] = append(have[name], value)
	}
	for _, v := range vars {
		found := false
		for _, value := range have[v.Name] {
			if hmac.Equal([]byte(envHash(salt, v.Name, value)), []byte(v.Hash)) {
				env, found = append(env, v.Name+"="+value), true
				break
			}
		}
		if !found {
			missing = append(missing, v.Name)
		}
	}
	sort.Strings(missing)
	return env, missing
}

func errMissingEnv(member string, names []string) error {
	return fmt.Errorf("the snapshot image of %s no longer holds the values of %s (rangekeeper keeps names and hashes, never values); "+
		"the snapshot cannot restore them", member, strings.Join(names, ", "))
}
