//! The closed vocabularies of a capability descriptor: category, interaction type, completion,
//! scope, cancel behaviour, queue mode and fallback situation (CP-2-15 … CP-2-18, CP-2-29,
//! CP-4-10, CP-5-6), spelled on the wire exactly as the spec writes them. The macros accept the
//! same spellings: both read `bridge_rules`' lists (the tests below keep the enums in step).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::fmt;

/// Capability category, descriptor key `kind` (CP-2-17).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CapabilityKind {
    /// A motion of the character; no business output (CP-2-19).
    Animation,
    /// A bubble shown for a while; no business output.
    Notice,
    /// A progress display the caller keeps updating under one `requestId` (CP-3-26).
    Progress,
    /// A question the user answers; the answer is the business `result` (CP-3-16).
    Interaction,
}

impl CapabilityKind {
    /// The wire string, e.g. `"notice"`.
    pub fn as_str(self) -> &'static str {
        bridge_rules::CAPABILITY_KINDS[self as usize]
    }
}

/// Interaction type, descriptor key `interaction` (CP-2-18). `none` for every kind except
/// `interaction`, which must be `choice` or `text`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum InteractionType {
    /// No user input.
    None,
    /// The user picks one of the request's options; result `{"selectedId": …}` (CP-2-22, CP-3-13).
    Choice,
    /// The user types text; the result shape is the capability's `outputSchema` (OQ-CP-18).
    Text,
}

impl InteractionType {
    /// The wire string, e.g. `"choice"`.
    pub(crate) fn as_str(self) -> &'static str {
        bridge_rules::INTERACTIONS[self as usize]
    }
}

/// What makes a request `completed`, descriptor key `completion` (CP-2-15, CP-3-15). Closed list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Completion {
    /// Completed once the content has been on screen for `limits.displayMs`, timed from the
    /// host's report that it appeared (`displayedAt`, CP-3-14, CP-3-19). Means "shown as the
    /// contract requires", not "read by the user" (CP-3-15). Result `{}`. A host that manages
    /// the display time itself (pause on hover, CP-3-19) may end it early with
    /// `companion::Engine::finished`; one that never reports the display lets the request
    /// expire at its deadline.
    Displayed,
    /// Completed when the host reports that the animation's execution ended
    /// (`companion::Engine::finished`); not a promise that every frame was seen
    /// (CP-3-15). Result `{}`.
    AnimationEnd,
    /// Completed only by an actual user answer (`companion::Engine::user_responded`);
    /// the answer is the `result` (CP-3-13, CP-3-16). Closing the view cancels (CP-3-12).
    UserResponse,
    /// Stays `running` until the caller ends it with `requests.update` `{"complete": true}`
    /// (progress). Result `{}`.
    CallerCompletes,
}

impl Completion {
    /// Every completion, in wire order.
    const ALL: [Completion; 4] =
        [Completion::Displayed, Completion::AnimationEnd, Completion::UserResponse, Completion::CallerCompletes];

    /// The wire string, e.g. `"displayed"`.
    pub(crate) fn as_str(self) -> &'static str {
        bridge_rules::COMPLETIONS[self as usize]
    }

    /// The completion spelt `wire` on the wire, if any.
    pub(crate) fn from_wire(wire: &str) -> Option<Completion> {
        Completion::ALL.into_iter().find(|c| c.as_str() == wire)
    }
}

/// An authorisation scope (CP-5-6). The capability's `requiredScopes` is authoritative;
/// defaults per OQ-CP-14: animation → `animate`, notice/progress → `notify`,
/// interaction → `interact`; the five discovery methods need `discover`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    /// The discovery methods (`runtime.describe`, `characters.list`, `capabilities.*`, `styles.list`).
    Discover,
    /// Animations.
    Animate,
    /// Notices and progress.
    Notify,
    /// User interactions.
    Interact,
}

impl Scope {
    /// Every scope, in wire order.
    pub const ALL: [Scope; 4] = [Scope::Discover, Scope::Animate, Scope::Notify, Scope::Interact];

    /// The wire string, e.g. `"interact"`.
    pub fn as_str(self) -> &'static str {
        bridge_rules::SCOPES[self as usize]
    }

    /// The default scope for requests of `kind` (OQ-CP-14).
    pub fn default_for(kind: CapabilityKind) -> Scope {
        match kind {
            CapabilityKind::Animation => Scope::Animate,
            CapabilityKind::Notice | CapabilityKind::Progress => Scope::Notify,
            CapabilityKind::Interaction => Scope::Interact,
        }
    }
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How the presentation reacts to cancellation, descriptor key `cancelBehavior` (CP-2-15).
/// Either way the request's state becomes `cancelled` at once (CP-3-24); this only tells the
/// presenter how to take the view down.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CancelBehavior {
    /// The view is removed immediately.
    Remove,
    /// An animation may finish its current cycle before the view is removed.
    FinishCycle,
}

