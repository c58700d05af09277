package docker

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/client"

	"github.com/rangekeeper/rangekeeper/backends"
)

var _ backends.Copier = (*Backend)(nil)

// MaxCopyFromSize caps a file read out of a member, so a hostile sandbox cannot feed the operator's
// tool an unbounded file.
const MaxCopyFromSize = 256 << 20

// CopyTo implements backends.Copier: it writes data as one file at the absolute path p in a member
// through the Engine's archive API (a one-entry tar), with mode (0 means 0644). The parent
// directory must exist.
func (b *Backend) CopyTo(ctx context.Context, sandboxID, member, p string, data []byte, mode int64) error {
	if !path.IsAbs(p) || strings.HasSuffix(p, "/") {
		return fmt.Errorf("copy to %s: %q must be an absolute file path", sandboxID, p)
	}
	c, err := b.member(ctx, sandboxID, member)
	if err != nil {
		return err
	}
	if mode == 0 {
		mode = 0o644
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	if err := tw.WriteHeader(&tar.Header{Name: path.Base(p), Mode: mode & 0o7777, Size: int64(len(data)), Typeflag: tar.TypeReg}); err != nil {
		return err
	}
	if _, err := tw.Write(data); err != nil {
		return err
	}
	if err := tw.Close(); err != nil {
		return err
	}
	dir := path.Dir(p)
	_, err = b.cli.CopyToContainer(ctx, c.ID, client.CopyToContainerOptions{DestinationPath: dir, Content: &buf})
	if err != nil {
		return b.wrap(fmt.Errorf("copy to %s:%s: %w", containerName(c), p, explainCopyErr(err, dir)))
	}
	return nil
}

// CopyFrom implements backends.Copier: it reads one regular file from a member (following a
// symbolic link at p, as `docker cp` does). Directories are refused.
func (b *Backend) CopyFrom(ctx context.Context, sandboxID, member, p string) ([]byte, error) {
	if !path.IsAbs(p) {
		return nil, fmt.Errorf("copy from %s: %q must be an absolute path", sandboxID, p)
	}
	c, err := b.member(ctx, sandboxID, member)
	if err != nil {
		return nil, err
	}
	src := p
	for hops := 0; ; hops++ {
		data, link, err := b.copyFromOnce(ctx, c.ID, src)
		if err != nil {
			return nil, b.wrap(fmt.Errorf("copy from %s:%s: %w", containerName(c), p, err))
		}
		if link == "" {
			return data, nil
		}
		if hops == 8 {
			return nil, fmt.Errorf("copy from %s:%s: too many symbolic links", containerName(c), p)
		}
		if !path.IsAbs(link) {
			link = path.Join(path.Dir(src), link)
		}
		src = link
	}
}

// copyFromOnce fetches src's archive; a symlink yields its target instead of data.
func (b *Backend) copyFromOnce(ctx context.Context, id, src string) ([]byte, string, error) {
	res, err := b.cli.CopyFromContainer(ctx, id, client.CopyFromContainerOptions{SourcePath: src})
	if err != nil {
		return nil, "", explainCopyErr(err, src)
	}
	defer res.Content.Close()
	switch {
	case res.Stat.Mode.IsDir():
		return nil, "", fmt.Errorf("%s is a directory; only single files can be copied", src)
	case res.Stat.Mode&fs.ModeSymlink != 0:
		return nil, res.Stat.LinkTarget, nil
	case !res.Stat.Mode.IsRegular():
		return nil, "", fmt.Errorf("%s is not a regular file (%s)", src, res.Stat.Mode)
	case res.Stat.Size > MaxCopyFromSize:
		return nil, "", fmt.Errorf("%s is %d bytes, over the %d-byte limit", src, res.Stat.Size, MaxCopyFromSize)
	}
	tr := tar.NewReader(res.Content)
	if _, err := tr.Next(); err != nil {
		return nil, "", fmt.Errorf("read archive: %w", err)
	}
	data, err := io.ReadAll(io.LimitReader(tr, MaxCopyFromSize+1))
	if err != nil {
		return nil, "", fmt.Errorf("read archive: %w", err)
	}
	if len(data) > MaxCopyFromSize {
		return nil, "", fmt.Errorf("%s grew over the %d-byte limit while copying", src, MaxCopyFromSize)
	}
	return data, "", nil
}

// explainCopyErr turns the engine's archive errors into operator-facing reasons.
func explainCopyErr(err error, p string) error {
	msg := err.Error()
	switch {
	case cerrdefs.IsNotFound(err) || strings.Contains(msg, "No such container:path") || strings.Contains(msg, "Could not find the file"):
		return fmt.Errorf("%s does not exist in the member: %w", p, err)
	case strings.Contains(msg, "read-only"):
		return fmt.Errorf("the member's filesystem at %s is read-only (read_only rootfs or ro mount): %w", p, err)
	case strings.Contains(msg, "cannot overwrite"):
		return fmt.Errorf("a directory is in the way at %s: %w", p, err)
	}
	return err
}
