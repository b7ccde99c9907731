//! Declared fallbacks (CP-2-29): which capability presents a request instead, for
//! `requests.create` and for the scheduler's reduced-motion downgrade alike (one rule, used by
//! the engine and by the runtime state).

use super::error::{CompanionError, ErrorCode};
use super::model::RequestSnapshot;
use crate::catalog::{CapabilityKind, CapabilitySpec, Catalog, CharacterSpec, FallbackReason, Scope};
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::sync::Arc;

/// Resolves a declared fallback for `reason` (CP-2-29), or explains why not.
pub(crate) fn resolve_fallback(
    cat: &Catalog,
    requested: &Arc<CapabilitySpec>,
    reason: FallbackReason,
    allowed: bool,
    character: &CharacterSpec,
    reduced_motion: bool,
    params: &Value,
) -> Result<(Arc<CapabilitySpec>, Value), CompanionError> {
    let why = match reason {
        FallbackReason::CharacterUnsupported => {
            format!("Character `{}` does not support `{}`", character.id, requested.id())
        }
        FallbackReason::ReducedMotion => {
            format!("The user prefers reduced motion; `{}` is an animation", requested.id())
        }
        FallbackReason::StyleUnsupported => format!("The style does not apply to `{}`", requested.id()),
    };
    let err = |extra: &str| {
        CompanionError::new(ErrorCode::UnsupportedCapability, format!("{why}{extra}")).with("reason", json!(reason))
    };
    let fallback = requested.fallback().filter(|f| f.when.contains(&reason));
    let Some(fallback) = fallback else { return Err(err(" and it declares no fallback for this")) };
    if !allowed {
        return Err(err("; a declared fallback exists: set allowFallback to use it")
            .with("fallbackCapability", fallback.capability.clone()));
    }
    let target = cat
        .capability(&fallback.capability)
        .filter(|t| t.interaction() == requested.interaction())
        .filter(|t| character.supports_capability(t.id()))
        .filter(|t| !(reduced_motion && t.kind() == CapabilityKind::Animation))
        .ok_or_else(|| err(" and its declared fallback is not available either"))?;
    let mut mapped = match &fallback.map {
        Some(map) => map(params),
        None => params.clone(),
    };
    target.validate_params(&mut mapped).map_err(|_| err(" and its fallback cannot present these params"))?;
    Ok((target.clone(), mapped))
}

/// A queued animation's reduced-motion replacement, decided when it reaches the display slot.
pub(crate) struct Downgrade {
    pub capability: String,
    pub style: Option<String>,
    pub params: Value,
}

/// The reduced-motion fallback of a queued request (its `snapshot`, the params for its resolved
/// capability, whether the caller allowed fallbacks, the scopes it had), whose resolved capability is an
/// animation (CP-2-29): the same rules as `requests.create` (caller allowed fallbacks, declared
/// `reduced_motion` fallback, same interaction, supported by the character, not an animation,
/// params valid after the map, the client's scopes, the timeout limits, the style or its
/// fallback applies). `None` if any of them fails: the request must then not be shown.
pub(crate) fn reduced_motion_downgrade(
    cat: &Catalog,
    snapshot: &RequestSnapshot,
    resolved_params: Option<&Value>,
    allow_fallback: bool,
    scopes: &BTreeSet<Scope>,
) -> Option<Downgrade> {
    let resolved = cat.capability(&snapshot.resolved_capability)?;
    let character = cat.character(&snapshot.character)?;
    let params = resolved_params?;
    let (target, mapped) =
        resolve_fallback(cat, resolved, FallbackReason::ReducedMotion, allow_fallback, character, true, params).ok()?;
    if !target.required_scopes().iter().all(|s| scopes.contains(s)) {
        return None;
    }
    let timeout = u64::try_from(snapshot.deadline_at.saturating_sub(snapshot.created_at)).ok()?;
    let l = target.limits();
    if timeout < l.min_timeout_ms || timeout > l.max_timeout_ms {
        return None;
    }
    let style = match &snapshot.resolved_style {
        None => None,
        Some(id) => {
            let style = cat.style(id)?;
            if style.applies(target.id()) {
                Some(id.clone())
            } else {
                let fb = style.fallback.as_ref()?;
                cat.style(fb).filter(|s| s.applies(target.id()))?;
                Some(fb.clone())
            }
        }
    };
    Some(Downgrade { capability: target.id().to_owned(), style, params: mapped })
}
