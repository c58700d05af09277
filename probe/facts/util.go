package facts

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"syscall"
)

func sprintf(format string, args ...any) string { return fmt.Sprintf(format, args...) }

// errName turns an error into a stable short class (EROFS, EACCES, ETIMEDOUT…) for evidence.
func errName(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		switch errno {
		case syscall.EROFS:
			return "EROFS"
		case syscall.EACCES:
			return "EACCES"
		case syscall.EPERM:
			return "EPERM"
		case syscall.ENOENT:
			return "ENOENT"
		case syscall.ECONNREFUSED:
			return "ECONNREFUSED"
		case syscall.ENETUNREACH:
			return "ENETUNREACH"
		case syscall.EHOSTUNREACH:
			return "EHOSTUNREACH"
		case syscall.ETIMEDOUT:
			return "ETIMEDOUT"
		case syscall.ENOSYS:
			return "ENOSYS"
		}
		return errno.Error()
	}
	if err == nil {
		return ""
	}
	return err.Error()
}

func sortedUnique(in []string) []string {
	sort.Strings(in)
	out := in[:0]
	for i, s := range in {
		if i == 0 || s != in[i-1] {
			out = append(out, s)
		}
	}
	return out
}

// fields splits a "Key:\tvalue" procfs file into a map.
func keyValues(s string) map[string]string {
	m := map[string]string{}
	for _, line := range strings.Split(s, "\n") {
		k, v, ok := strings.Cut(line, ":")
		if ok {
			m[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	return m
}
