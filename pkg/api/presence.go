package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/parleyhq/parley/pkg/api/apiclient"
)

// typing: POST .../dialogs/{dialog}/typing -> 204; the other side of the
// handoff sees that the caller writes (an operator, or the widget's end
// user). Nothing is stored.
func (d *dialogAPI) typing(c *gin.Context) {
	err := d.rt.Presence().Typing(c.Request.Context(), principal(c), c.Param("tenant"), c.Param("dialog"), browserOrigin(c.Request))
	if err != nil {
		d.fail(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}

// markRead: POST .../dialogs/{dialog}/read {seq} -> the caller's side's
// read mark; the other side's live stream gets it as a read event.
func (d *dialogAPI) markRead(c *gin.Context) {
	var req apiclient.ReadRequest
	if err := decodeJSON(c, &req); err != nil {
		d.fail(c, err)
		return
	}
	m, err := d.rt.Presence().Read(c.Request.Context(), principal(c), c.Param("tenant"), c.Param("dialog"), browserOrigin(c.Request), req.Seq)
	if err != nil {
		d.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, apiclient.ReadMark{Who: m.Who, Seq: m.Seq, ReadAt: m.ReadAt})
}
