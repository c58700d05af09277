// Package docker is the Docker Engine backend: it discovers compose projects as sandboxes from
// the com.docker.compose.* labels, keeps them live from the Engine's event stream, and offers
// snapshot, revert, teardown, exec and copy on them.
package docker
