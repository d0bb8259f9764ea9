package chartcheck

import (
	"errors"
	"fmt"
	"strings"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Validate checks decoded objects for what the API server requires of
// them (names, labels, the fields a kind must have) and for how they fit
// together: a Service, PodDisruptionBudget or ServiceMonitor must select
// what the release runs, probes and Services must name ports the
// containers have, an HPA must aim at a rendered Deployment, and every
// Secret a pod reads must be rendered or named in existingSecrets, with
// the keys it reads. It reports every problem at once.
func Validate(objs []Object, existingSecrets ...string) error {
	v := &validator{objs: objs, secrets: map[string]map[string]bool{}}
	for _, name := range existingSecrets {
		v.secrets[name] = nil // exists; its keys are not known here
	}
	for _, o := range objs {
		if s, ok := o.Value.(*corev1.Secret); ok {
			keys := map[string]bool{}
			for k := range s.Data {
				keys[k] = true
			}
			for k := range s.StringData {
				keys[k] = true
			}
			v.secrets[s.Name] = keys
		}
	}
	for _, o := range objs {
		v.meta(o)
		switch t := o.Value.(type) {
		case *appsv1.Deployment:
			v.deployment(o, t)
		case *batchv1.Job:
			v.job(o, t)
		case *corev1.Service:
			v.service(o, t)
		case *corev1.Secret:
			for k := range t.Data {
				v.all(o, "data key "+k, validation.IsConfigMapKey(k))
			}
		case *autoscalingv2.HorizontalPodAutoscaler:
			v.hpa(o, t)
		case *policyv1.PodDisruptionBudget:
			v.pdb(o, t)
		case *networkingv1.Ingress:
			v.ingress(o, t)
		case *monitoringv1.ServiceMonitor:
			v.serviceMonitor(o, t)
		default:
			v.addf(o, "kind %s is not one this check knows; teach validate.go its rules", o.Kind)
		}
	}
	return errors.Join(v.errs...)
}

type validator struct {
	objs    []Object
	secrets map[string]map[string]bool // name -> keys; nil keys: exists, keys unknown
	errs    []error
}

func (v *validator) addf(o Object, format string, args ...any) {
	v.errs = append(v.errs, fmt.Errorf("%s: %s", o, fmt.Sprintf(format, args...)))
}

// all adds the messages of one of the validation package's checks.
func (v *validator) all(o Object, what string, msgs []string) {
	for _, m := range msgs {
		v.addf(o, "%s: %s", what, m)
	}
}

func (v *validator) meta(o Object) {
	m, ok := o.Value.(metav1.Object)
	if !ok {
		v.addf(o, "has no object metadata")
		return
	}
	if m.GetName() == "" {
		v.addf(o, "metadata.name is empty")
	} else if _, isService := o.Value.(*corev1.Service); isService {
		v.all(o, "metadata.name", validation.IsDNS1035Label(m.GetName()))
	} else {
		v.all(o, "metadata.name", validation.IsDNS1123Subdomain(m.GetName()))
	}
	v.labels(o, "metadata.labels", m.GetLabels())
	for k := range m.GetAnnotations() {
		v.all(o, "metadata.annotations key "+k, validation.IsQualifiedName(k))
	}
}

func (v *validator) labels(o Object, where string, set map[string]string) {
	for k, val := range set {
		v.all(o, where+" key "+k, validation.IsQualifiedName(k))
		v.all(o, where+"["+k+"]", validation.IsValidLabelValue(val))
	}
}

// selector parses a label selector; a nil or empty one is an error, as
// it would select every pod of the namespace.
func (v *validator) selector(o Object, where string, s *metav1.LabelSelector) labels.Selector {
	if s == nil || (len(s.MatchLabels) == 0 && len(s.MatchExpressions) == 0) {
		v.addf(o, "%s is empty", where)
		return nil
	}
	v.labels(o, where+".matchLabels", s.MatchLabels)
	sel, err := metav1.LabelSelectorAsSelector(s)
	if err != nil {
		v.addf(o, "%s: %v", where, err)
		return nil
	}
	return sel
}

func (v *validator) deployment(o Object, d *appsv1.Deployment) {
	if d.Spec.Replicas != nil && *d.Spec.Replicas < 0 {
		v.addf(o, "spec.replicas is negative")
	}
	if sel := v.selector(o, "spec.selector", d.Spec.Selector); sel != nil && !sel.Matches(labels.Set(d.Spec.Template.Labels)) {
		v.addf(o, "spec.selector %s does not match the pod template's labels %v", sel, d.Spec.Template.Labels)
	}
	if ru := d.Spec.Strategy.RollingUpdate; ru != nil && isZero(ru.MaxSurge) && isZero(ru.MaxUnavailable) {
		v.addf(o, "spec.strategy.rollingUpdate: maxSurge and maxUnavailable are both 0, so no rollout can proceed")
	}
	if p := d.Spec.Template.Spec.RestartPolicy; p != "" && p != corev1.RestartPolicyAlways {
		v.addf(o, "spec.template.spec.restartPolicy %s: a Deployment's pods must restart Always", p)
	}
	v.podSpec(o, "spec.template", d.Spec.Template)
}

func isZero(x *intstr.IntOrString) bool {
	return x != nil && (x.Type == intstr.Int && x.IntVal == 0 || x.Type == intstr.String && x.StrVal == "0%")
}

func (v *validator) job(o Object, j *batchv1.Job) {
	if p := j.Spec.Template.Spec.RestartPolicy; p != corev1.RestartPolicyNever && p != corev1.RestartPolicyOnFailure {
		v.addf(o, "spec.template.spec.restartPolicy %q: a Job's pods must restart Never or OnFailure", p)
	}
	if j.Spec.BackoffLimit != nil && *j.Spec.BackoffLimit < 0 {
		v.addf(o, "spec.backoffLimit is negative")
	}
	v.podSpec(o, "spec.template", j.Spec.Template)
}

func (v *validator) podSpec(o Object, where string, t corev1.PodTemplateSpec) {
	v.labels(o, where+".metadata.labels", t.Labels)
	spec := t.Spec
	if len(spec.Containers) == 0 {
		v.addf(o, "%s.spec.containers is empty", where)
	}
	volumes := map[string]bool{}
	for _, vol := range spec.Volumes {
		v.all(o, where+".spec.volumes name", validation.IsDNS1123Label(vol.Name))
		volumes[vol.Name] = true
	}
	if sc := spec.SecurityContext; sc != nil && sc.RunAsNonRoot != nil && *sc.RunAsNonRoot && sc.RunAsUser != nil && *sc.RunAsUser == 0 {
		v.addf(o, "%s.spec.securityContext: runAsNonRoot with runAsUser 0 can never start", where)
	}
	for i, c := range spec.Containers {
		v.container(o, fmt.Sprintf("%s.spec.containers[%d]", where, i), c, volumes)
	}
}

func (v *validator) container(o Object, where string, c corev1.Container, volumes map[string]bool) {
	v.all(o, where+".name", validation.IsDNS1123Label(c.Name))
	if strings.TrimSpace(c.Image) == "" {
		v.addf(o, "%s.image is empty", where)
	}
	ports := map[string]bool{}
	for _, p := range c.Ports {
		v.all(o, where+".ports containerPort", validation.IsValidPortNum(int(p.ContainerPort)))
		if p.Name != "" {
			v.all(o, where+".ports name", validation.IsValidPortName(p.Name))
			if ports[p.Name] {
				v.addf(o, "%s.ports: the name %s is used twice", where, p.Name)
			}
			ports[p.Name] = true
		}
	}
	for name, p := range map[string]*corev1.Probe{"livenessProbe": c.LivenessProbe, "readinessProbe": c.ReadinessProbe, "startupProbe": c.StartupProbe} {
		if p != nil {
			v.probe(o, where+"."+name, p, ports)
		}
	}
	seen := map[string]bool{}
	for _, e := range c.Env {
		v.all(o, where+".env name", validation.IsEnvVarName(e.Name))
		if seen[e.Name] {
			v.addf(o, "%s.env: %s is set twice; the later one wins silently", where, e.Name)
		}
		seen[e.Name] = true
		if e.ValueFrom != nil {
			if e.Value != "" {
				v.addf(o, "%s.env %s has both value and valueFrom", where, e.Name)
			}
			if ref := e.ValueFrom.SecretKeyRef; ref != nil {
				v.secretKey(o, where+".env "+e.Name, ref)
			}
		}
	}
	for _, m := range c.VolumeMounts {
		if !volumes[m.Name] {
			v.addf(o, "%s.volumeMounts: no volume is named %s", where, m.Name)
		}
		if !strings.HasPrefix(m.MountPath, "/") {
			v.addf(o, "%s.volumeMounts %s: mountPath %q is not absolute", where, m.Name, m.MountPath)
		}
	}
	for name, limit := range c.Resources.Limits {
		if req, ok := c.Resources.Requests[name]; ok && req.Cmp(limit) > 0 {
			v.addf(o, "%s.resources: the %s request %s is above its limit %s", where, name, req.String(), limit.String())
		}
	}
}

func (v *validator) probe(o Object, where string, p *corev1.Probe, ports map[string]bool) {
	handlers := 0
	for _, set := range []bool{p.HTTPGet != nil, p.TCPSocket != nil, p.Exec != nil, p.GRPC != nil} {
		if set {
			handlers++
		}
	}
	if handlers != 1 {
		v.addf(o, "%s must have exactly one handler, has %d", where, handlers)
	}
	if h := p.HTTPGet; h != nil {
		v.port(o, where+".httpGet.port", h.Port, ports)
		if !strings.HasPrefix(h.Path, "/") {
			v.addf(o, "%s.httpGet.path %q does not start with /", where, h.Path)
		}
	}
	if p.PeriodSeconds < 0 || p.TimeoutSeconds < 0 || p.FailureThreshold < 0 {
		v.addf(o, "%s has a negative period, timeout or threshold", where)
	}
}

// port checks a reference to a container port: a number in range, or
// the name of a port in ports.
func (v *validator) port(o Object, where string, p intstr.IntOrString, ports map[string]bool) {
	if p.Type == intstr.Int {
		v.all(o, where, validation.IsValidPortNum(p.IntValue()))
		return
	}
	if !ports[p.StrVal] {
		v.addf(o, "%s names the port %q, which no container port is named", where, p.StrVal)
	}
}

func (v *validator) secretKey(o Object, where string, ref *corev1.SecretKeySelector) {
	if ref.Name == "" || ref.Key == "" {
		v.addf(o, "%s: secretKeyRef needs a name and a key", where)
		return
	}
	optional := ref.Optional != nil && *ref.Optional
	keys, exists := v.secrets[ref.Name]
	switch {
	case !exists && !optional:
		v.addf(o, "%s reads the Secret %s, which the chart does not render and which is not named as existing", where, ref.Name)
	case keys != nil && !keys[ref.Key] && !optional:
		v.addf(o, "%s reads the key %s, which the Secret %s does not have", where, ref.Key, ref.Name)
	}
}

// pods are the pod templates of the rendered Deployments and Jobs, with
// their container ports by name.
type pods struct {
	owner  Object
	labels labels.Set
	ports  map[string]bool
}

func (v *validator) pods() []pods {
	var out []pods
	add := func(o Object, t corev1.PodTemplateSpec) {
		p := pods{owner: o, labels: t.Labels, ports: map[string]bool{}}
		for _, c := range t.Spec.Containers {
			for _, port := range c.Ports {
				p.ports[port.Name] = true
			}
		}
		out = append(out, p)
	}
	for _, o := range v.objs {
		switch t := o.Value.(type) {
		case *appsv1.Deployment:
			add(o, t.Spec.Template)
		case *batchv1.Job:
			add(o, t.Spec.Template)
		}
	}
	return out
}

// selected returns the pods sel matches; it is an error when they are
// none, or when they include a Job's (a Service must not route to the
// migration job).
func (v *validator) selected(o Object, where string, sel labels.Selector) []pods {
	var out []pods
	for _, p := range v.pods() {
		if sel.Matches(p.labels) {
			if _, isJob := p.owner.Value.(*batchv1.Job); isJob {
				v.addf(o, "%s %s also selects the pods of %s", where, sel, p.owner)
				continue
			}
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		v.addf(o, "%s %s selects no pod the chart runs", where, sel)
	}
	return out
}

func (v *validator) service(o Object, s *corev1.Service) {
	if len(s.Spec.Ports) == 0 {
		v.addf(o, "spec.ports is empty")
	}
	var matched []pods
	if len(s.Spec.Selector) == 0 {
		v.addf(o, "spec.selector is empty")
	} else {
		matched = v.selected(o, "spec.selector", labels.SelectorFromSet(s.Spec.Selector))
	}
	names := map[string]bool{}
	for i, p := range s.Spec.Ports {
		where := fmt.Sprintf("spec.ports[%d]", i)
		v.all(o, where+".port", validation.IsValidPortNum(int(p.Port)))
		if len(s.Spec.Ports) > 1 && p.Name == "" {
			v.addf(o, "%s needs a name: the Service has more than one port", where)
		}
		if names[p.Name] {
			v.addf(o, "%s: the name %s is used twice", where, p.Name)
		}
		names[p.Name] = true
		for _, pod := range matched {
			v.port(o, where+".targetPort (pods of "+pod.owner.String()+")", p.TargetPort, pod.ports)
		}
	}
}

func (v *validator) hpa(o Object, h *autoscalingv2.HorizontalPodAutoscaler) {
	if h.Spec.MaxReplicas < 1 {
		v.addf(o, "spec.maxReplicas must be at least 1")
	}
	if h.Spec.MinReplicas != nil && (*h.Spec.MinReplicas < 1 || *h.Spec.MinReplicas > h.Spec.MaxReplicas) {
		v.addf(o, "spec.minReplicas %d is not from 1 to maxReplicas %d", *h.Spec.MinReplicas, h.Spec.MaxReplicas)
	}
	ref := h.Spec.ScaleTargetRef
	target, found := v.find(ref.Kind, ref.Name)
	if d, ok := target.Value.(*appsv1.Deployment); !found || !ok || ref.APIVersion != "apps/v1" {
		v.addf(o, "spec.scaleTargetRef %s %s %s is not a Deployment the chart renders", ref.APIVersion, ref.Kind, ref.Name)
	} else if d.Spec.Replicas != nil {
		v.addf(o, "the Deployment %s also sets spec.replicas, which every upgrade would reset under the autoscaler", ref.Name)
	}
	for i, m := range h.Spec.Metrics {
		if m.Type == autoscalingv2.ResourceMetricSourceType && (m.Resource == nil || m.Resource.Name == "") {
			v.addf(o, "spec.metrics[%d]: a Resource metric needs resource.name", i)
		}
	}
}

func (v *validator) find(kind, name string) (Object, bool) {
	for _, o := range v.objs {
		if o.Kind == kind && o.Name == name {
			return o, true
		}
	}
	return Object{}, false
}

func (v *validator) pdb(o Object, p *policyv1.PodDisruptionBudget) {
	if (p.Spec.MinAvailable == nil) == (p.Spec.MaxUnavailable == nil) {
		v.addf(o, "spec needs exactly one of minAvailable and maxUnavailable")
	}
	if sel := v.selector(o, "spec.selector", p.Spec.Selector); sel != nil {
		v.selected(o, "spec.selector", sel)
	}
}

func (v *validator) ingress(o Object, ing *networkingv1.Ingress) {
	if len(ing.Spec.Rules) == 0 && ing.Spec.DefaultBackend == nil {
		v.addf(o, "has neither rules nor a default backend")
	}
	for i, r := range ing.Spec.Rules {
		where := fmt.Sprintf("spec.rules[%d]", i)
		if r.Host != "" {
			v.all(o, where+".host", validation.IsDNS1123Subdomain(strings.TrimPrefix(r.Host, "*.")))
		}
		if r.HTTP == nil || len(r.HTTP.Paths) == 0 {
			v.addf(o, "%s.http.paths is empty", where)
			continue
		}
		for j, p := range r.HTTP.Paths {
			pw := fmt.Sprintf("%s.http.paths[%d]", where, j)
			if p.PathType == nil {
				v.addf(o, "%s.pathType is required", pw)
			}
			if !strings.HasPrefix(p.Path, "/") {
				v.addf(o, "%s.path %q does not start with /", pw, p.Path)
			}
			v.backend(o, pw+".backend", p.Backend)
		}
	}
	for i, t := range ing.Spec.TLS {
		if t.SecretName == "" {
			v.addf(o, "spec.tls[%d].secretName is empty", i)
		}
	}
}

func (v *validator) backend(o Object, where string, b networkingv1.IngressBackend) {
	if b.Service == nil {
		v.addf(o, "%s.service is required", where)
		return
	}
	svc, ok := v.find("Service", b.Service.Name)
	if !ok {
		v.addf(o, "%s.service.name %s is not a Service the chart renders", where, b.Service.Name)
		return
	}
	if !servicePort(svc.Value.(*corev1.Service), b.Service.Port.Name, b.Service.Port.Number) {
		v.addf(o, "%s.service.port (name %q, number %d) is not a port of the Service %s", where, b.Service.Port.Name, b.Service.Port.Number, svc.Name)
	}
}

func servicePort(s *corev1.Service, name string, number int32) bool {
	for _, p := range s.Spec.Ports {
		if (name != "" && p.Name == name) || (name == "" && p.Port == number) {
			return true
		}
	}
	return false
}

func (v *validator) serviceMonitor(o Object, m *monitoringv1.ServiceMonitor) {
	sel := v.selector(o, "spec.selector", &m.Spec.Selector)
	if len(m.Spec.Endpoints) == 0 {
		v.addf(o, "spec.endpoints is empty")
	}
	var services []*corev1.Service
	for _, t := range v.objs {
		if s, ok := t.Value.(*corev1.Service); ok && sel != nil && sel.Matches(labels.Set(s.Labels)) {
			services = append(services, s)
		}
	}
	if sel != nil && len(services) == 0 {
		v.addf(o, "spec.selector %s matches no Service the chart renders", sel)
	}
	for i, e := range m.Spec.Endpoints {
		if e.Port == "" {
			v.addf(o, "spec.endpoints[%d].port is required", i)
			continue
		}
		for _, s := range services {
			if !servicePort(s, e.Port, 0) {
				v.addf(o, "spec.endpoints[%d].port %s is not a port of the Service %s", i, e.Port, s.Name)
			}
		}
	}
}