/// Queue mode of a capability's requests (CP-4-10, CP-4-11).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum QueueMode {
    /// Waits for the display slot in order; never evicted.
    Queue,
    /// Like `queue`, but while still queued (never once shown) it may be evicted by a newer
    /// request of the same client when that client's or the total capacity is full; the evicted
    /// request ends `cancelled` with terminal reason `queue_evicted` (CP-4-10). Not allowed for
    /// interactions (CP-4-11).
    Evictable,
}

impl QueueMode {
    /// The wire string, e.g. `"evictable"`.
    pub(crate) fn as_str(self) -> &'static str {
        bridge_rules::QUEUE_MODES[self as usize]
    }
}

/// Why a declared alternative was used, snapshot key `fallbackReason` and descriptor
/// `fallback.when` (CP-2-29, OQ-CP-4). Closed list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FallbackReason {
    /// The chosen character does not support the requested capability.
    CharacterUnsupported,
    /// The user asked for reduced motion and the requested capability is an animation.
    ReducedMotion,
    /// The requested style does not apply to the (resolved) capability; the style's declared
    /// fallback style was used.
    StyleUnsupported,
}

impl FallbackReason {
    /// The wire string, e.g. `"reduced_motion"`.
    pub(crate) fn as_str(self) -> &'static str {
        bridge_rules::FALLBACK_REASONS[self as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each enum serializes, variant by variant in declaration order, to `bridge_rules`' list.
    fn wire<T: Serialize>(variants: &[T]) -> Vec<String> {
        variants
            .iter()
            .map(|v| serde_json::to_value(v).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default())
            .collect()
    }

    #[test]
    fn vocabularies_are_the_macros_lists() {
        use CapabilityKind as K;
        assert_eq!(wire(&[K::Animation, K::Notice, K::Progress, K::Interaction]), bridge_rules::CAPABILITY_KINDS);
        use InteractionType as I;
        assert_eq!(wire(&[I::None, I::Choice, I::Text]), bridge_rules::INTERACTIONS);
        use Completion as C;
        assert_eq!(
            wire(&[C::Displayed, C::AnimationEnd, C::UserResponse, C::CallerCompletes]),
            bridge_rules::COMPLETIONS
        );
        assert_eq!(wire(&Scope::ALL), bridge_rules::SCOPES);
        assert_eq!(wire(&[CancelBehavior::Remove, CancelBehavior::FinishCycle]), bridge_rules::CANCEL_BEHAVIORS);
        assert_eq!(wire(&[QueueMode::Queue, QueueMode::Evictable]), bridge_rules::QUEUE_MODES);
        use FallbackReason as F;
        assert_eq!(
            wire(&[F::CharacterUnsupported, F::ReducedMotion, F::StyleUnsupported]),
            bridge_rules::FALLBACK_REASONS
        );
        for k in [K::Animation, K::Notice, K::Progress, K::Interaction] {
            assert_eq!(serde_json::to_value(k).ok(), Some(k.as_str().into()));
            // The kind's default completion (bridge_rules) is one of ours.
            assert!(C::from_wire(bridge_rules::default_completion(k.as_str())).is_some(), "{k:?}");
        }
        for i in [I::None, I::Choice, I::Text] {
            assert_eq!(serde_json::to_value(i).ok(), Some(i.as_str().into()));
        }
        for c in Completion::ALL {
            assert_eq!(serde_json::to_value(c).ok(), Some(c.as_str().into()));
            assert_eq!(C::from_wire(c.as_str()), Some(c));
        }
        assert_eq!(C::from_wire("shown"), None);
        for q in [QueueMode::Queue, QueueMode::Evictable] {
            assert_eq!(serde_json::to_value(q).ok(), Some(q.as_str().into()));
        }
        for f in [F::CharacterUnsupported, F::ReducedMotion, F::StyleUnsupported] {
            assert_eq!(serde_json::to_value(f).ok(), Some(f.as_str().into()));
        }
        for s in Scope::ALL {
            assert_eq!(serde_json::to_value(s).ok(), Some(s.as_str().into()));
        }
    }
}
