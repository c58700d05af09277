package facts

import (
	"strings"
	"testing"
)

// The probe parses files a hostile sandbox controls; no input may panic it.

func FuzzParseMountInfo(f *testing.F) {
	f.Add("1 0 0:50 / / rw,relatime - overlay overlay rw\n")
	f.Add("3 1 0:22 /docker.sock /var/run/docker.sock ro shared:1 master:2 - tmpfs tmpfs rw\n")
	f.Add("4 1 254:0 /a\\040b /c rw - ext4 /dev/vda rw\\")
	f.Fuzz(func(t *testing.T, s string) {
		list, _ := ParseMountInfo(s)
		for _, m := range list {
			_ = m.RW()
			_ = SocketKind(m.Mountpoint)
		}
	})
}

func FuzzJWTClaims(f *testing.F) {
	f.Add(testJWT)
	f.Add("a.b.c")
	f.Add("eyJ9.eyJrdWJlcm5ldGVzLmlvIjp7InNlcnZpY2VhY2NvdW50IjoxfX0.x")
	f.Fuzz(func(t *testing.T, tok string) {
		claims := JWTClaims(tok)
		parts := strings.Split(tok, ".")
		if len(parts) == 3 && len(parts[2]) > 8 {
			for _, v := range claims {
				if strings.Contains(v, parts[2]) {
					t.Fatalf("claims echo the signature: %v", claims)
				}
			}
		}
	})
}

func FuzzParseCapSet(f *testing.F) {
	f.Add("000001ffffffffff")
	f.Add("ffffffffffffffff")
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseCapSet(s)
		if err == nil && len(c.Names) > 64 {
			t.Fatalf("%d names from one mask", len(c.Names))
		}
	})
}
