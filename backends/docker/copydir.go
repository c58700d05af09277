package docker

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"path"
	"strings"

	"github.com/moby/moby/client"
)

// CopyToNewDir writes data as dir/name through the Engine's archive API, creating dir in the
// same archive (mode 0711: the member's user may run the file but not list the directory). The
// escape probe then needs neither a shell nor an existing /tmp, only a writable parent.
func (b *Backend) CopyToNewDir(ctx context.Context, sandboxID, member, dir, name string, data []byte, mode int64) error {
	if !path.IsAbs(dir) || dir == "/" || strings.Contains(name, "/") || name == "" {
		return fmt.Errorf("copy to %s: want an absolute new directory and a file name, got %q and %q", sandboxID, dir, name)
	}
	c, err := b.member(ctx, sandboxID, member)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	base := path.Base(dir)
	if err := tw.WriteHeader(&tar.Header{Name: base + "/", Mode: 0o711, Typeflag: tar.TypeDir}); err != nil {
		return err
	}
	if err := tw.WriteHeader(&tar.Header{Name: base + "/" + name, Mode: mode & 0o7777, Size: int64(len(data)), Typeflag: tar.TypeReg}); err != nil {
		return err
	}
	if _, err := tw.Write(data); err != nil {
		return err
	}
	if err := tw.Close(); err != nil {
		return err
	}
	parent := path.Dir(dir)
	if _, err := b.cli.CopyToContainer(ctx, c.ID, client.CopyToContainerOptions{DestinationPath: parent, Content: &buf}); err != nil {
		return b.wrap(fmt.Errorf("copy to %s:%s: %w", containerName(c), dir, explainCopyErr(err, parent)))
	}
	return nil
}

// MemberWorkDir is a member's configured working directory ("" when the image sets none).
func (b *Backend) MemberWorkDir(ctx context.Context, sandboxID, member string) (string, error) {
	c, err := b.member(ctx, sandboxID, member)
	if err != nil {
		return "", err
	}
	res, err := b.cli.ContainerInspect(ctx, c.ID, client.ContainerInspectOptions{})
	if err != nil {
		return "", b.wrap(err)
	}
	if res.Container.Config == nil {
		return "", nil
	}
	return res.Container.Config.WorkingDir, nil
}
