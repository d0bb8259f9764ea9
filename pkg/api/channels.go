package api

import (
	"io"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"
	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/platform"
)

// Inbound channels. A channel's secret is in the answer of create only;
// its inbound route is public and checks each platform's own signature.

// createChannel: POST /v1/tenants/{tenant}/channels.
func (s *server) createChannel(c *gin.Context) {
	var req apiclient.CreateChannelRequest
	if err := decodeJSON(c, &req); err != nil {
		s.fail(c, err)
		return
	}
	ch, err := s.platform.Channels().Create(c.Request.Context(), principal(c), c.Param("tenant"), platform.ChannelInput{
		Kind: req.Kind, Bot: req.Bot, Name: req.Name, Enabled: req.Enabled, Secrets: req.Secrets, BotUserID: req.BotUserID,
		Secret: req.Secret})
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusCreated, apiclient.NewChannel{Channel: channelOut(c, ch.Channel), Secret: ch.Secret})
}

// listChannels: GET /v1/tenants/{tenant}/channels.
func (s *server) listChannels(c *gin.Context) {
	chs, err := s.platform.Channels().List(c.Request.Context(), principal(c), c.Param("tenant"))
	if err != nil {
		s.fail(c, err)
		return
	}
	out := apiclient.ChannelList{Channels: make([]apiclient.Channel, len(chs))}
	for i, ch := range chs {
		out.Channels[i] = channelOut(c, ch)
	}
	c.JSON(http.StatusOK, out)
}

// getChannel: GET /v1/tenants/{tenant}/channels/{id}.
func (s *server) getChannel(c *gin.Context) {
	ch, err := s.platform.Channels().Get(c.Request.Context(), principal(c), c.Param("tenant"), c.Param("id"))
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, channelOut(c, ch))
}

// updateChannel: PATCH /v1/tenants/{tenant}/channels/{id}.
func (s *server) updateChannel(c *gin.Context) {
	var req apiclient.UpdateChannelRequest
	if err := decodeJSON(c, &req); err != nil {
		s.fail(c, err)
		return
	}
	ch, err := s.platform.Channels().Update(c.Request.Context(), principal(c), c.Param("tenant"), c.Param("id"),
		platform.ChannelPatch{Bot: req.Bot, Enabled: req.Enabled, Secrets: req.Secrets, BotUserID: req.BotUserID})
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, channelOut(c, ch))
}

// deleteChannel: DELETE /v1/tenants/{tenant}/channels/{id}.
func (s *server) deleteChannel(c *gin.Context) {
	if err := s.platform.Channels().Delete(c.Request.Context(), principal(c), c.Param("tenant"), c.Param("id")); err != nil {
		s.fail(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}

// setTelegramWebhook: POST /v1/tenants/{tenant}/channels/{id}/telegram/set-webhook,
// with an optional body {url}.
func (s *server) setTelegramWebhook(c *gin.Context) {
	var req apiclient.SetTelegramWebhookRequest
	if c.Request.ContentLength != 0 {
		if err := decodeJSON(c, &req); err != nil {
			s.fail(c, err)
			return
		}
	}
	ch, err := s.platform.Channels().Get(c.Request.Context(), principal(c), c.Param("tenant"), c.Param("id"))
	if err != nil {
		s.fail(c, err)
		return
	}
	if s.inbound == nil {
		s.fail(c, platform.ErrNoChannel)
		return
	}
	url := req.URL
	if url == "" {
		url = publicURL(c, ch.InboundPath)
	}
	if err := s.inbound.SetTelegramWebhook(c.Request.Context(), principal(c), c.Param("tenant"), ch.ID, url); err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, apiclient.SetTelegramWebhookResult{URL: url})
}

// rotateChannelSecret: POST /v1/tenants/{tenant}/channels/{id}/rotate-secret,
// with an optional body {secret, url}. A Telegram channel's new token is
// registered with setWebhook, at url or the channel's inbound URL.
func (s *server) rotateChannelSecret(c *gin.Context) {
	var req apiclient.RotateChannelSecretRequest
	if c.Request.ContentLength != 0 {
		if err := decodeJSON(c, &req); err != nil {
			s.fail(c, err)
			return
		}
	}
	if s.inbound == nil {
		s.fail(c, platform.ErrNoChannel)
		return
	}
	url := req.URL
	if url == "" {
		ch, err := s.platform.Channels().Get(c.Request.Context(), principal(c), c.Param("tenant"), c.Param("id"))
		if err != nil {
			s.fail(c, err)
			return
		}
		url = publicURL(c, ch.InboundPath)
	}
	ch, err := s.inbound.RotateChannelSecret(c.Request.Context(), principal(c), c.Param("tenant"), c.Param("id"), req.Secret, url)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, apiclient.NewChannel{Channel: channelOut(c, ch.Channel), Secret: ch.Secret})
}

// inbound: POST /v1/channels/{channel}/inbound, public. The body is read
// raw: every platform signs the exact bytes it sent.
func (s *server) receiveInbound(c *gin.Context) {
	if s.inbound == nil {
		s.fail(c, platform.ErrNoChannel)
		return
	}
	body, err := io.ReadAll(c.Request.Body)
	if err != nil {
		s.fail(c, decodeError(err))
		return
	}
	// Checked, not changed: the signature covers these very bytes.
	if err := checkBody(body); err != nil {
		s.fail(c, err)
		return
	}
	resp, err := s.inbound.Receive(c.Request.Context(), c.Param("channel"), c.Request.Header, body)
	if err != nil {
		s.fail(c, err)
		return
	}
	if resp.Replayed {
		c.Header("Parley-Replayed", "true")
	}
	if resp.Body == nil {
		c.Status(resp.Status)
		return
	}
	c.JSON(resp.Status, resp.Body)
}

// publicURL is path on this server as the caller reached it: behind a
// proxy, its X-Forwarded-Proto and X-Forwarded-Host.
func publicURL(c *gin.Context, path string) string {
	scheme := "http"
	if c.Request.TLS != nil {
		scheme = "https"
	}
	if p := c.GetHeader("X-Forwarded-Proto"); p == "https" || p == "http" {
		scheme = p
	}
	host := c.Request.Host
	if h := c.GetHeader("X-Forwarded-Host"); h != "" {
		host, _, _ = strings.Cut(h, ",")
	}
	return scheme + "://" + strings.TrimSpace(host) + path
}

func channelOut(c *gin.Context, ch platform.Channel) apiclient.Channel {
	return apiclient.Channel{ID: ch.ID, Name: ch.Name, Kind: ch.Kind, Bot: ch.BotID, Enabled: ch.Enabled, Secrets: ch.Secrets,
		BotUserID: ch.BotUserID, InboundURL: publicURL(c, ch.InboundPath), PreviousSecretExpiresAt: ch.PreviousSecretExpiresAt,
		CreatedAt: ch.CreatedAt, UpdatedAt: ch.UpdatedAt}
}
