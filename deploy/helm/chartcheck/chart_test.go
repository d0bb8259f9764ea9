package chartcheck

import (
	"fmt"
	"io"
	"io/fs"
	"log"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	"helm.sh/helm/v3/pkg/chartutil"
)

const chartDir = "../parley"

// release is how the tests install the chart: Kubernetes 1.30, the
// oldest release with the pre-stop sleep the chart uses.
var release = Release{Name: "parley", Namespace: "parley", KubeVersion: "v1.30.0"}

// databaseURL is the one value the chart cannot default.
const databaseURL = "postgres://parley:secret@postgres.db:5432/parley?sslmode=require"

// check lints the chart in dir with values, renders it, decodes every
// object strictly and validates them, as make chart-check does.
func check(dir string, values map[string]any, rel Release, existingSecrets ...string) ([]Object, error) {
	if err := Lint(dir, values, rel); err != nil {
		return nil, err
	}
	manifests, err := Render(dir, values, rel)
	if err != nil {
		return nil, err
	}
	objs, err := Decode(manifests)
	if err != nil {
		return nil, err
	}
	return objs, Validate(objs, existingSecrets...)
}

func productionValues(t *testing.T) map[string]any {
	t.Helper()
	v, err := chartutil.ReadValuesFile(filepath.Join(chartDir, "ci", "production-values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// productionSecrets are the Secrets ci/production-values.yaml expects in
// the cluster.
var productionSecrets = []string{"parley-secrets", "parley-anthropic"}

func TestTheChartRendersValidObjects(t *testing.T) {
	tests := []struct {
		name     string
		values   map[string]any
		kube     string
		existing []string
		kinds    []string
		promise  func(t *testing.T, objs []Object)
	}{
		{name: "the default values with the database URL, the one value they lack",
			values: map[string]any{"secrets": map[string]any{"databaseURL": databaseURL}},
			kinds:  []string{"Deployment", "Job", "PodDisruptionBudget", "Secret", "Service"},
			promise: func(t *testing.T, objs []Object) {
				migratesOncePerRelease(t, objs)
				secret := only[*corev1.Secret](t, objs)
				if got := string(secret.Data["PARLEY_DATABASE_URL"]); got != databaseURL {
					t.Errorf("the Secret's PARLEY_DATABASE_URL is %q, want the value given", got)
				}
				for _, key := range []string{"PARLEY_SECRET_KEY", "PARLEY_PLATFORM_TOKEN"} {
					if len(secret.Data[key]) < 32 {
						t.Errorf("the Secret's generated %s is %d bytes, want a long random value", key, len(secret.Data[key]))
					}
				}
				if hookWeight(t, objs, "Secret") >= hookWeight(t, objs, "Job") {
					t.Errorf("the Secret is not created before the migration job that reads it")
				}
			}},
		{name: "the production-like values file",
			values:   productionValues(t),
			existing: productionSecrets,
			kinds:    []string{"Deployment", "HorizontalPodAutoscaler", "Ingress", "Job", "PodDisruptionBudget", "Service", "ServiceMonitor"},
			promise: func(t *testing.T, objs []Object) {
				migratesOncePerRelease(t, objs)
				c := only[*appsv1.Deployment](t, objs).Spec.Template.Spec.Containers[0]
				if got := env(c, "PARLEY_TRUSTED_PROXIES"); got != "10.244.0.0/16" {
					t.Errorf("PARLEY_TRUSTED_PROXIES is %q, want the ingress's pod network", got)
				}
				if c.Lifecycle == nil || c.Lifecycle.PreStop == nil || c.Lifecycle.PreStop.Sleep == nil {
					t.Errorf("the server has no pre-stop pause on Kubernetes 1.30")
				}
				scrapesTheMetricsPort(t, objs)
			}},
		{name: "with redis.url the replicas share their limits through it, read from the Secret",
			values: map[string]any{"secrets": map[string]any{"databaseURL": databaseURL},
				"redis": map[string]any{"url": "redis://:pw@redis.example.com:6379/0", "fail": "closed"}},
			kinds: []string{"Deployment", "Job", "PodDisruptionBudget", "Secret", "Service"},
			promise: func(t *testing.T, objs []Object) {
				if got := string(only[*corev1.Secret](t, objs).Data["PARLEY_REDIS_URL"]); got != "redis://:pw@redis.example.com:6379/0" {
					t.Errorf("the Secret's PARLEY_REDIS_URL is %q, want the value given", got)
				}
				c := only[*appsv1.Deployment](t, objs).Spec.Template.Spec.Containers[0]
				if got := env(c, "PARLEY_REDIS_FAIL"); got != "closed" {
					t.Errorf("PARLEY_REDIS_FAIL is %q, want closed", got)
				}
			}},
		{name: "with the migration job off the replicas migrate as they start",
			values: map[string]any{"secrets": map[string]any{"databaseURL": databaseURL}, "migration": map[string]any{"enabled": false}},
			kinds:  []string{"Deployment", "PodDisruptionBudget", "Secret", "Service"},
			promise: func(t *testing.T, objs []Object) {
				if got := env(only[*appsv1.Deployment](t, objs).Spec.Template.Spec.Containers[0], "PARLEY_MIGRATE"); got != "auto" {
					t.Errorf("PARLEY_MIGRATE is %q, want auto", got)
				}
			}},
		{name: "on Kubernetes 1.29 the pods stop without the sleep hook it lacks",
			values:   productionValues(t),
			kube:     "v1.29.4",
			existing: productionSecrets,
			kinds:    []string{"Deployment", "HorizontalPodAutoscaler", "Ingress", "Job", "PodDisruptionBudget", "Service", "ServiceMonitor"},
			promise: func(t *testing.T, objs []Object) {
				if lc := only[*appsv1.Deployment](t, objs).Spec.Template.Spec.Containers[0].Lifecycle; lc != nil {
					t.Errorf("lifecycle %+v, want none on 1.29", lc)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rel := release
			if tt.kube != "" {
				rel.KubeVersion = tt.kube
			}
			objs, err := check(chartDir, tt.values, rel, tt.existing...)
			if err != nil {
				t.Fatal(err)
			}
			var kinds []string
			for _, o := range objs {
				kinds = append(kinds, o.Kind)
			}
			slices.Sort(kinds)
			if !slices.Equal(kinds, tt.kinds) {
				t.Errorf("rendered %v, want %v", kinds, tt.kinds)
			}
			serverIsLockedDown(t, objs)
			tt.promise(t, objs)
		})
	}
}

// migratesOncePerRelease: one hook Job runs `parley migrate` before an
// install or upgrade changes anything, and the replicas never migrate.
func migratesOncePerRelease(t *testing.T, objs []Object) {
	t.Helper()
	var job Object
	for _, o := range objs {
		if o.Kind == "Job" {
			job = o
		}
	}
	hooks := strings.Split(job.Hook, ",")
	if !slices.Contains(hooks, "pre-install") || !slices.Contains(hooks, "pre-upgrade") {
		t.Errorf("the migration job runs on %q, want pre-install and pre-upgrade", job.Hook)
	}
	jc := job.Value.(*batchv1.Job).Spec.Template.Spec.Containers[0]
	if !slices.Equal(jc.Args, []string{"migrate"}) {
		t.Errorf("the migration job runs %v, want [migrate]", jc.Args)
	}
	if got := env(only[*appsv1.Deployment](t, objs).Spec.Template.Spec.Containers[0], "PARLEY_MIGRATE"); got != "skip" {
		t.Errorf("the replicas run with PARLEY_MIGRATE=%q, want skip", got)
	}
}

// serverIsLockedDown: probes on the health routes, a non-root user, a
// read-only root with a writable /tmp, no API token, and the secret
// settings read from a Secret.
func serverIsLockedDown(t *testing.T, objs []Object) {
	t.Helper()
	pod := only[*appsv1.Deployment](t, objs).Spec.Template.Spec
	c := pod.Containers[0]
	if c.ReadinessProbe == nil || c.ReadinessProbe.HTTPGet == nil || c.ReadinessProbe.HTTPGet.Path != "/readyz" {
		t.Errorf("readiness probe %+v, want GET /readyz", c.ReadinessProbe)
	}
	if c.LivenessProbe == nil || c.LivenessProbe.HTTPGet == nil || c.LivenessProbe.HTTPGet.Path != "/healthz" {
		t.Errorf("liveness probe %+v, want GET /healthz", c.LivenessProbe)
	}
	if pod.SecurityContext == nil || pod.SecurityContext.RunAsNonRoot == nil || !*pod.SecurityContext.RunAsNonRoot {
		t.Errorf("the pod may run as root")
	}
	if c.SecurityContext == nil || c.SecurityContext.ReadOnlyRootFilesystem == nil || !*c.SecurityContext.ReadOnlyRootFilesystem {
		t.Errorf("the root filesystem is writable")
	}
	if !slices.ContainsFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool { return m.MountPath == "/tmp" && !m.ReadOnly }) {
		t.Errorf("no writable /tmp")
	}
	if pod.AutomountServiceAccountToken == nil || *pod.AutomountServiceAccountToken {
		t.Errorf("the pod gets a Kubernetes API token it never uses")
	}
	for _, name := range []string{"PARLEY_DATABASE_URL", "PARLEY_SECRET_KEY", "PARLEY_PLATFORM_TOKEN", "PARLEY_LLM_API_KEY", "PARLEY_REDIS_URL"} {
		i := slices.IndexFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == name })
		if i < 0 || c.Env[i].ValueFrom == nil || c.Env[i].ValueFrom.SecretKeyRef == nil {
			t.Errorf("%s is not read from a Secret", name)
		}
	}
}

func TestTheChartRefusesValuesThatCannotWork(t *testing.T) {
	tests := []struct {
		name   string
		values map[string]any
		want   string
	}{
		{name: "no database URL and no existing Secret",
			values: map[string]any{},
			want:   "secrets.databaseURL is required"},
		{name: "a setting the chart owns, set in env",
			values: map[string]any{"secrets": map[string]any{"databaseURL": databaseURL}, "env": map[string]any{"PARLEY_MIGRATE": "auto"}},
			want:   "the chart sets PARLEY_MIGRATE itself"},
		{name: "a mistyped value name",
			values: map[string]any{"secrets": map[string]any{"databaseURL": databaseURL}, "replicaCont": 3},
			want:   "replicaCont"},
		{name: "a number where a setting must be a string",
			values: map[string]any{"secrets": map[string]any{"databaseURL": databaseURL}, "env": map[string]any{"PARLEY_DAILY_TOKEN_QUOTA": 2000000}},
			want:   "PARLEY_DAILY_TOKEN_QUOTA"},
		{name: "a database URL that is not PostgreSQL's",
			values: map[string]any{"secrets": map[string]any{"databaseURL": "mysql://db/parley"}},
			want:   "databaseURL"},
		{name: "a Redis URL that is not Redis's",
			values: map[string]any{"secrets": map[string]any{"databaseURL": databaseURL}, "redis": map[string]any{"url": "http://redis:6379"}},
			want:   "/redis/url"},
		{name: "the metrics on the API's own port",
			values: map[string]any{"secrets": map[string]any{"databaseURL": databaseURL}, "metrics": map[string]any{"port": 8080}},
			want:   "/metrics/port"},
		{name: "Redis set in env, where the chart would not read it from the Secret",
			values: map[string]any{"secrets": map[string]any{"databaseURL": databaseURL}, "env": map[string]any{"PARLEY_REDIS_URL": "redis://r:6379"}},
			want:   "the chart sets PARLEY_REDIS_URL itself"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Only the render: helm lint reports a template's required and
			// fail as information, by design.
			_, err := Render(chartDir, tt.values, release)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("render: %v; want an error saying %q", err, tt.want)
			}
		})
	}
}

