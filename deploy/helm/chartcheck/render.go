package chartcheck

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/lint/support"
	"helm.sh/helm/v3/pkg/releaseutil"
)

// Release names the release a chart is rendered as.
type Release struct {
	Name, Namespace string
	// KubeVersion is the cluster's version, e.g. "v1.30.0": templates
	// may depend on it (.Capabilities.KubeVersion).
	KubeVersion string
}

// Manifest is one rendered object's YAML and the template it came from.
type Manifest struct {
	Source string
	YAML   string
	// Hook is the object's helm.sh/hook annotation: empty for the
	// release's own objects, e.g. "pre-install,pre-upgrade" for hooks.
	Hook string
}

// Lint runs Helm's linter on the chart in dir with values over its
// defaults, strictly: a warning fails as an error does.
func Lint(dir string, values map[string]any, rel Release) error {
	kube, err := chartutil.ParseKubeVersion(rel.KubeVersion)
	if err != nil {
		return err
	}
	lint := action.NewLint()
	lint.Strict = true
	lint.Namespace = rel.Namespace
	lint.KubeVersion = kube
	result := lint.Run([]string{dir}, values)
	var errs []error
	for _, msg := range result.Messages {
		if msg.Severity > support.InfoSev {
			errs = append(errs, fmt.Errorf("helm lint: %s", msg))
		}
	}
	if result.TotalChartsLinted == 0 {
		errs = append(errs, result.Errors...) // not a chart at all
	}
	return errors.Join(errs...)
}

// Render renders the chart in dir with values over its defaults, as
// `helm install --dry-run` does without a cluster, and returns every
// object it would create: the release's and its hooks'.
func Render(dir string, values map[string]any, rel Release) ([]Manifest, error) {
	chart, err := loader.Load(dir)
	if err != nil {
		return nil, err
	}
	kube, err := chartutil.ParseKubeVersion(rel.KubeVersion)
	if err != nil {
		return nil, err
	}
	install := action.NewInstall(&action.Configuration{Log: func(string, ...any) {}})
	install.DryRun = true
	install.ClientOnly = true
	install.ReleaseName = rel.Name
	install.Namespace = rel.Namespace
	install.KubeVersion = kube
	release, err := install.Run(chart, values)
	if err != nil {
		return nil, fmt.Errorf("render: %w", err)
	}
	var out []Manifest
	for _, m := range releaseutil.SplitManifests(release.Manifest) {
		if strings.TrimSpace(m) != "" {
			out = append(out, Manifest{Source: sourceOf(m), YAML: m})
		}
	}
	for _, h := range release.Hooks {
		events := make([]string, len(h.Events))
		for i, e := range h.Events {
			events[i] = string(e)
		}
		out = append(out, Manifest{Source: h.Path, YAML: h.Manifest, Hook: strings.Join(events, ",")})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Source < out[j].Source })
	return out, nil
}

// sourceOf reads the "# Source: parley/templates/x.yaml" line Helm puts
// above each rendered object.
func sourceOf(manifest string) string {
	for _, line := range strings.Split(manifest, "\n") {
		if s, ok := strings.CutPrefix(line, "# Source: "); ok {
			return s
		}
	}
	return "?"
}
