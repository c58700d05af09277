// Package demos starts and removes rangekeeper's demo range: Inspect-style compose sandboxes on
// the local Docker Engine (one hardened, one weak, one with a scorer on the agent's network),
// built from a local static image with no registry.
package demos
