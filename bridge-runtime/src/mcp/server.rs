//! [`GuiBridgeServer`]: the `rmcp::ServerHandler` of the GUI Bridge.

use super::WINDOWS_URI;
use super::apps::{self, AppViews};
#[cfg(feature = "companion")]
use super::companion::CompanionTools;
use super::mapping::{list_resources, read_windows, to_call_tool_result, to_mcp_tool};
use super::notify::{Connection, Revs};
use super::order::{CallOrder, Turn};
#[cfg(feature = "companion")]
use crate::catalog::claims_companion;
use crate::gui::{Actor, AgentActor, Bridge, ClientInfo, Published, Transport};
use crate::model::quote::{clip, clip_to};
use rmcp::model::{
    CacheScope, CallToolRequestParams, CallToolResponse, Implementation, InitializeRequestParams, InitializeResult,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    ReadResourceRequestParams, ReadResourceResponse, ServerCapabilities, ServerConfig, SubscribeRequestParams,
    SubscriptionFilter, Tool, UnsubscribeRequestParams,
};
use rmcp::service::{NotificationContext, RequestContext, RoleServer, SubscriptionContext};
use rmcp::{ErrorData, ServerHandler};
use serde_json::json;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// The GUI Bridge MCP server for one connection: a hand-written `rmcp::ServerHandler` over a
/// [`Bridge`], plus, where the app serves them on this transport, the desktop companion's
/// capabilities as `companion__{id}` tools ([`GuiBridgeServer::with_companion`], CP-1-4).
///
/// UI state lives in the [`Bridge`] (shared by every connection, GB-10.1-1); this value holds
/// the surfaces it serves, the MCP Apps view table they share, and the connection's own
/// notification state: its legacy `resources/subscribe` subscription, its
/// `subscriptions/listen` streams and the revisions each was last told about (GB-10.1-5).
/// Creating one is cheap (rmcp's HTTP transport makes one per session, and per `POST` in the
/// 2026-07-28 era, by cloning the one given to [`http_router`](super::http_router)).
///
/// Compose it once per transport and serve it: `serve_stdio(GuiBridgeServer::new(bridge))`,
/// or on any rmcp transport `GuiBridgeServer::new(bridge).serve(transport).await`. A
/// [`Bridge`] converts into a server without companion tools.
///
/// `Clone` gives a server for a *new* connection with the same surfaces: the clone shares the
/// bridge, the companion tools and the view table, not the original's subscriptions, so cloning
/// one value into a transport factory is safe.
pub struct GuiBridgeServer {
    bridge: Bridge,
    #[cfg(feature = "companion")]
    companion: Option<Arc<CompanionTools>>,
    /// The MCP Apps view table, shared by every connection made from this value.
    views: Arc<AppViews>,
    conn: Arc<Connection>,
    /// The connection's call tickets, when its transport takes them (stdio).
    order: Option<Arc<CallOrder>>,
    /// The transport this value serves, as far as it knows (HTTP is told by the request).
    transport: Transport,
    /// This value's connection number: `conn-N`, or `stdio-N` on stdio.
    serial: u64,
}

/// Numbers of server values served on other transports (`conn-N`), from 1.
static CONNECTIONS: AtomicU64 = AtomicU64::new(1);
/// Numbers of stdio connections (`stdio-N`), from 1.
static STDIO_CONNECTIONS: AtomicU64 = AtomicU64::new(1);

/// Most characters of a `clientInfo` name or version recorded in an [`AgentActor`].
const CLIENT_INFO_CHARS: usize = 128;

impl GuiBridgeServer {
    /// A server for one connection to `bridge`, serving its windows and app actions.
    pub fn new(bridge: Bridge) -> Self {
        Self {
            bridge,
            #[cfg(feature = "companion")]
            companion: None,
            views: Arc::default(),
            conn: Arc::new(Connection::new()),
            order: None,
            transport: Transport::Other,
            serial: CONNECTIONS.fetch_add(1, Ordering::Relaxed),
        }
    }

    /// Also serves the companion's capabilities as MCP tools (`companion__{id}`, CP-1-4), every
    /// call going through the tools' engine as their identity: the same dispatcher, scopes,
    /// queue and lifecycle as socket clients (CP-1-6). The app decides, per transport and with
    /// its user, whether MCP clients get them and with which scopes. Replaces tools set before.
    /// The bridge's caps on a call's arguments ([`Bridge::argument_limits`]) apply to these
    /// tools too.
    #[cfg(feature = "companion")]
    #[cfg_attr(docsrs, doc(cfg(feature = "companion")))]
    pub fn with_companion(mut self, tools: CompanionTools) -> Self {
        self.companion = Some(Arc::new(tools.with_limits(self.bridge.argument_limits())));
        self
    }

