package api

import (
	"net/http"

	"github.com/gin-gonic/gin"
	"github.com/parleyhq/parley/pkg/api/apiclient"
)

// userMemory: GET /v1/tenants/{tenant}/end-users/{user_id}/memory -> the
// notes the tenant's bots keep about the end user, newest first.
func (d *dialogAPI) userMemory(c *gin.Context) {
	notes, err := d.rt.Memory().OfUser(c.Request.Context(), principal(c), c.Param("tenant"), c.Param("user_id"))
	if err != nil {
		d.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, apiclient.MemoryNoteList{Notes: notes})
}

// deleteMemoryNote: DELETE /v1/tenants/{tenant}/end-users/{user_id}/memory/{note} -> 204.
func (d *dialogAPI) deleteMemoryNote(c *gin.Context) {
	if err := d.rt.Memory().DeleteNote(c.Request.Context(), principal(c), c.Param("tenant"), c.Param("user_id"), c.Param("note")); err != nil {
		d.fail(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}
