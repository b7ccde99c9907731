//! Who an operation is for: an agent (which transport, connection and token), the human user,
//! or the app's own code. Every operation the dispatcher runs carries one.

use serde::Serialize;
use std::sync::Arc;

/// Who made an operation on the [`Ui`](crate::gui::Ui): an agent, the human user, or the app's
/// own code. Every operation carries one: the dispatcher hands it to the action
/// ([`ActionContext::actor`](crate::gui::ActionContext::actor)) and records it.
///
/// Serialized (for logs and the app's own displays) internally tagged:
/// `{"kind": "agent", "transport": "stdio", "connection": "stdio-1", "token": null,
/// "clientInfo": {"name": "claude-code", "version": "1.0"}}`, `{"kind": "user"}`,
/// `{"kind": "app"}`.
///
/// | operation | actor |
/// | --- | --- |
/// | `tools/call` over MCP | [`Actor::Agent`], filled in by the transport (see [`AgentActor`]) |
/// | [`Bridge::call_tool`](crate::gui::Bridge::call_tool), [`Ui::call_tool`](crate::gui::Ui::call_tool) with `by_user = false` | [`AgentActor::in_process`] |
/// | [`Ui::call_tool`](crate::gui::Ui::call_tool) with `by_user = true`, [`Ui::edit`](crate::gui::Ui::edit), [`Ui::edit_app`](crate::gui::Ui::edit_app) | [`Actor::User`] |
/// | [`Ui::open`](crate::gui::Ui::open), [`Ui::close`](crate::gui::Ui::close), [`Ui::refresh_all`](crate::gui::Ui::refresh_all), [`Ui::clear_failure`](crate::gui::Ui::clear_failure) | [`Actor::App`] |
/// | the `*_as` forms ([`Bridge::call_tool_as`](crate::gui::Bridge::call_tool_as), [`Ui::call_tool_as`](crate::gui::Ui::call_tool_as), [`Ui::edit_as`](crate::gui::Ui::edit_as), [`Ui::edit_app_as`](crate::gui::Ui::edit_app_as)) | the one given |
///
/// A `#[bridge_window(shared_state)]` window is re-rendered after every operation: a change it
/// shows then belongs to that operation, and so to its actor (after [`Ui::refresh_all`](crate::gui::Ui::refresh_all),
/// the app). Companion requests are not operations on the UI and have no actor here.
///
/// Only [`Actor::Agent`] is held to what an agent may do (a window marked failed refuses it,
/// [`Ui::failure`](crate::gui::Ui::failure)); the user and the app are not. Nothing an agent
/// sends chooses its actor: the transport does (GB-10.1-2: agents and the user share one UI;
/// MA-11-4: a click in an MCP Apps view reaches bridge as its host's `tools/call`, so it is
/// the agent's, never the user's).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
#[non_exhaustive]
pub enum Actor {
    /// An agent: an MCP client (or code calling as one).
    Agent(AgentActor),
    /// The human user, through the app's own controls.
    User,
    /// The app's own code: host code that opens, closes or refreshes windows on its own
    /// account. Never the MCP host (which, in MCP's words, is the agent's client application).
    App,
}

impl Actor {
    /// Whether this is an agent, held to what agents may do.
    pub fn is_agent(&self) -> bool {
        matches!(self, Actor::Agent(_))
    }

    /// Whether this is the human user.
    pub fn is_user(&self) -> bool {
        matches!(self, Actor::User)
    }

    /// Whether this is the app's own code.
    pub fn is_app(&self) -> bool {
        matches!(self, Actor::App)
    }

    /// The agent, when it is one.
    pub fn agent(&self) -> Option<&AgentActor> {
        match self {
            Actor::Agent(agent) => Some(agent),
            _ => None,
        }
    }
}

/// Which agent made an operation: the transport it came over and what that transport proves
/// about it. `connection` and `token` are what tells two agents apart; `client_info` is what
/// the client says about itself, recorded and never trusted (MA-2-5).
///
/// | transport | `connection` | `token` |
/// | --- | --- | --- |
/// | stdio ([`serve_stdio`](crate::mcp::serve_stdio), [`serve_stdio_on`](crate::mcp::serve_stdio_on)) | `"stdio-N"`, one per served connection, counted from 1 in the process | `None` |
/// | HTTP, legacy 2025-11-25 era | the `Mcp-Session-Id` (none on the `initialize` itself) | the named token's label ([`TokenLabel`](crate::mcp::TokenLabel)), when the request presented one |
/// | HTTP, 2026-07-28 era | `None`: the era has no sessions (MA-1-2) | as above |
/// | any other rmcp transport (`GuiBridgeServer::new(b).serve(t)`) | `"conn-N"`, one per server value | `None` |
/// | in-process ([`AgentActor::in_process`]) | `None` | `None` |
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct AgentActor {
    /// The transport the operation came over.
    pub transport: Transport,
    /// The connection or legacy session it came on, when the transport has one (see the table).
    pub connection: Option<Arc<str>>,
    /// The label of the HTTP access token the request presented (`"default"` for a single
    /// unnamed token), `None` without one.
    pub token: Option<Arc<str>>,
    /// The `clientInfo` the client sent (`initialize`, or the request's `_meta` in the
    /// 2026-07-28 era): self-reported, recorded for people to read, never identity and never
    /// used to decide anything (MA-2-5).
    pub client_info: Option<ClientInfo>,
}

impl AgentActor {
    /// An agent of `transport` with nothing else known.
    pub fn new(transport: Transport) -> Self {
        Self { transport, connection: None, token: None, client_info: None }
    }

    /// The agent of in-process calls ([`Bridge::call_tool`](crate::gui::Bridge::call_tool),
    /// [`Ui::call_tool`](crate::gui::Ui::call_tool) with `by_user = false`, the test kit's
    /// [`TestApp::call`](crate::testing::TestApp::call) when built with `testing`): no
    /// connection, no token, no `clientInfo`.
    pub fn in_process() -> Self {
        Self::new(Transport::InProcess)
    }

    /// With `connection` (see the table on [`AgentActor`]).
    pub fn with_connection(mut self, connection: impl Into<Arc<str>>) -> Self {
        self.connection = Some(connection.into());
        self
    }

    /// With the label of the access token the request presented.
    pub fn with_token(mut self, label: impl Into<Arc<str>>) -> Self {
        self.token = Some(label.into());
        self
    }

    /// With the `clientInfo` the client reported.
    pub fn with_client_info(mut self, info: ClientInfo) -> Self {
        self.client_info = Some(info);
        self
    }
}

impl From<AgentActor> for Actor {
    fn from(agent: AgentActor) -> Self {
        Actor::Agent(agent)
    }
}

/// The transport an agent's operation came over. Serialized in lower case (`"stdio"`,
/// `"http"`, `"other"`, `"inProcess"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum Transport {
    /// MCP over stdio (one client per connection).
    Stdio,
    /// MCP over streamable HTTP, either era.
    Http,
    /// MCP over another rmcp transport the app serves the server on.
    Other,
    /// A direct call in the same process: no transport.
    InProcess,
}

/// A client's self-reported `clientInfo`: `{"name", "version"}` (MA-2-4). Recorded, never
/// identity (MA-2-5).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ClientInfo {
    /// `clientInfo.name`.
    pub name: Arc<str>,
    /// `clientInfo.version`.
    pub version: Arc<str>,
}

impl ClientInfo {
    /// `clientInfo` with `name` and `version`.
    pub fn new(name: impl Into<Arc<str>>, version: impl Into<Arc<str>>) -> Self {
        Self { name: name.into(), version: version.into() }
    }
}
