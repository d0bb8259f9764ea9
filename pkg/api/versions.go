package api

import (
	"net/http"

	"github.com/gin-gonic/gin"
	"github.com/parleyhq/parley/pkg/api/apiclient"
)

// createVersion: POST /v1/tenants/{tenant}/bots/{bot}/versions. A config
// identical to the latest version returns that version with 200 instead of
// 201, so saving twice is harmless.
func (s *server) createVersion(c *gin.Context) {
	var req apiclient.CreateVersionRequest
	if err := decodeJSON(c, &req); err != nil {
		s.fail(c, err)
		return
	}
	v, created, err := s.platform.Versions().CreateWithTests(c.Request.Context(), principal(c), c.Param("tenant"), c.Param("bot"), req.Config, req.Tests)
	if err != nil {
		s.fail(c, err)
		return
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	c.JSON(status, versionOut(v))
}

// listVersions: GET /v1/tenants/{tenant}/bots/{bot}/versions (summaries,
// without config and prompt).
func (s *server) listVersions(c *gin.Context) {
	opts, err := listOptions(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	vs, next, err := s.platform.Versions().List(c.Request.Context(), principal(c), c.Param("tenant"), c.Param("bot"), opts)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, apiclient.VersionList{Versions: mapAll(vs, versionSummary), NextCursor: next})
}

// getVersion: GET /v1/tenants/{tenant}/bots/{bot}/versions/{n}.
func (s *server) getVersion(c *gin.Context) {
	n, err := pathInt(c, "n")
	if err != nil {
		s.fail(c, err)
		return
	}
	v, err := s.platform.Versions().Get(c.Request.Context(), principal(c), c.Param("tenant"), c.Param("bot"), n)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, versionOut(v))
}

// publish: POST /v1/tenants/{tenant}/bots/{bot}/publish {version}. An older
// number is a rollback.
func (s *server) publish(c *gin.Context) {
	var req apiclient.PublishRequest
	if err := decodeJSON(c, &req); err != nil {
		s.fail(c, err)
		return
	}
	if req.Version < 1 {
		s.fail(c, invalid("/version", "must be a version number (1 or more)"))
		return
	}
	b, err := s.platform.Versions().Publish(c.Request.Context(), principal(c), c.Param("tenant"), c.Param("bot"), req.Version)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, botOut(b))
}

// diffVersions: GET /v1/tenants/{tenant}/bots/{bot}/versions/{n}/diff/{m}.
func (s *server) diffVersions(c *gin.Context) {
	n, err := pathInt(c, "n")
	if err != nil {
		s.fail(c, err)
		return
	}
	m, err := pathInt(c, "m")
	if err != nil {
		s.fail(c, err)
		return
	}
	d, err := s.platform.Versions().Diff(c.Request.Context(), principal(c), c.Param("tenant"), c.Param("bot"), n, m)
	if err != nil {
		s.fail(c, err)
		return
	}
	out := apiclient.VersionDiff{From: d.From, To: d.To, Unified: d.Unified, TestsChanged: d.TestsChanged, Changes: []apiclient.Change{}}
	for _, ch := range d.Changes {
		out.Changes = append(out.Changes, apiclient.Change{Op: ch.Op, Pointer: ch.Pointer, From: ch.From, To: ch.To})
	}
	c.JSON(http.StatusOK, out)
}
