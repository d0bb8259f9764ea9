package chartcheck

import (
	"errors"
	"fmt"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/yaml"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
)

// Object is one rendered object decoded into its API type
// (*appsv1.Deployment, *monitoringv1.ServiceMonitor, ...).
type Object struct {
	Manifest
	Kind, Name string
	Value      runtime.Object
}

func (o Object) String() string { return fmt.Sprintf("%s %s (%s)", o.Kind, o.Name, o.Source) }

// Decode decodes each manifest strictly into the Go type of its apiVersion
// and kind: the built-in API types of k8s.io/api and the Prometheus
// Operator's. An unknown kind, an unknown or duplicated field, or a value
// of the wrong type is an error, as the API server's strict field
// validation (kubectl's default) makes it.
func Decode(manifests []Manifest) ([]Object, error) {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return nil, err
	}
	if err := monitoringv1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	decoder := serializer.NewCodecFactory(scheme, serializer.EnableStrict).UniversalDeserializer()
	var objs []Object
	var errs []error
	for _, m := range manifests {
		value, gvk, err := decoder.Decode([]byte(m.YAML), nil, nil)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", describe(m), err))
			continue
		}
		accessor, ok := value.(interface{ GetName() string })
		if !ok {
			errs = append(errs, fmt.Errorf("%s: %s has no metadata", describe(m), gvk.Kind))
			continue
		}
		objs = append(objs, Object{Manifest: m, Kind: gvk.Kind, Name: accessor.GetName(), Value: value})
	}
	return objs, errors.Join(errs...)
}

// describe names a manifest that may not decode: its kind and name when
// it is YAML at all, and its template.
func describe(m Manifest) string {
	var u unstructured.Unstructured
	if err := yaml.Unmarshal([]byte(m.YAML), &u.Object); err != nil || u.Object == nil {
		return m.Source
	}
	return fmt.Sprintf("%s %s (%s)", u.GetKind(), u.GetName(), m.Source)
}
