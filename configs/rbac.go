package configs

import _ "embed"

// RBACModel is the casbin model (RBAC with domains) that pkg/auth enforces.
//
//go:embed rbac_model.conf
var RBACModel string

// RBACPolicy is the default casbin policy: what each role and key scope may
// do.
//
//go:embed rbac_policy.csv
var RBACPolicy string
