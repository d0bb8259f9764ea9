package api

import (
	"net/http"

	"github.com/gin-gonic/gin"
	"github.com/parleyhq/parley/pkg/api/apiclient"
)

// deleteDialog: DELETE /v1/tenants/{tenant}/dialogs/{dialog} -> 204. A
// dialog answering a message is 409.
func (d *dialogAPI) deleteDialog(c *gin.Context) {
	if err := d.rt.DeleteDialog(c.Request.Context(), principal(c), c.Param("tenant"), c.Param("dialog")); err != nil {
		d.fail(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}

// eraseEndUser: DELETE /v1/tenants/{tenant}/end-users/{user_id} -> what
// was deleted.
func (d *dialogAPI) eraseEndUser(c *gin.Context) {
	got, err := d.rt.EraseEndUser(c.Request.Context(), principal(c), c.Param("tenant"), c.Param("user_id"))
	if err != nil {
		d.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, apiclient.Erased{Dialogs: got.Dialogs, Messages: got.Messages})
}
