//! The declared policies of a capability: queueing, limits and the fallback presentation
//! (CP-2-15, CP-2-29, CP-3-17 … CP-3-19, CP-4-8 … CP-4-12).

use super::kind::{FallbackReason, QueueMode};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::fmt;
use std::sync::Arc;

/// Upper bound for any capability's `limits.maxTimeoutMs`: 24 h. Keeps every deadline shorter
/// than the result retention period (CP-4-16), so no source can hold the display slot for
/// longer than that (CP-4-12). The macros check the same bound.
pub use bridge_rules::MAX_TIMEOUT_CAP_MS;

/// Queueing/interruption policy, descriptor key `queuePolicy` (CP-2-15, CP-4-8 … CP-4-12).
///
/// Shape: `{"mode": "queue"|"evictable", "interrupts": bool}`. There is one display slot; queued
/// requests get it round-robin across clients, FIFO within a client, and a request holds it
/// until it ends (at the latest at its deadline, itself capped by [`MAX_TIMEOUT_CAP_MS`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct QueuePolicy {
    /// Queue mode.
    pub mode: QueueMode,
    /// Whether a request of this capability takes the display slot from the request holding it.
    /// Always `false` in protocol 0.1 (declared so that the policy is explicit, CP-2-16);
    /// the capability builder rejects `true`.
    pub interrupts: bool,
}

/// Resource limits, descriptor key `limits` (CP-2-15, CP-3-17 … CP-3-19, OQ-CP-3).
///
/// Shape: `{"minTimeoutMs": int, "maxTimeoutMs": int, "displayMs": int|null}`, milliseconds.
/// `timeoutMs` of `requests.create` is required and must lie in `[minTimeoutMs, maxTimeoutMs]`
/// (else `INVALID_PARAMS`); it runs from acceptance, includes queueing and cannot be extended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CapabilityLimits {
    /// Shortest accepted `timeoutMs`, ms, ≥ 1.
    pub min_timeout_ms: u64,
    /// Longest accepted `timeoutMs`, ms, ≤ [`MAX_TIMEOUT_CAP_MS`].
    pub max_timeout_ms: u64,
    /// How long a `completion: "displayed"` request stays on screen, ms, timed from
    /// `displayedAt`; `null` for every other completion.
    pub display_ms: Option<u64>,
}

impl Default for CapabilityLimits {
    fn default() -> Self {
        Self { min_timeout_ms: 1_000, max_timeout_ms: 10 * 60 * 1000, display_ms: None }
    }
}

/// Maps the caller's params (valid for the requested capability) to params of the fallback.
pub type ParamsMap = Arc<dyn Fn(&Value) -> Value + Send + Sync>;

/// A declared alternative presentation, descriptor key `fallback` (CP-2-29).
///
/// Shape: `{"capability": id, "when": ["character_unsupported"|"reduced_motion", …]}`. Used only
/// when the caller set `allowFallback: true`; the snapshot then records `resolvedCapability` and
/// `fallbackReason`. The target must have the same `interaction` type, so a question never turns
/// into a notice (CP-2-30).
#[derive(Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Fallback {
    /// The alternative capability's id.
    pub capability: String,
    /// The situations in which it applies.
    pub when: Vec<FallbackReason>,
    /// Params mapping; `None` passes the caller's params unchanged. The result must validate
    /// against the target's `inputSchema`.
    #[serde(skip)]
    pub map: Option<ParamsMap>,
}

impl fmt::Debug for Fallback {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Fallback")
            .field("capability", &self.capability)
            .field("when", &self.when)
            .field("map", &self.map.as_ref().map(|_| "fn"))
            .finish()
    }
}
