package api

import (
	"strconv"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"
)

// httpMetrics counts and times requests. Labels are bounded: the route is
// gin's path template (never the raw path, which holds ids), and the status
// is a class like "2xx".
type httpMetrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

func newHTTPMetrics() *httpMetrics {
	m := &httpMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "parley_http_requests_total",
			Help: "HTTP requests by route template, method and status class.",
		}, []string{"route", "method", "status"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "parley_http_request_duration_seconds",
			Help:    "HTTP request latency by route template, method and status class.",
			Buckets: prometheus.DefBuckets,
		}, []string{"route", "method", "status"}),
	}
	return m
}

// observe records one finished request.
func (m *httpMetrics) observe(c *gin.Context, elapsed time.Duration) {
	route, method, class := routeLabel(c), methodLabel(c.Request.Method), statusClass(c.Writer.Status())
	m.requests.WithLabelValues(route, method, class).Inc()
	m.duration.WithLabelValues(route, method, class).Observe(elapsed.Seconds())
}

// routeLabel is the matched path template, or "unmatched" so that scans of
// random paths cannot grow the label set.
func routeLabel(c *gin.Context) string {
	if r := c.FullPath(); r != "" {
		return r
	}
	return "unmatched"
}

// methodLabel folds unusual methods into "OTHER", again to bound labels.
func methodLabel(m string) string {
	switch m {
	case "GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS":
		return m
	}
	return "OTHER"
}

func statusClass(code int) string {
	if code < 100 || code > 599 {
		return "other"
	}
	return strconv.Itoa(code/100) + "xx"
}
