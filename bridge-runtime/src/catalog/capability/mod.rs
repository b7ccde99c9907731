//! Desktop-companion capabilities, characters and styles (spec CP §2): the registry entries that
//! `capabilities.list`/`capabilities.describe`, `characters.list` and `styles.list` publish and
//! that the request engine (`companion`) enforces. One declaration drives both, so the
//! description cannot drift from the behaviour (CP-2-12, CP-2-13, CP-7-10).
//!
//! One job per file: the closed vocabularies (`kind`), the declared policies (`policy`), what
//! goes wrong (`problem`), the registered contract (`spec`), declaring one by hand (`builder`),
//! the id rules (`ids`), ready-made semantic checks for hand-declared capabilities (`checks`), characters and styles, and capabilities declared in Rust (`declared`).

mod builder;
mod character;
pub mod checks;
mod declared;
mod ids;
mod kind;
mod policy;
mod problem;
mod spec;
mod style;

pub use builder::{CapabilityBuilder, empty_strict_object};
pub use character::CharacterSpec;
pub use declared::BridgeCapabilities;
pub(crate) use ids::{validate_capability_id, validate_simple_id};
pub use kind::{CancelBehavior, CapabilityKind, Completion, FallbackReason, InteractionType, QueueMode, Scope};
pub use policy::{CapabilityLimits, Fallback, MAX_TIMEOUT_CAP_MS, ParamsMap, QueuePolicy};
// The one problem type of both surfaces; named here too, where the companion declares its checks.
pub use super::decode::FieldProblem;
pub use problem::SpecError;
// The companion engine checks its own method params with it.
#[cfg(feature = "companion")]
pub(crate) use problem::schema_problems;
pub use spec::CapabilitySpec;
pub use style::StyleSpec;