// TestTheCheckCatchesABrokenChart breaks a copy of the chart in the ways
// a template edit can, and expects make chart-check to fail on each.
func TestTheCheckCatchesABrokenChart(t *testing.T) {
	tests := []struct {
		name, file, old, new, want string
		values                     map[string]any
	}{
		{name: "a mistyped field of the Deployment",
			file: "deployment.yaml", old: "readinessProbe:", new: "readinesProbe:",
			want: `unknown field "spec.template.spec.containers[0].readinesProbe"`},
		{name: "a field of the wrong type",
			file: "deployment.yaml", old: "revisionHistoryLimit: 5", new: "revisionHistoryLimit: five",
			want: "revisionHistoryLimit"},
		{name: "a probe on a port no container has",
			file: "deployment.yaml", old: "path: /readyz\n              port: http", new: "path: /readyz\n              port: https",
			want: `names the port "https"`},
		{name: "a Service aimed at a port no container has",
			file: "service.yaml", old: "targetPort: http", new: "targetPort: web",
			want: `names the port "web"`},
		{name: "server and migration pods that share their labels",
			file: "migration-job.yaml", old: "app.kubernetes.io/component: migrate\n    spec:", new: "app.kubernetes.io/component: server\n    spec:",
			want: "also selects the pods of Job"},
		{name: "an autoscaler aimed at something the chart does not render",
			file: "hpa.yaml", old: "kind: Deployment", new: "kind: StatefulSet",
			want: "spec.scaleTargetRef"},
		{name: "a ServiceMonitor scraping a port the Service lacks",
			file: "servicemonitor.yaml", old: "- port: metrics", new: "- port: scrape",
			want: "port scrape is not a port of the Service"},
		{name: "a migration job that would restart forever",
			file: "migration-job.yaml", old: "restartPolicy: Never", new: "restartPolicy: Always",
			want: "restartPolicy"},
		{name: "a template that is not YAML",
			file: "pdb.yaml", old: "  maxUnavailable:", new: "maxUnavailable: [",
			want: "pdb.yaml"},
		{name: "a kind the API does not have",
			file: "pdb.yaml", old: "kind: PodDisruptionBudget", new: "kind: PodDisruptionBudgett",
			want: "PodDisruptionBudgett"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := copyChart(t)
			path := filepath.Join(dir, "templates", tt.file)
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(b), tt.old) {
				t.Fatalf("%s no longer holds %q: update this case", tt.file, tt.old)
			}
			if err := os.WriteFile(path, []byte(strings.Replace(string(b), tt.old, tt.new, 1)), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err = check(dir, productionValues(t), release, productionSecrets...)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("check: %v; want an error saying %q", err, tt.want)
			}
		})
	}
}

