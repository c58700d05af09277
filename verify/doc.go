// Package verify answers, before an eval runs, whether a sandbox spec holds once it is stood up
// for real: it lints the spec, stands it up through a backend Driver under a unique, labelled
// project, waits for it, runs the escape probe in the agent (and optionally every service),
// runs active checks against canaries it owns — outside the sandbox's networks, on the host
// side of its bridges, in its DNS path and inside the scorer — compares the measured T.H.N
// profile with the expected one and always tears everything down.
//
// The backend-specific work sits behind Driver/Session (verify/dockerstage for Docker Compose),
// the probe behind Prober and storage behind Recorder, so the CLI, the workbench and tests plug
// in their own. Result carries exit-code semantics and is rendered by verify/render.
package verify