    /// The bridge this server exposes.
    pub fn bridge(&self) -> &Bridge {
        &self.bridge
    }

    /// Runs this connection's requests in the order of the tickets its transport takes in
    /// `order` (the stdio pre-layer).
    pub(crate) fn with_call_order(mut self, order: Arc<CallOrder>) -> Self {
        self.order = Some(order);
        self
    }

    /// Serves one stdio connection: its agent is `stdio-N`, a number of its own.
    pub(crate) fn on_stdio(mut self) -> Self {
        self.transport = Transport::Stdio;
        self.serial = STDIO_CONNECTIONS.fetch_add(1, Ordering::Relaxed);
        self
    }

    /// The agent making this request, as its transport identifies it (the table on
    /// [`AgentActor`]): over HTTP the legacy session (none in the 2026-07-28 era, MA-1-2) and
    /// the label of the token the request presented; over stdio or another transport this
    /// value's connection. `clientInfo` is recorded as sent, clipped, and decides nothing
    /// (MA-2-5).
    fn agent(&self, context: &RequestContext<RoleServer>) -> AgentActor {
        let mut agent = self.connection_agent(context);
        agent.client_info = context.client_info().map(|info| {
            ClientInfo::new(
                clip_to(&info.name, CLIENT_INFO_CHARS).as_ref(),
                clip_to(&info.version, CLIENT_INFO_CHARS).as_ref(),
            )
        });
        agent
    }

    fn connection_agent(&self, context: &RequestContext<RoleServer>) -> AgentActor {
        #[cfg(feature = "http")]
        if let Some(parts) = context.extensions.get::<axum::http::request::Parts>() {
            let mut agent = AgentActor::new(Transport::Http);
            // A legacy request's session id, which rmcp has already matched to a live session;
            // a 2026-07-28 request (its protocol version in `_meta`) has none.
            if context.meta.protocol_version().is_none() {
                agent.connection =
                    parts.headers.get("mcp-session-id").and_then(|v| v.to_str().ok()).map(|v| clip(v).as_ref().into());
            }
            agent.token = parts.extensions.get::<super::TokenLabel>().map(|label| label.0.clone());
            return agent;
        }
        #[cfg(not(feature = "http"))]
        let _ = context;
        match self.transport {
            Transport::Stdio => AgentActor::new(Transport::Stdio).with_connection(format!("stdio-{}", self.serial)),
            transport => AgentActor::new(transport).with_connection(format!("conn-{}", self.serial)),
        }
    }

    /// Waits for this request's turn: requests of one connection that read or change state
    /// take effect in arrival order (GB-10.1-3); one cancelled before its turn never runs
    /// (rmcp drops the answer of a cancelled request). `None` where the transport takes no
    /// tickets.
    async fn turn(&self, context: &RequestContext<RoleServer>) -> Result<Option<Turn<'_>>, ErrorData> {
        match &self.order {
            Some(order) => match order.turn(&context.id, &context.ct).await {
                Some(turn) => Ok(Some(turn)),
                None => Err(ErrorData::invalid_request("Request cancelled before it started", None)),
            },
            None => Ok(None),
        }
    }

    fn now(&self) -> Revs {
        Revs::of(&self.bridge.published())
    }
}

impl From<Bridge> for GuiBridgeServer {
    /// [`GuiBridgeServer::new`]: the bridge's windows and app actions, no companion tools.
    fn from(bridge: Bridge) -> Self {
        Self::new(bridge)
    }
}

impl GuiBridgeServer {
    /// Whether this server also serves the companion's tools (the HTTP transport then refuses
    /// to run without an access token).
    #[cfg(feature = "http")]
    pub(crate) fn carries_companion(&self) -> bool {
        #[cfg(feature = "companion")]
        return self.companion.is_some();
        #[cfg(not(feature = "companion"))]
        false
    }
}

impl Clone for GuiBridgeServer {
    fn clone(&self) -> Self {
        Self {
            bridge: self.bridge.clone(),
            #[cfg(feature = "companion")]
            companion: self.companion.clone(),
            views: self.views.clone(),
            conn: Arc::new(Connection::new()),
            order: None,
            transport: Transport::Other,
            serial: CONNECTIONS.fetch_add(1, Ordering::Relaxed),
        }
    }
}

impl std::fmt::Debug for GuiBridgeServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut d = f.debug_struct("GuiBridgeServer");
        d.field("bridge", &self.bridge);
        #[cfg(feature = "companion")]
        d.field("companion", &self.companion);
        d.finish_non_exhaustive()
    }
}

