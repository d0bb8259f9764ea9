package api

import (
	"net/http"

	"github.com/gin-gonic/gin"
	"github.com/parleyhq/parley/pkg/platform"
)

// UsageReport is the body of GET /v1/tenants/{tenant}/usage.
type UsageReport struct {
	From    string              `json:"from,omitempty"`
	To      string              `json:"to,omitempty"`
	GroupBy string              `json:"group_by"`
	Usage   []platform.UsageRow `json:"usage"`
}

// usage: GET /v1/tenants/{tenant}/usage?from=&to=&group_by=day|bot|key.
func (d *dialogAPI) usage(c *gin.Context) {
	q := platform.UsageQuery{From: c.Query("from"), To: c.Query("to"), GroupBy: c.DefaultQuery("group_by", "day")}
	rows, err := d.platform.Usage(c.Request.Context(), principal(c), c.Param("tenant"), q)
	if err != nil {
		d.fail(c, err)
		return
	}
	if rows == nil {
		rows = []platform.UsageRow{}
	}
	c.JSON(http.StatusOK, UsageReport{From: q.From, To: q.To, GroupBy: q.GroupBy, Usage: rows})
}
