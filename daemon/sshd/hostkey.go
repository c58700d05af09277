package sshd

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	gossh "golang.org/x/crypto/ssh"
)

// HostKey loads the ed25519 host key at path, creating it (0600, directory 0700) on first
// start; it returns the PEM and the public key's SHA256 fingerprint.
func HostKey(path string) ([]byte, string, error) {
	raw, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		raw, err = newHostKey(path)
	}
	if err != nil {
		return nil, "", fmt.Errorf("ssh host key %s: %w", path, err)
	}
	signer, err := gossh.ParsePrivateKey(raw)
	if err != nil {
		return nil, "", fmt.Errorf("ssh host key %s: %w", path, err)
	}
	return raw, gossh.FingerprintSHA256(signer.PublicKey()), nil
}

func newHostKey(path string) ([]byte, error) {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	block, err := gossh.MarshalPrivateKey(priv, "rangekeeper host key")
	if err != nil {
		return nil, err
	}
	raw := pem.EncodeToMemory(block)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, err
	}
	if _, err := f.Write(raw); err != nil {
		f.Close()
		return nil, err
	}
	return raw, f.Close()
}
