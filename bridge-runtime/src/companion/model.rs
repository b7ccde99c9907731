//! The request snapshot and the identities the engine works with (CP-3-8, CP-3-9, OQ-CP-5,
//! OQ-CP-6). Wire names are the spec's, byte for byte; Rust names are their snake_case twins.

use crate::catalog::{FallbackReason, Scope};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeSet;

/// Request state (CP-3-9, OQ-CP-1). `queued`, `running`, `awaiting_user` are non-terminal;
/// `completed`, `cancelled`, `expired`, `failed` are terminal and never change again (CP-3-11).
///
/// Transitions: `queued → running → completed`, `running → awaiting_user → completed`, and
/// `queued | running | awaiting_user → cancelled | expired | failed`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RequestState {
    /// Accepted, waiting for the display slot.
    Queued,
    /// Holds the display slot (shown, or being shown).
    Running,
    /// An interaction on screen, waiting for the user's answer.
    AwaitingUser,
    /// Ended as the capability's `completion` says; `result` holds the business output.
    Completed,
    /// Ended by a cancellation; `terminalReason` says whose.
    Cancelled,
    /// The deadline (`deadlineAt`) passed first (`terminalReason: "timeout"`).
    Expired,
    /// The runtime could not carry it out; `terminalReason` says why.
    Failed,
}

impl RequestState {
    /// Whether the state is terminal (immutable).
    pub fn is_terminal(self) -> bool {
        matches!(self, RequestState::Completed | RequestState::Cancelled | RequestState::Expired | RequestState::Failed)
    }

    /// The wire string, e.g. `"awaiting_user"`.
    pub fn as_str(self) -> &'static str {
        match self {
            RequestState::Queued => "queued",
            RequestState::Running => "running",
            RequestState::AwaitingUser => "awaiting_user",
            RequestState::Completed => "completed",
            RequestState::Cancelled => "cancelled",
            RequestState::Expired => "expired",
            RequestState::Failed => "failed",
        }
    }
}

/// Why a request ended other than by completion, snapshot key `terminalReason` (OQ-CP-6).
/// Closed list; `null` for `completed` and for non-terminal states.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TerminalReason {
    /// `cancelled`: the user closed or dismissed the view (never a default answer, CP-3-12).
    UserCancelled,
    /// `cancelled`: the owning client called `requests.cancel`.
    ClientCancelled,
    /// `cancelled`: an evictable request was pushed out of a full queue while still queued (CP-4-10).
    QueueEvicted,
    /// `cancelled`: the client's key was revoked (CP-4-22).
    KeyRevoked,
    /// `cancelled`: the user hid the sprite or paused external interaction (CP-4-15).
    RuntimeUnavailable,
    /// `cancelled`: the user turned on reduced motion while an animation was still queued, and the
    /// request did not allow (or the capability does not declare) a `reduced_motion` fallback
    /// (CP-2-29, CP-4-15); an animation is never shown while reduced motion is on.
    ReducedMotion,
    /// `expired`: the deadline passed (CP-3-17).
    Timeout,
    /// `failed`: the app restarted while the request was unfinished; never replayed (CP-4-21).
    RuntimeRestarted,
    /// `failed`: the host reported that it could not present the request.
    PresentationFailed,
}

/// One request as every method returns it (CP-3-8): the same model for `requests.create`,
/// `get`, `wait`, `cancel` and `update`.
///
/// Shape (every key always present, `null` when empty):
/// `{"requestId", "runtimeInstanceId", "capability", "character", "taskId", "state", "revision",
/// "createdAt", "deadlineAt", "displayedAt", "resolvedCapability", "resolvedStyle",
/// "fallbackReason", "terminalReason", "result"}`. Times are Unix epoch milliseconds (int64).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RequestSnapshot {
    /// Unpredictable id assigned at acceptance (CP-3-5), `req_` + 32 hex digits.
    pub request_id: String,
    /// The runtime instance that accepted the request; a different value from
    /// `runtime.describe` means the app restarted since (CP-4-21).
    pub runtime_instance_id: String,
    /// The capability the caller asked for.
    pub capability: String,
    /// The character presenting it (the caller's choice or the user's current one, CP-3-1).
    pub character: String,
    /// The caller's own label (CP-3-2); never used to find requests (CP-3-3).
    pub task_id: Option<String>,
    /// Current state.
    pub state: RequestState,
    /// Starts at 1; +1 on every change of this snapshot or of the request's params
    /// (`expectedRevision` of `requests.update`, `afterRevision` of `requests.wait`).
    pub revision: u64,
    /// Acceptance time, ms since the Unix epoch.
    pub created_at: i64,
    /// `createdAt + timeoutMs`: the absolute deadline, queueing included (CP-3-17); never moves
    /// (CP-3-18).
    pub deadline_at: i64,
    /// When the host reported that the content actually appeared (CP-3-14), else `null`.
    pub displayed_at: Option<i64>,
    /// The capability actually used: `capability` itself, or a declared fallback (CP-2-29).
    pub resolved_capability: String,
    /// The style actually used; `null` = the runtime's default look.
    pub resolved_style: Option<String>,
    /// Why a fallback was used (`null` if none).
    pub fallback_reason: Option<FallbackReason>,
    /// Why the request ended, for `cancelled`/`expired`/`failed` (OQ-CP-6).
    pub terminal_reason: Option<TerminalReason>,
    /// The business result, only when `completed` (`{}` for capabilities without business
    /// output); never invented for cancellation or timeout (CP-3-16).
    pub result: Option<Value>,
}

/// The authenticated caller, assigned by the auth layer or the host, never taken from request
/// params (CP-1-7, CP-3-4).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientIdentity {
    /// Stable client id from the pairing record (or the host's own id for internal sources).
    pub id: String,
    /// The source label shown to the user, from the pairing record (CP-4-7).
    pub label: String,
    /// Granted scopes (CP-5-6).
    pub scopes: BTreeSet<Scope>,
    /// True only for host-internal sources (CP-1-5); external requests can never claim it.
    pub internal: bool,
}

impl ClientIdentity {
    /// An external (paired) client with `scopes`.
    pub fn external(id: impl Into<String>, label: impl Into<String>, scopes: impl IntoIterator<Item = Scope>) -> Self {
        Self { id: id.into(), label: label.into(), scopes: scopes.into_iter().collect(), internal: false }
    }

    /// A host-internal source with every scope (CP-1-5, CP-1-6: it still goes through the same
    /// validation, queue and lifecycle).
    pub fn host(id: impl Into<String>, label: impl Into<String>) -> Self {
        Self { id: id.into(), label: label.into(), scopes: Scope::ALL.into_iter().collect(), internal: true }
    }

    /// Whether the client holds `scope`.
    pub fn has(&self, scope: Scope) -> bool {
        self.scopes.contains(&scope)
    }
}

/// Where a request came from, as the presenter shows it (CP-4-7).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Source {
    /// The owning client's id.
    pub client_id: String,
    /// The label from the pairing record.
    pub label: String,
    /// Whether the source is host-internal.
    pub internal: bool,
}

/// What the presenter gets to show or update: the resolved capability, character, style and
/// params of one request. Content is plain data; the presenter renders text as plain text
/// (OQ-CP-20).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Presentation {
    /// The request.
    pub request_id: String,
    /// The request's revision this presentation reflects.
    pub revision: u64,
    /// The capability to present (`resolvedCapability`).
    pub capability: String,
    /// The presenting character.
    pub character: String,
    /// The style (`resolvedStyle`).
    pub style: Option<String>,
    /// The params for the resolved capability.
    pub params: Value,
    /// Who asked.
    pub source: Source,
}
