//! The result types of the companion methods ([`super::Method`]): what the engine and the
//! socket server serialize and what the CLI deserializes. Wire names are the spec's, byte for
//! byte (camelCase); Rust names are their snake_case twins. Within a major version results
//! only gain keys (CP-7-4): readers ignore keys they do not know.

use crate::catalog::{CapabilitySpec, Scope};
use crate::companion::model::{RequestSnapshot, RequestState};
use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::borrow::Cow;

/// `runtime.describe` result (CP-2-2, CP-7-1): implementation, protocol version(s), runtime
/// instance, catalog revision, limits, the caller's authorisation, result retention and the
/// user's availability settings. Over the socket it is open to unauthenticated clients, so the
/// protocol version can always be negotiated (CP-7-2), and carries the transport's limits and
/// `authentication`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RuntimeDescription {
    /// The implementation (CP-7-1: distinct from protocol and capability versions).
    pub implementation: Implementation,
    /// The protocol version spoken (CP-7-1).
    pub protocol_version: String,
    /// Every protocol version this runtime speaks.
    pub supported_protocol_versions: Vec<String>,
    /// Changes when the app restarts (CP-4-21).
    pub runtime_instance_id: String,
    /// The registry's revision; cursors of `capabilities.list` belong to one revision (CP-2-4).
    pub catalog_revision: u64,
    /// Capacity, rate, wait and transport limits.
    pub limits: Limits,
    /// Who the runtime thinks the caller is (`clientId` `null` before authentication).
    pub authorization: Authorization,
    /// How long results stay readable, ms (CP-4-16).
    pub result_retention_ms: u64,
    /// The user's settings (CP-4-15).
    pub availability: Availability,
    /// Over the socket: the methods that authenticate a connection and pair a new client.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Authentication")]
    pub authentication: Option<Authentication>,
    /// Present only when the runtime is unhealthy (e.g. its state store failed to sync, so it
    /// confirms nothing until it restarts); absent means healthy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Health")]
    pub health: Option<Health>,
}

/// `runtime.describe` `health`: why the runtime cannot do its job until it restarts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Health {
    /// `"unhealthy"`.
    pub status: String,
    /// What failed, for the user (no content, no credentials).
    pub reason: String,
}

/// `runtime.describe` `implementation`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Implementation {
    /// Implementation name.
    pub name: String,
    /// Implementation version.
    pub version: String,
}

/// `runtime.describe` `limits`: capacity, rate, wait and transport limits; times in ms, sizes in
/// bytes (CP-4-8, CP-5-13, OQ-CP-7, OQ-CP-8). The transport's limits are present over the socket.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Limits {
    /// Non-terminal requests one client may have.
    pub max_active_per_client: u64,
    /// Non-terminal requests overall.
    pub max_active_total: u64,
    /// Stored records, terminal ones included.
    pub max_records: u64,
    /// Stored records one client may hold, terminal ones included: its share of `maxRecords`
    /// (beyond → `QUEUE_FULL` with `limit: "maxRecordsPerClient"`). Always published by this
    /// runtime; absent (not published, no default) only in an older runtime's answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "u64")]
    pub max_records_per_client: Option<u64>,
    /// Changes to what is on screen (show, update) the runtime queues for the app to draw
    /// before a `requests.update` of the request on screen is refused with `QUEUE_FULL`
    /// (`limit: "maxPendingPresentations"`). Always published by this runtime; absent (not
    /// published, no default) only in an older runtime's answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "u64")]
    pub max_pending_presentations: Option<u64>,
    /// Accepted creates per client per sliding minute.
    pub max_creates_per_minute: u64,
    /// `waitMs` when omitted.
    pub default_wait_ms: u64,
    /// Largest `waitMs`.
    pub max_wait_ms: u64,
    /// Largest `timeoutMs` any capability allows.
    pub max_timeout_ms: u64,
    /// The socket transport's limits: present over the socket, absent otherwise (host callers,
    /// the MCP tools).
    #[serde(flatten)]
    pub transport: TransportLimits,
}

