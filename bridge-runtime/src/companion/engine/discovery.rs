//! The five discovery methods (CP-2-2 … CP-2-6): generated from the registry, never a second list
//! (CP-2-12, CP-2-13).

use super::{Admitted, Engine, current_character, unsupported_capability};
use crate::catalog::MAX_TIMEOUT_CAP_MS;
use crate::catalog::{CapabilitySpec, FieldProblem};
use crate::companion::error::{CompanionError, ErrorCode};
use crate::companion::protocol::Method;
use crate::companion::protocol::params::{
    CapabilitiesDescribeParams, CapabilitiesListParams, NoParams, PROTOCOL_VERSION, RuntimeDescribeParams,
};
use crate::companion::protocol::results::{
    Authentication, Authorization, Availability, CapabilityDescriptor, CapabilityPage, Character, CharacterList,
    Health, Implementation, Limits, RuntimeDescription, Style, StyleList,
};
use serde_json::{Value, json};

impl Engine {
    /// `runtime.describe` (CP-2-2): implementation and protocol versions, runtime instance,
    /// catalog revision, limits, the caller's authorisation, retention and the user's
    /// availability settings ([`RuntimeDescription`]). Params `{"protocolVersions"?: [..]}`:
    /// none supported → `INVALID_PARAMS` (CP-7-2, OQ-CP-15). For a socket connection (which may
    /// call it before authenticating, CP-7-2) the result also says whether the connection is
    /// authenticated, and carries the transport's limits and `authentication`.
    pub(super) async fn runtime_describe(
        &self,
        call: Admitted<'_>,
        p: RuntimeDescribeParams,
    ) -> Result<RuntimeDescription, CompanionError> {
        if let Some(versions) = &p.protocol_versions
            && !versions.iter().any(|v| v == PROTOCOL_VERSION)
        {
            return Err(CompanionError::invalid_params(
                format!("No common protocol version: this runtime speaks {PROTOCOL_VERSION}"),
                vec![FieldProblem::new("/protocolVersions", format!("must include \"{PROTOCOL_VERSION}\""))],
            )
            .with("supportedProtocolVersions", json!([PROTOCOL_VERSION])));
        }
        let c = &self.inner.config;
        let revision = self.inner.catalog().catalog_revision();
        let settings = self.inner.lock().settings.clone();
        let count = |n: usize| u64::try_from(n).unwrap_or(u64::MAX);
        let transport = call.transport();
        Ok(RuntimeDescription {
            implementation: Implementation {
                name: c.implementation_name.clone(),
                version: c.implementation_version.clone(),
            },
            protocol_version: PROTOCOL_VERSION.to_owned(),
            supported_protocol_versions: vec![PROTOCOL_VERSION.to_owned()],
            runtime_instance_id: self.inner.instance_id.clone(),
            catalog_revision: revision,
            limits: Limits {
                max_active_per_client: count(c.max_active_per_client),
                max_active_total: count(c.max_active_total),
                max_records: count(c.max_records),
                max_records_per_client: Some(count(c.records_share())),
                max_pending_presentations: Some(count(c.max_pending_presentations)),
                max_creates_per_minute: count(c.max_creates_per_minute),
                default_wait_ms: c.default_wait_ms,
                max_wait_ms: c.max_wait_ms,
                max_timeout_ms: MAX_TIMEOUT_CAP_MS,
                transport: transport.cloned().unwrap_or_default(),
            },
            authorization: Authorization {
                authenticated: call.transport().map(|_| call.identity().is_some()),
                client_id: call.identity().map(|client| client.id.clone()),
                scopes: call.identity().map(|client| client.scopes.iter().copied().collect()).unwrap_or_default(),
                internal: call.identity().is_some_and(|client| client.internal),
            },
            result_retention_ms: c.result_retention_ms,
            availability: Availability {
                visible: settings.visible,
                external_paused: settings.external_paused,
                reduced_motion: settings.reduced_motion,
            },
            authentication: call.transport().map(|_| Authentication {
                authenticate_method: Method::SessionAuthenticate.as_str().to_owned(),
                pairing_method: Method::PairingRequest.as_str().to_owned(),
            }),
            health: self.inner.durability.failure().map(|_| Health {
                status: "unhealthy".to_owned(),
                reason:
                    "The state store failed to make changes durable; nothing more is confirmed until the app restarts"
                        .to_owned(),
            }),
        })
    }

    /// `characters.list` (CP-2-3): the current character and every character
    /// ([`CharacterList`]); each character's `capabilities` lists only registered capabilities.
    /// Params `{}`.
    pub(super) async fn characters_list(
        &self,
        _call: Admitted<'_>,
        _: NoParams,
    ) -> Result<CharacterList, CompanionError> {
        let cat = self.inner.catalog();
        let settings = self.inner.lock().settings.clone();
        let characters = cat
            .characters()
            .iter()
            .map(|c| Character {
                id: c.id.clone(),
                name: c.name.clone(),
                capabilities: c.capabilities.iter().filter(|id| cat.capability(id).is_some()).cloned().collect(),
            })
            .collect();
        Ok(CharacterList { current: current_character(&cat, &settings).map(|c| c.id.clone()), characters })
    }

    /// `capabilities.list` (CP-2-4): the descriptors whose `requiredScopes` the caller holds
    /// ([`CapabilityPage`]). Params `{"cursor"?, "limit"?}`; a cursor from another
    /// `catalogRevision` → `INVALID_PARAMS`.
    pub(super) async fn capabilities_list(
        &self,
        call: Admitted<'_>,
        p: CapabilitiesListParams,
    ) -> Result<CapabilityPage, CompanionError> {
        let client = call.client()?;
        let visible = |c: &CapabilitySpec| c.required_scopes().iter().all(|s| client.has(*s));
        let page = self
            .inner
            .catalog()
            .capabilities_page(visible, p.cursor.as_deref(), p.limit.map(|l| l as usize))
            .ok_or_else(|| {
                CompanionError::invalid_params(
                    "The cursor is invalid or the catalog changed since; list again from the start",
                    vec![FieldProblem::new("/cursor", "stale or malformed cursor")],
                )
            })?;
        serde_json::from_value(page)
            .map_err(|_| CompanionError::new(ErrorCode::InternalError, "The capability page could not be built"))
    }

    /// `capabilities.describe` (CP-2-5): one descriptor, params `{"capability": id}`. Unknown →
    /// `UNSUPPORTED_CAPABILITY`.
    pub(super) async fn capabilities_describe(
        &self,
        _call: Admitted<'_>,
        p: CapabilitiesDescribeParams,
    ) -> Result<CapabilityDescriptor, CompanionError> {
        match self.inner.catalog().capability_descriptor(&p.capability) {
            Some(Value::Object(d)) => Ok(CapabilityDescriptor(d)),
            _ => Err(unsupported_capability(&p.capability)),
        }
    }

    /// `styles.list` (CP-2-6): every style ([`StyleList`]), each style's `capabilities` limited
    /// to registered ones. Params `{}`.
    pub(super) async fn styles_list(&self, _call: Admitted<'_>, _: NoParams) -> Result<StyleList, CompanionError> {
        let cat = self.inner.catalog();
        let styles = cat
            .styles()
            .iter()
            .map(|s| Style {
                id: s.id.clone(),
                description: s.description.clone(),
                capabilities: s.capabilities.iter().filter(|id| cat.capability(id).is_some()).cloned().collect(),
                fallback: s.fallback.clone(),
            })
            .collect();
        Ok(StyleList { styles })
    }
}
