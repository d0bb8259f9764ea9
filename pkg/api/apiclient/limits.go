package apiclient

import (
	"context"
	"net/http"
)

// TenantLimits are a tenant's own limits (its plan), the body of
// PUT /v1/tenants/{tenant}/limits and the answer of GET. A null field uses
// the server's setting.
type TenantLimits struct {
	// DailyTokenQuota is input plus output tokens per UTC day; 0 is
	// unlimited.
	DailyTokenQuota *int64 `json:"daily_token_quota"`
	// RatePerSecond is messages per second for the whole tenant, with
	// bursts of RateBurst (default one second's worth); 0 is unlimited.
	RatePerSecond *float64 `json:"rate_per_second"`
	RateBurst     *int     `json:"rate_burst"`
}

// TenantLimits returns a tenant's own limits.
func (c *Client) TenantLimits(ctx context.Context, tenant string) (*TenantLimits, error) {
	var out TenantLimits
	return &out, c.Do(ctx, http.MethodGet, tenantPath(tenant, "limits"), nil, &out)
}

// PutTenantLimits sets a tenant's own limits; only the platform token may.
func (c *Client) PutTenantLimits(ctx context.Context, tenant string, l TenantLimits) (*TenantLimits, error) {
	var out TenantLimits
	return &out, c.Do(ctx, http.MethodPut, tenantPath(tenant, "limits"), l, &out)
}