// copyChart copies the chart into a temporary directory.
func copyChart(t *testing.T) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "parley")
	err := filepath.WalkDir(chartDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(chartDir, path)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// only returns the one object of type T.
func only[T any](t *testing.T, objs []Object) T {
	t.Helper()
	var found []T
	for _, o := range objs {
		if v, ok := o.Value.(T); ok {
			found = append(found, v)
		}
	}
	if len(found) != 1 {
		var zero T
		t.Fatalf("rendered %d objects of type %T, want 1", len(found), zero)
	}
	return found[0]
}

func env(c corev1.Container, name string) string {
	for _, e := range c.Env {
		if e.Name == name {
			return e.Value
		}
	}
	return ""
}

// hookWeight is the helm.sh/hook-weight of the object of kind: Helm
// creates hooks of one event in ascending weight.
func hookWeight(t *testing.T, objs []Object, kind string) int {
	t.Helper()
	for _, o := range objs {
		if o.Kind == kind {
			w, err := strconv.Atoi(o.Value.(interface{ GetAnnotations() map[string]string }).GetAnnotations()["helm.sh/hook-weight"])
			if err != nil {
				t.Fatalf("%s: hook weight: %v", o, err)
			}
			return w
		}
	}
	t.Fatalf("no %s rendered", kind)
	return 0
}

// TestMain quiets the log lines Helm's template engine writes for every
// required value a lint pass meets.
func TestMain(m *testing.M) {
	log.SetOutput(io.Discard)
	os.Exit(m.Run())
}

// scrapesTheMetricsPort checks that the server serves /metrics on a port of
// its own (PARLEY_METRICS_ADDR), the Service has it, and the ServiceMonitor
// scrapes it rather than the API's port.
func scrapesTheMetricsPort(t *testing.T, objs []Object) {
	t.Helper()
	c := only[*appsv1.Deployment](t, objs).Spec.Template.Spec.Containers[0]
	i := slices.IndexFunc(c.Ports, func(p corev1.ContainerPort) bool { return p.Name == "metrics" })
	if i < 0 {
		t.Fatalf("the server has no metrics port: %+v", c.Ports)
	}
	if got, want := env(c, "PARLEY_METRICS_ADDR"), fmt.Sprintf("0.0.0.0:%d", c.Ports[i].ContainerPort); got != want {
		t.Errorf("PARLEY_METRICS_ADDR is %q, want %q", got, want)
	}
	sm := only[*monitoringv1.ServiceMonitor](t, objs)
	if len(sm.Spec.Endpoints) != 1 || sm.Spec.Endpoints[0].Port != "metrics" {
		t.Errorf("the ServiceMonitor scrapes %+v, want the port metrics", sm.Spec.Endpoints)
	}
}
