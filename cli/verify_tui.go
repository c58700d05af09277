package cli

import (
	"context"

	"github.com/rangekeeper/rangekeeper/action"
	"github.com/rangekeeper/rangekeeper/backends/docker"
	"github.com/rangekeeper/rangekeeper/config"
	"github.com/rangekeeper/rangekeeper/probe"
	"github.com/rangekeeper/rangekeeper/state"
	"github.com/rangekeeper/rangekeeper/verify"
	"github.com/rangekeeper/rangekeeper/verify/canary"
	"github.com/rangekeeper/rangekeeper/verify/dockerstage"
)

// workbenchVerify is the author's verify key for the local operator (verifyFor).
func workbenchVerify(f *factory, layer *action.Layer, db *state.DB, cfg *config.Config) func(context.Context, verify.Options) verify.Result {
	run := verifyFor(f, func() *action.Layer { return layer }, db, cfg)
	if run == nil {
		return nil
	}
	who := f.Identity()
	return func(ctx context.Context, o verify.Options) verify.Result { return run(ctx, who, o) }
}

// verifyFor is the author's verify key: the spec stood up on the first Docker engine of the
// config, as a task of the action layer layer() returns (journaled with who asked, refused
// read-only and by role, its probes through the layer), variables as the CLI takes them without
// flags (.env beside the spec, then the environment). nil when no Docker backend is configured.
func verifyFor(f *factory, layer func() *action.Layer, db *state.DB, cfg *config.Config) func(context.Context, action.Identity, verify.Options) verify.Result {
	bs, err := f.Backends()
	if err != nil {
		return nil
	}
	var b *docker.Backend
	for _, x := range bs {
		if d, ok := x.(*docker.Backend); ok {
			b = d
			break
		}
	}
	if b == nil {
		return nil
	}
	drv, err := dockerstage.New(dockerstage.Options{Backend: b, Canary: canary.Binary})
	if err != nil {
		return nil
	}
	return func(ctx context.Context, who action.Identity, o verify.Options) verify.Result {
		o.Targets = probe.TargetsFrom(cfg.Probe)
		env, err := verifyEnv(&verifyOptions{Spec: o.Spec})
		if err != nil {
			return verify.Result{Spec: o.As, Exit: verify.ExitBadInput, Outcome: "bad input", Reason: err.Error()}
		}
		o.Env = env
		if o.Root == "" {
			o.Root = lintRoot("", o.Spec) // the buffer's snapshot lies beside its file
		}
		l := layer()
		return verify.RunAction(ctx, l, who, db, o, verify.Deps{Driver: drv, Prober: verify.LayerProber(l, b, who)})
	}
}
