//! Capabilities declared in Rust ([`BridgeCapabilities`], what `#[bridge_actions(companion)]`
//! implements) and their registration in the [`Catalog`](crate::catalog::Catalog).

use super::problem::SpecError;
use super::spec::CapabilitySpec;
use crate::catalog::Catalog;
use std::sync::Arc;

/// A set of capabilities declared in Rust: implemented by `#[bridge_actions(companion)]` on an
/// `impl` block, whose `#[bridge_action(…)]` methods each declare one capability. The
/// declaration is the registry entry, so the description cannot drift from the behaviour
/// (CP-2-12, CP-2-13). Register it with [`Catalog::register_capabilities`](crate::catalog::Catalog::register_capabilities).
pub trait BridgeCapabilities {
    /// The declared capabilities in declaration order, each from [`CapabilityBuilder::build`](super::CapabilityBuilder::build).
    ///
    /// The macro rejects at compile time everything `build` would reject in what it can see
    /// (ids, versions, kinds, interaction types, completions, scopes, limits, fallbacks,
    /// updatable fields named as plain parameters). Errors: the first [`SpecError`] of what it
    /// cannot see: an `updatable` field missing from a `#[bridge(args)]` struct, a params or
    /// output type whose schema is not an object schema.
    fn capability_specs() -> Result<Vec<CapabilitySpec>, SpecError>;
}

impl Catalog {
    /// Registers every capability `T` declares, in declaration order, all or none: on error
    /// (a [`BridgeCapabilities::capability_specs`] error, or `SpecError::Duplicate` for an id
    /// already registered) the catalog is unchanged. Bumps `catalogRevision` once per capability.
    pub fn register_capabilities<T: BridgeCapabilities>(&mut self) -> Result<Vec<Arc<CapabilitySpec>>, SpecError> {
        let specs = T::capability_specs()?;
        let mut ids = std::collections::HashSet::new();
        for spec in &specs {
            if self.capability(spec.id()).is_some() || !ids.insert(spec.id()) {
                return Err(SpecError::Duplicate { what: "capability", id: spec.id().to_owned() });
            }
        }
        specs.into_iter().map(|spec| self.register_capability(spec)).collect()
    }
}
