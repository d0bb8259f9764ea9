package api

import (
	"encoding/json"
	"net/http"

	"github.com/gin-gonic/gin"
	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/dialog"
)

// deleteDialog: DELETE /v1/tenants/{tenant}/dialogs/{dialog} -> 204. A
// dialog answering a message is 409.
func (d *dialogAPI) deleteDialog(c *gin.Context) {
	if err := d.rt.Dialogs().Delete(c.Request.Context(), principal(c), c.Param("tenant"), c.Param("dialog")); err != nil {
		d.fail(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}

// eraseEndUser: DELETE /v1/tenants/{tenant}/end-users/{user_id} -> what
// was deleted.
func (d *dialogAPI) eraseEndUser(c *gin.Context) {
	got, err := d.rt.Dialogs().EraseEndUser(c.Request.Context(), principal(c), c.Param("tenant"), c.Param("user_id"))
	if err != nil {
		d.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, apiclient.Erased{Dialogs: got.Dialogs, Messages: got.Messages, MemoryNotes: got.MemoryNotes})
}

// exportDialogs: GET /v1/tenants/{tenant}/dialogs/export?bot=&status=&from=&to=
// -> JSON Lines, one dialog with its messages and tool calls a line,
// written as they are read. Errors before the first line are JSON errors;
// after it the stream just ends, short of its last line.
func (d *dialogAPI) exportDialogs(c *gin.Context) {
	f := dialogFilter(c)
	started := false
	enc := json.NewEncoder(c.Writer)
	err := d.rt.Dialogs().Export(c.Request.Context(), principal(c), c.Param("tenant"), f, func(dd dialog.DialogDetail) error {
		if !started {
			started = true
			c.Header("Content-Type", "application/x-ndjson")
			c.Status(http.StatusOK)
		}
		line := detailOut(dd)
		if err := enc.Encode(line); err != nil {
			return err
		}
		c.Writer.Flush()
		return nil
	})
	switch {
	case err != nil && !started:
		d.fail(c, err)
	case err != nil:
		d.log.WarnContext(c.Request.Context(), "export dialogs: stream cut", "err", err)
	case !started:
		c.Header("Content-Type", "application/x-ndjson")
		c.Status(http.StatusOK)
	}
}
