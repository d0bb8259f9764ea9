package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/parleyhq/parley/pkg/api/apiclient"
)

// addNote: POST /v1/tenants/{tenant}/dialogs/{dialog}/notes {text} -> the
// stored internal note; the end user never sees it.
func (d *dialogAPI) addNote(c *gin.Context) {
	var req apiclient.NoteRequest
	if err := decodeJSON(c, &req); err != nil {
		d.fail(c, err)
		return
	}
	n, err := d.rt.Handoffs().AddNote(c.Request.Context(), principal(c), c.Param("tenant"), c.Param("dialog"), req.Text)
	if err != nil {
		d.fail(c, err)
		return
	}
	c.JSON(http.StatusCreated, n)
}

// listNotes: GET .../dialogs/{dialog}/notes -> {notes}, oldest first.
func (d *dialogAPI) listNotes(c *gin.Context) {
	notes, err := d.rt.Handoffs().ListNotes(c.Request.Context(), principal(c), c.Param("tenant"), c.Param("dialog"))
	if err != nil {
		d.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, apiclient.NoteList{Notes: notes})
}