impl ServerHandler for GuiBridgeServer {
    /// Capabilities `{"resources": {"subscribe": true}, "tools": {"listChanged": true},
    /// "extensions": {"io.modelcontextprotocol/ui": {}}}` and nothing else (no
    /// `resources.listChanged`: the resource list never changes, GB-12.1-2; the MCP Apps
    /// extension, MA-3-1), the GB-8.1-3 instructions plus the app's notes, and `serverInfo`
    /// from the builder (GB-3-2, GB-3-3, GB-8.1). `server/discover` answers from the same
    /// value.
    fn get_info(&self) -> ServerConfig {
        let id = self.bridge.identity();
        let capabilities = ServerCapabilities::builder()
            .enable_extensions_with(apps::server_extensions())
            .enable_resources()
            .enable_resources_subscribe()
            .enable_tools()
            .enable_tool_list_changed()
            .build();
        ServerConfig::new(capabilities)
            .with_instructions(id.instructions.clone())
            .with_server_info(Implementation::new(id.name.clone(), id.version.clone()))
    }

    /// Legacy handshake: the connection's notification baseline is taken here, so that a
    /// change between this response and `notifications/initialized` is still announced.
    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        self.conn.legacy_begin(self.now()).await;
        context.peer.set_peer_info(request.clone());
        self.negotiate_initialize(&request)
    }

    /// Captures the legacy peer and starts the connection's notification forwarder
    /// (GB-10.1-4).
    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        tracing::debug!("MCP client initialized");
        self.conn.legacy_attach(&self.bridge, context.peer).await;
    }

    /// No templates (the one resource is `app://windows`), with the server identity in `_meta`
    /// like every other result (MA-13-4).
    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        let _turn = self.turn(&context).await?;
        let mut result = ListResourceTemplatesResult::with_all_items(Vec::new());
        result.meta = Some(apps::server_info_meta(self.bridge.identity()));
        Ok(result)
    }

    /// Exactly `app://windows` (GB-12.1-1).
    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let _turn = self.turn(&context).await?;
        let mut result = list_resources();
        result.meta = Some(apps::server_info_meta(self.bridge.identity()));
        Ok(result)
    }

    /// `app://windows` → the snapshot as one `application/json` text content (GB-12.2-1), with
    /// `_meta["bridge/windowTools"]` for a client with the MCP Apps extension (the windows'
    /// listed tools, so a view can offer them); a `ui://` view URI → the window view for a
    /// client with the extension (MA-6-5), `-32021` for one without (MA-12-4); any other URI → resource-not-found, `-32002`
    /// (OQ-GB-22; rmcp reports it as `-32602` to 2026-07-28 clients, as that revision
    /// requires). Results carry the server identity in `_meta` (MA-13-4).
    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let _turn = self.turn(&context).await?;
        let mut meta = apps::server_info_meta(self.bridge.identity());
        let mut result = if request.uri == WINDOWS_URI {
            let published = self.bridge.published();
            if apps::client_supports_ui(&context) {
                meta.insert(apps::WINDOW_TOOLS_META_KEY.to_owned(), apps::window_tools(&published));
            }
            read_windows(&published)
        } else if request.uri.starts_with(apps::UI_SCHEME) {
            if !apps::client_supports_ui(&context) {
                return Err(apps::missing_ui_capability());
            }
            self.views.current(&self.bridge).read(&request.uri).ok_or_else(|| {
                ErrorData::resource_not_found(
                    format!(
                        "No view '{}': view URIs change with each build; list tools to get the current one",
                        clip(&request.uri)
                    ),
                    Some(json!({ "uri": clip(&request.uri) })),
                )
            })?
        } else {
            return Err(ErrorData::resource_not_found(
                format!("No resource '{}': the only resource is {WINDOWS_URI}", clip(&request.uri)),
                Some(json!({ "uri": clip(&request.uri) })),
            ));
        };
        result.meta = Some(meta);
        Ok(result.into())
    }

    /// Legacy `resources/subscribe`: only `app://windows`, per connection (GB-10.1-5); any
    /// other URI is an invalid-params error.
    #[allow(deprecated)]
    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let _turn = self.turn(&context).await?;
        if request.uri != WINDOWS_URI {
            return Err(ErrorData::invalid_params(
                format!("Cannot subscribe to '{}': the only resource is {WINDOWS_URI}", clip(&request.uri)),
                Some(json!({ "uri": clip(&request.uri) })),
            ));
        }
        self.conn.legacy_subscribe(self.now()).await;
        // A client that skipped `notifications/initialized` still gets its updates.
        if !self.conn.legacy_attached().await {
            self.conn.legacy_attach(&self.bridge, context.peer).await;
        }
        Ok(())
    }

    /// Legacy `resources/unsubscribe`: stops `resources/updated` for this connection only.
    #[allow(deprecated)]
    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let _turn = self.turn(&context).await?;
        if request.uri != WINDOWS_URI {
            return Err(ErrorData::invalid_params(
                format!("Not subscribed to '{}': the only resource is {WINDOWS_URI}", clip(&request.uri)),
                Some(json!({ "uri": clip(&request.uri) })),
            ));
        }
        self.conn.legacy_unsubscribe().await;
        Ok(())
    }

    /// 2026-07-28 `subscriptions/listen`: accepts `toolsListChanged` and a resource
    /// subscription to `app://windows`, nothing else. Runs before rmcp sends the
    /// acknowledgment, so the listen's baseline is taken here.
    fn accepted_subscription_filter(&self, requested: &SubscriptionFilter) -> Option<SubscriptionFilter> {
        self.conn.push_baseline(self.now());
        let mut accepted = SubscriptionFilter::new();
        if requested.tools_list_changed == Some(true) {
            accepted.tools_list_changed = Some(true);
        }
        if requested.resource_subscriptions.as_ref().is_some_and(|uris| uris.iter().any(|u| u == WINDOWS_URI)) {
            accepted.resource_subscriptions = Some(vec![WINDOWS_URI.to_owned()]);
        }
        Some(accepted)
    }

    /// Delivers `notifications/resources/updated` (app://windows) and
    /// `notifications/tools/list_changed` on this stream until the client cancels it. Starts
    /// with a catch-up for anything that changed since the baseline taken before the
    /// acknowledgment.
    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        let baseline = self.conn.take_baseline().unwrap_or_else(|| self.now());
        let accepted = context.accepted();
        let windows = accepted.resource_subscriptions.as_ref().is_some_and(|u| u.iter().any(|u| u == WINDOWS_URI));
        let tools = accepted.tools_list_changed == Some(true);
        let mut rx = self.bridge.watch();
        let key = self.conn.add_listen(context.sink().clone(), windows, tools, baseline).await;
        self.conn.flush(self.now()).await;
        loop {
            tokio::select! {
                _ = context.cancelled() => break,
                changed = rx.changed() => {
                    if changed.is_err() {
                        break;
                    }
                    let now = Revs::of(&rx.borrow_and_update());
                    self.conn.flush(now).await;
                }
            }
        }
        self.conn.remove_listen(key).await;
        Ok(())
    }

    /// The tools of the operable windows whose actions are available right now (GB-5.1-4).
    /// Window tools carry `_meta["bridge/windowId"]`, and `_meta.ui.resourceUri` when this
    /// request's client declared the MCP Apps extension (MA-4-1, MA-12-2). Never cached by the
    /// client (`ttlMs: 0`, `cacheScope: "private"`: the list changes with the UI and with the
    /// client's capabilities, MA-4-5, MA-4-6, OQ-MA-7); the server identity in `_meta`
    /// (MA-13-4).
    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let _turn = self.turn(&context).await?;
        let views = apps::client_supports_ui(&context).then(|| self.views.current(&self.bridge));
        #[allow(unused_mut)] // without the `companion` feature nothing is added
        let mut tools: Vec<Tool> = self
            .bridge
            .published()
            .tools
            .iter()
            .map(|entry| {
                let mut tool = to_mcp_tool(entry);
                if let Some(views) = &views {
                    views.bind(&mut tool, entry);
                }
                tool
            })
            .collect();
        #[cfg(feature = "companion")]
        if let Some(companion) = &self.companion {
            tools.extend(companion.tools());
        }
        let mut result = ListToolsResult::with_all_items(tools).with_ttl_ms(0).with_cache_scope(CacheScope::Private);
        result.meta = Some(apps::server_info_meta(self.bridge.identity()));
        Ok(result)
    }

    /// The listed tool named `name` (rmcp's HTTP transport validates `Mcp-Param-*` headers
    /// with it).
    fn get_tool(&self, name: &str) -> Option<Tool> {
        let window_tool = self.bridge.published().tool(name).map(to_mcp_tool);
        #[cfg(feature = "companion")]
        let window_tool = window_tool.or_else(|| self.companion.as_ref().and_then(|c| c.tool(name)));
        window_tool
    }

    /// Runs the call through the bridge on the account of the agent this request's transport
    /// identifies (see [`AgentActor`]; GB-7.2 checks, schema validation, the action,
    /// timeout: all in [`Bridge::call_tool_as`]), then writes this connection's pending
    /// notifications, then answers (see the module docs on ordering). A window tool's result
    /// names its window in `_meta["bridge/windowId"]`; for a client with the MCP Apps extension
    /// it also carries that window's state after the call (`_meta["bridge/window"]`) and tools
    /// (`_meta["bridge/windowTools"]`), so a view can show it in a host that does not proxy
    /// `resources/read`. Missing `arguments` is `{}`. GB failures, unknown tool names included, are `isError` results, never JSON-RPC
    /// errors (GB-7.4-1, OQ-GB-21).
    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        // Calls of one connection take effect in arrival order (GB-10.1-3); one cancelled
        // before its turn never runs (rmcp drops the answer of a cancelled request).
        let _turn = self.turn(&context).await?;
        let args = request.arguments.unwrap_or_default();
        let mut meta = apps::server_info_meta(self.bridge.identity());
        let listed = Published::listed(&self.bridge.published(), &request.name);
        #[cfg(feature = "companion")]
        if listed.is_none()
            && let Some(companion) = &self.companion
        {
            let resolved = companion.resolve(&request.name);
            if resolved.is_some() || claims_companion(&request.name) {
                // A companion call may wait long (for the user): it starts in order but does not
                // hold the connection's later calls back.
                drop(_turn);
                let mut result = match resolved {
                    Some(cap) => companion.call_resolved(&cap, args).await,
                    None => super::companion::unsupported(&request.name),
                };
                result.meta = Some(meta);
                return Ok(result.into());
            }
        }
        // The window the tool acts on, as listed (`bridge/windowId`), so a view can follow it.
        let window_id = listed.as_ref().and_then(|t| t.entry().window_id.clone());
        if let Some(id) = &window_id {
            meta.insert(apps::WINDOW_ID_META_KEY.to_owned(), id.clone().into());
        }
        let actor = Actor::Agent(self.agent(&context));
        let outcome = match listed {
            Some(tool) => self.bridge.call_listed(actor, tool, args).await,
            None => self.bridge.call_tool_as(actor, &request.name, args).await,
        };
        if let Err(e) = &outcome.result {
            tracing::debug!(tool = %clip(&request.name), code = %e.code, "tool call failed");
        }
        let now = Revs::of(&outcome.published).max(self.now());
        self.conn.flush(now).await;
        if let Some(id) = &window_id
            && apps::client_supports_ui(&context)
        {
            apps::insert_window_state(&mut meta, &outcome.published, id);
        }
        let mut result = to_call_tool_result(&outcome.result);
        result.meta = Some(meta);
        Ok(result.into())
    }
}