/// The socket transport's part of [`Limits`] (CP-5-13), published flat among the other limits;
/// sizes in bytes, times in ms. Every member is present over the socket and absent (not
/// published, no default) for callers inside the app and in an older runtime's answer. The one
/// description of these limits: the socket server (Unix only) fills it from its `ServerConfig`,
/// `runtime.describe` publishes it as is.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TransportLimits {
    /// Largest message of an authenticated connection.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "u64")]
    pub max_message_bytes: Option<u64>,
    /// Largest message before authentication (CP-5-13).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "u64")]
    pub max_unauthenticated_message_bytes: Option<u64>,
    /// Time an unauthenticated connection has for each message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "u64")]
    pub auth_timeout_ms: Option<u64>,
    /// Time a connection has from its start to authenticate (a pending `pairing.request` does
    /// not count); then it is closed, however busy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "u64")]
    pub auth_deadline_ms: Option<u64>,
    /// Unauthenticated connections at once, a part of `maxConnections`; beyond, a new one gets
    /// `QUEUE_FULL` and is closed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "u64")]
    pub max_unauthenticated_connections: Option<u64>,
    /// Largest batch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "u64")]
    pub max_batch_length: Option<u64>,
    /// Concurrent connections.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "u64")]
    pub max_connections: Option<u64>,
    /// Authenticated connections one client may hold at once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "u64")]
    pub max_connections_per_client: Option<u64>,
    /// Calls one connection may have running at once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "u64")]
    pub max_in_flight_per_connection: Option<u64>,
    /// How long a `pairing.request` waits for the user.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "u64")]
    pub pairing_timeout_ms: Option<u64>,
}

/// `runtime.describe` `authorization`: who the runtime thinks the caller is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Authorization {
    /// Over the socket: whether this connection is authenticated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "bool")]
    pub authenticated: Option<bool>,
    /// The caller's client id (`null` before authentication).
    pub client_id: Option<String>,
    /// The granted scopes (CP-5-6).
    pub scopes: Vec<Scope>,
    /// Whether the caller is a host-internal source (CP-1-5).
    pub internal: bool,
}

/// `runtime.describe` `authentication`: the methods that authenticate a connection and pair a
/// new client.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Authentication {
    /// `session.authenticate`.
    pub authenticate_method: String,
    /// `pairing.request`.
    pub pairing_method: String,
}

/// `runtime.describe` `availability`: the user's settings (CP-4-15).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Availability {
    /// Whether the sprite is shown.
    pub visible: bool,
    /// Whether external interaction is paused.
    pub external_paused: bool,
    /// Whether the user asked for reduced motion.
    pub reduced_motion: bool,
}

/// `characters.list` result (CP-2-3): the current character and every character with the
/// registered capabilities it supports.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CharacterList {
    /// The user's current character.
    pub current: Option<String>,
    /// Every character.
    pub characters: Vec<Character>,
}

/// A character as `characters.list` lists it (CP-2-3).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Character {
    /// Stable id.
    pub id: String,
    /// Display name.
    pub name: String,
    /// Ids of the registered capabilities this character presents.
    pub capabilities: Vec<String>,
}

/// `styles.list` result (CP-2-6).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StyleList {
    /// Every style.
    pub styles: Vec<Style>,
}

/// A style as `styles.list` lists it (CP-2-6).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Style {
    /// Stable id.
    pub id: String,
    /// Human-readable description.
    pub description: String,
    /// Ids of the registered capabilities the style applies to.
    pub capabilities: Vec<String>,
    /// The style used instead when this one does not apply and the caller allowed fallback;
    /// `null` if none.
    pub fallback: Option<String>,
}

/// `capabilities.list` result (CP-2-4): the descriptors the caller's scopes allow.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CapabilityPage {
    /// The registry's revision this page belongs to.
    pub catalog_revision: u64,
    /// The descriptors.
    pub capabilities: Vec<CapabilityDescriptor>,
    /// Pass as `cursor` for the next page; `null` on the last.
    pub next_cursor: Option<String>,
}

/// A capability descriptor (CP-2-5, CP-2-13), as the registry writes it
/// ([`CapabilitySpec::descriptor`]); its schema is [`CapabilitySpec::descriptor_schema`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct CapabilityDescriptor(pub Map<String, Value>);

