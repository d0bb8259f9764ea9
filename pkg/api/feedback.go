package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/dialog"
)

// putFeedback: POST /v1/tenants/{tenant}/dialogs/{dialog}/messages/{message}/feedback
// {rating, comment?} -> the reply's feedback. The widget's publishable key
// may call it; rating again replaces the earlier rating.
func (d *dialogAPI) putFeedback(c *gin.Context) {
	var req apiclient.FeedbackRequest
	if err := decodeJSON(c, &req); err != nil {
		d.fail(c, err)
		return
	}
	f, err := d.rt.Dialogs().PutFeedback(c.Request.Context(), principal(c), c.Param("tenant"), c.Param("dialog"), c.Param("message"),
		browserOrigin(c.Request), dialog.FeedbackInput{Rating: req.Rating, Comment: req.Comment})
	if err != nil {
		d.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, f)
}
