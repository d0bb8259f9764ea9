package api

import (
	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/parleyhq/parley/pkg/api/apiclient"
)

var errNotFound = &apiclient.Error{Code: apiclient.CodeNotFound, Message: "no such route"}

var errMethod = &apiclient.Error{Code: apiclient.CodeMethodNotAllowed, Message: "this route does not accept this method"}

// register is the one place routes are declared. Every route added here must
// also be added to the route table of the isolation test, which fails
// otherwise.
func (s *server) register(e *gin.Engine) {
	e.Use(requestID(), observe(s.log, s.metrics), recoverPanics(s.log), limitBody(s.maxBody, messagesRoute, sourcesRoute), cors(), wellFormed())
	e.NoRoute(s.static) // the admin UI, the widget, or 404
	e.NoMethod(func(c *gin.Context) { writeError(c, errMethod) })

	e.GET("/", s.landing)
	e.GET("/healthz", s.health)
	e.GET("/readyz", s.ready)
	if !s.metricsElsewhere {
		e.GET("/metrics", gin.WrapH(promhttp.HandlerFor(s.registry, promhttp.HandlerOpts{})))
	}

	v1 := e.Group("/v1")
	v1.POST("/auth/login", s.login)
	v1.POST("/auth/logout", s.logout)
	v1.GET("/schemas/agent-config", s.agentConfigSchema)
	v1.POST("/auth/accept-invite", s.acceptInvite)
	v1.GET("/auth/oidc/login", s.oidcLogin)
	v1.GET("/auth/oidc/callback", s.oidcCallback)
	// Enrolment takes a session, or the challenge of a sign-in that a
	// tenant's requirement holds until enrolment.
	v1.POST("/auth/totp", s.startTOTP)
	v1.POST("/auth/totp/confirm", s.confirmTOTP)
	v1.POST("/auth/totp/verify", s.verifyTOTP)

	d := newDialogAPI(s)

	// The OpenAI and MCP faces: a tenant's server key, OpenAI's and MCP's
	// shapes, the same dialog runtime.
	o := &openaiAPI{dialogAPI: d}
	oa := v1.Group("", o.authenticate)
	oa.POST("/chat/completions", o.chatCompletions)
	oa.GET("/models", o.listModels)
	oa.GET("/models/:model", o.getModel)
	// No GET: the spec lets a server without messages of its own answer
	// 405 instead of holding an idle event stream open per session, which
	// would also hold a shutdown up.
	m := newMCPAPI(d)
	v1.POST("/tenants/:tenant/bots/:bot/mcp", m.serve)
	v1.DELETE("/tenants/:tenant/bots/:bot/mcp", m.serve)

	// A channel's platform posts here with its own signature, no key.
	v1.POST("/channels/:channel/inbound", s.receiveInbound)

	// A citation's link to an uploaded file: the signed token is the
	// credential (docs/knowledge.md).
	v1.GET("/knowledge/files/:token", s.knowledgeFile)

	authed := v1.Group("", s.authenticate)
	authed.GET("/auth/me", s.me)
	authed.GET("/auth/sessions", s.listSessions)
	authed.DELETE("/auth/sessions/:id", s.endSession)
	authed.GET("/auth/totp", s.getTOTP)
	authed.DELETE("/auth/totp", s.disableTOTP)
	authed.POST("/validate", s.validate)
	authed.POST("/tenants", s.createTenant)
	authed.GET("/tenants", s.listTenants)

	t := authed.Group("/tenants/:tenant")
	t.GET("", s.getTenant)
	t.PATCH("", s.updateTenant)

	t.POST("/api-keys", s.createKey)
	t.GET("/api-keys", s.listKeys)
	t.PATCH("/api-keys/:id", s.updateKey)
	t.DELETE("/api-keys/:id", s.revokeKey)

	t.PUT("/secrets/:name", s.putSecret)
	t.GET("/secrets", s.listSecrets)
	t.DELETE("/secrets/:name", s.deleteSecret)
	t.GET("/canned-replies", s.listCannedReplies)
	t.POST("/canned-replies", s.createCannedReply)
	t.PATCH("/canned-replies/:id", s.updateCannedReply)
	t.DELETE("/canned-replies/:id", s.deleteCannedReply)

	t.GET("/members", s.listMembers)
	t.POST("/members", s.inviteMember)
	t.PATCH("/members/:user", s.updateMember)
	t.DELETE("/members/:user", s.removeMember)
	t.GET("/audit-log", s.auditLog)

	t.PUT("/identity", s.putIdentity)
	t.GET("/identity", s.getIdentity)
	t.DELETE("/identity", s.deleteIdentity)
	t.DELETE("/members/:user/sessions", s.endMemberSessions)
	t.PUT("/sso", s.putSSO)
	t.GET("/sso", s.getSSO)
	t.DELETE("/sso", s.deleteSSO)

	t.PUT("/providers/:name", s.putProvider)
	t.GET("/providers", s.listProviders)
	t.DELETE("/providers/:name", s.deleteProvider)

	t.GET("/limits", s.getLimits)
	t.PUT("/limits", s.putLimits)

	t.POST("/bots", s.createBot)
	t.GET("/bots", s.listBots)
	t.GET("/bots/:bot", s.getBot)
	t.PATCH("/bots/:bot", s.updateBot)
	t.DELETE("/bots/:bot", s.deleteBot)
	t.POST("/bots/:bot/tests", s.runTests)
	t.GET("/bots/:bot/canary", s.getCanary)
	t.PUT("/bots/:bot/canary", s.setCanary)
	t.DELETE("/bots/:bot/canary", s.dropCanary)
	t.POST("/bots/:bot/canary/promote", s.promoteCanary)
	t.POST("/bots/:bot/versions", s.createVersion)
	t.GET("/bots/:bot/versions", s.listVersions)
	t.GET("/bots/:bot/versions/:n", s.getVersion)
	t.GET("/bots/:bot/versions/:n/diff/:m", s.diffVersions)
	t.POST("/bots/:bot/publish", s.publish)
	t.GET("/bots/:bot/draft", s.getDraft)
	t.PUT("/bots/:bot/draft", s.putDraft)
	t.DELETE("/bots/:bot/draft", s.deleteDraft)
	t.POST("/tools/try", d.tryTool)

	t.POST("/webhooks", s.createWebhook)
	t.GET("/webhooks", s.listWebhooks)
	t.GET("/webhooks/:id", s.getWebhook)
	t.PATCH("/webhooks/:id", s.updateWebhook)
	t.DELETE("/webhooks/:id", s.deleteWebhook)
	t.POST("/webhooks/:id/rotate-secret", s.rotateWebhookSecret)
	t.POST("/webhooks/:id/test", s.testWebhook)
	t.GET("/webhooks/:id/deliveries", s.listWebhookDeliveries)
	t.POST("/webhooks/:id/deliveries/:delivery/replay", s.replayWebhookDelivery)

	t.POST("/knowledge-bases", s.createKnowledgeBase)
	t.GET("/knowledge-bases", s.listKnowledgeBases)
	t.GET("/knowledge-bases/:kb", s.getKnowledgeBase)
	t.PATCH("/knowledge-bases/:kb", s.updateKnowledgeBase)
	t.DELETE("/knowledge-bases/:kb", s.deleteKnowledgeBase)
	t.POST("/knowledge-bases/:kb/sources", s.addSource) // sourcesRoute
	t.GET("/knowledge-bases/:kb/sources", s.listSources)
	t.GET("/knowledge-bases/:kb/sources/:source", s.getSource)
	t.DELETE("/knowledge-bases/:kb/sources/:source", s.deleteSource)
	t.POST("/knowledge-bases/:kb/sources/:source/refresh", s.refreshSource)
	t.GET("/knowledge-bases/:kb/sources/:source/chunks", s.sourceChunks)
	t.POST("/knowledge-bases/:kb/search", s.searchKnowledge)
	t.POST("/knowledge-bases/:kb/reindex", s.reindexKnowledgeBase)

	t.POST("/channels", s.createChannel)
	t.GET("/channels", s.listChannels)
	t.GET("/channels/:id", s.getChannel)
	t.PATCH("/channels/:id", s.updateChannel)
	t.DELETE("/channels/:id", s.deleteChannel)
	t.POST("/channels/:id/telegram/set-webhook", s.setTelegramWebhook)
	t.POST("/channels/:id/rotate-secret", s.rotateChannelSecret)

	t.POST("/bots/:bot/dialogs", d.createDialog)
	t.GET("/dialogs", d.listDialogs)
	t.GET("/dialogs/export", d.exportDialogs)
	t.GET("/dialogs/:dialog", d.getDialog)
	t.DELETE("/dialogs/:dialog", d.deleteDialog)
	t.DELETE("/end-users/:user_id", d.eraseEndUser)
	t.GET("/end-users/:user_id/memory", d.userMemory)
	t.DELETE("/end-users/:user_id/memory/:note", d.deleteMemoryNote)
	t.POST("/dialogs/:dialog/messages", d.postMessage) // messagesRoute
	t.POST("/dialogs/:dialog/messages/:message/feedback", d.putFeedback)
	t.POST("/dialogs/:dialog/tool-results", d.postToolResults)
	t.POST("/dialogs/:dialog/confirmations", d.postConfirmation)
	t.POST("/dialogs/:dialog/cancel", d.cancelReply)
	t.POST("/dialogs/:dialog/close", d.closeDialog)
	t.GET("/dialogs/:dialog/events", d.followDialog)
	t.POST("/dialogs/:dialog/assign", d.assignDialog)
	t.POST("/dialogs/:dialog/operator-messages", d.postOperatorMessage)
	t.POST("/dialogs/:dialog/release", d.releaseDialog)
	t.POST("/dialogs/:dialog/typing", d.typing)
	t.POST("/dialogs/:dialog/read", d.markRead)
	t.POST("/dialogs/:dialog/notes", d.addNote)
	t.GET("/dialogs/:dialog/notes", d.listNotes)
	t.GET("/inbox", d.listInbox)
	t.GET("/usage", d.usage)
	t.GET("/usage/series", d.activity)
	t.GET("/analytics", d.analytics)
	t.GET("/analytics/unanswered", d.unanswered)
	t.POST("/dialogs/:dialog/rating", d.rateDialog)
	t.PUT("/dialogs/:dialog/labels", d.setLabels)
	t.POST("/dialogs/:dialog/to-test", s.dialogToTest)
}
