package api

import (
	"net/http"

	"github.com/gin-gonic/gin"
	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/platform"
)

// usage: GET /v1/tenants/{tenant}/usage?from=&to=&group_by=day|bot|key|provider.
func (d *dialogAPI) usage(c *gin.Context) {
	q := platform.UsageQuery{From: c.Query("from"), To: c.Query("to"), GroupBy: c.DefaultQuery("group_by", "day")}
	rows, err := d.rt.Metering().Summary(c.Request.Context(), principal(c), c.Param("tenant"), q)
	if err != nil {
		d.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, apiclient.UsageReport{From: q.From, To: q.To, GroupBy: q.GroupBy, Usage: rows})
}

// activity: GET /v1/tenants/{tenant}/usage/series?from=&to=&bot=&bucket=day|hour
// -> the tenant's activity day by day or hour by hour, for charts.
func (d *dialogAPI) activity(c *gin.Context) {
	q := platform.ActivityQuery{From: c.Query("from"), To: c.Query("to"), Bot: c.Query("bot"), Bucket: c.Query("bucket")}
	days, err := d.rt.Metering().Activity(c.Request.Context(), principal(c), c.Param("tenant"), &q)
	if err != nil {
		d.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, apiclient.ActivityReport{From: q.From, To: q.To, Bot: q.Bot, Bucket: q.Bucket, Days: days})
}