impl CapabilityDescriptor {
    /// A string member (`id`, `version`, `kind`, `description`, …), or `""`.
    pub fn text(&self, key: &str) -> &str {
        self.0.get(key).and_then(Value::as_str).unwrap_or("")
    }
}

impl JsonSchema for CapabilityDescriptor {
    fn schema_name() -> Cow<'static, str> {
        "CapabilityDescriptor".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        Schema::try_from(CapabilitySpec::descriptor_schema()).unwrap_or_default()
    }
}

/// `requests.wait` result (CP-2-9, CP-3-20): the snapshot once it changed or ended, else the
/// `unchanged` marker.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum WaitResult {
    /// The request changed (its `revision` exceeds `afterRevision`) or is terminal.
    Changed(Box<RequestSnapshot>),
    /// `waitMs` passed without a change.
    Unchanged(Unchanged),
}

impl WaitResult {
    /// The request's state.
    pub fn state(&self) -> RequestState {
        match self {
            WaitResult::Changed(s) => s.state,
            WaitResult::Unchanged(u) => u.state,
        }
    }

    /// The request's revision.
    pub fn revision(&self) -> u64 {
        match self {
            WaitResult::Changed(s) => s.revision,
            WaitResult::Unchanged(u) => u.revision,
        }
    }
}

/// The `requests.wait` result when nothing changed before `waitMs` passed:
/// `{"unchanged": true, "requestId", "revision", "state"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Unchanged {
    /// Always `true`.
    #[schemars(extend("const" = true))]
    pub unchanged: bool,
    /// The request.
    pub request_id: String,
    /// Its current revision.
    pub revision: u64,
    /// Its current (non-terminal) state.
    pub state: RequestState,
}

/// An OpenRPC document (<https://spec.open-rpc.org>): the `rpc.discover` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OpenrpcDocument {
    /// The OpenRPC version.
    pub openrpc: String,
    /// Title, version and the document's extensions.
    pub info: Map<String, Value>,
    /// The methods.
    pub methods: Vec<Map<String, Value>>,
    /// Shared schemas and errors.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub components: Map<String, Value>,
}

/// `pairing.request` result (CP-5-2 … CP-5-4): returned exactly once.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Pairing {
    /// `cl_` + 32 hex digits.
    pub client_id: String,
    /// `ck_` + 64 hex digits; store it, it is never shown again.
    pub key: String,
    /// The granted scopes: a subset of those asked for.
    pub scopes: Vec<Scope>,
    /// The source label shown with every request (CP-4-7).
    pub label: String,
}

/// `session.authenticate` result: who this connection now is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Session {
    /// The paired client's id.
    pub client_id: String,
    /// The source label shown with every request (CP-4-7).
    pub label: String,
    /// The granted scopes.
    pub scopes: Vec<Scope>,
}

#[cfg(test)]
mod tests {
    use super::Limits;
    use serde_json::json;

    // CP-5-13, CP-2-2: the transport's limits travel flat among the other limits, each one
    // optional on its own: an answer without them (a host caller) or with only some (an older
    // runtime) reads back member by member and is written back unchanged.
    #[test]
    fn transport_limits_travel_flat_and_each_may_be_absent() {
        let base = json!({"maxActivePerClient": 1, "maxActiveTotal": 2, "maxRecords": 3, "maxCreatesPerMinute": 4,
            "defaultWaitMs": 5, "maxWaitMs": 6, "maxTimeoutMs": 7});
        let limits: Limits = serde_json::from_value(base.clone()).unwrap();
        assert_eq!(limits.transport, Default::default());
        assert_eq!(serde_json::to_value(&limits).unwrap(), base);

        let mut older = base.clone();
        older["maxMessageBytes"] = json!(1024);
        older["pairingTimeoutMs"] = json!(60000);
        let limits: Limits = serde_json::from_value(older.clone()).unwrap();
        assert_eq!(limits.transport.max_message_bytes, Some(1024));
        assert_eq!(limits.transport.pairing_timeout_ms, Some(60000));
        assert_eq!(limits.transport.max_connections_per_client, None);
        assert_eq!(serde_json::to_value(&limits).unwrap(), older);
    }
}
