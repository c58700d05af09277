package proxmox

// ShellUnsupported is why Proxmox VMs get no interactive shell from rangekeeper: the QEMU guest
// agent runs one command at a time with captured output (no TTY, no stdin stream), and the
// serial/VNC consoles are the PVE host's, reached through its own tools.
const ShellUnsupported = "shell: the guest agent has no interactive terminal; use `qm terminal <vmid>` on the PVE node (serial console) or the web console (noVNC)"