/// The answer a transport's pre-layer gives a `tools/call` it refuses before rmcp reads it
/// (arguments nested deeper than the parser reads): `error` in the dispatcher's own shape (see
/// [`GuiBridgeServer::call_tool`](ServerHandler::call_tool)): the text mirror,
/// `structuredContent`, `isError`, and `_meta` with the server's identity and, for a listed
/// window tool `tool`, `bridge/windowId` (and, for a client with the MCP Apps extension, `ui`,
/// the window's current state and tools). `modern`: the request is of the 2026-07-28 revision,
/// whose results carry `resultType: "complete"`; rmcp leaves it out for older peers, and so
/// does this.
pub(crate) fn refused_call_result(
    bridge: &Bridge,
    tool: Option<&str>,
    error: crate::model::ToolError,
    modern: bool,
    ui: bool,
) -> rmcp::model::CallToolResult {
    let mut meta = apps::server_info_meta(bridge.identity());
    let published = bridge.published();
    let window_id = tool.and_then(|name| Published::listed(&published, name)).and_then(|t| t.entry().window_id.clone());
    if let Some(id) = window_id {
        if ui {
            apps::insert_window_state(&mut meta, &published, &id);
        }
        meta.insert(apps::WINDOW_ID_META_KEY.to_owned(), id.into());
    }
    let mut result = to_call_tool_result(&Err(error));
    result.meta = Some(meta);
    if !modern {
        result.result_type = None;
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    // A transport factory clones one composed server per connection (per 2026-07-28 POST): the
    // clones share the view table, never the connection state.
    #[test]
    fn clones_share_the_view_table_not_the_connection() {
        let server = GuiBridgeServer::new(Bridge::builder("t", "0").spawn_headless(|_| {}));
        let clone = server.clone();
        assert!(Arc::ptr_eq(&server.views, &clone.views));
        assert!(!Arc::ptr_eq(&server.conn, &clone.conn));
    }
}
