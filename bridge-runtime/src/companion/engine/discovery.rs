//! The five discovery methods (CP-2-2 … CP-2-6): generated from the registry, never a second list
//! (CP-2-12, CP-2-13).

use super::*;

impl Engine {
    /// `runtime.describe` (CP-2-2): implementation and protocol versions, runtime instance,
    /// catalog revision, limits, the caller's authorisation, retention and the user's
    /// availability settings ([`RuntimeDescription`]). Needs `discover`. Params
    /// `{"protocolVersions"?: [..]}`: none supported → `INVALID_PARAMS` (CP-7-2, OQ-CP-15).
    pub async fn runtime_describe(
        &self,
        client: &ClientIdentity,
        params: Value,
    ) -> Result<RuntimeDescription, CompanionError> {
        self.admit(client, Method::RuntimeDescribe)?;
        let p: RuntimeDescribeParams = params::parse(params)?;
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
                max_creates_per_minute: count(c.max_creates_per_minute),
                default_wait_ms: c.default_wait_ms,
                max_wait_ms: c.max_wait_ms,
                max_timeout_ms: MAX_TIMEOUT_CAP_MS,
                max_message_bytes: None,
                max_unauthenticated_message_bytes: None,
                auth_timeout_ms: None,
                max_batch_length: None,
                max_connections: None,
                max_in_flight_per_connection: None,
                pairing_timeout_ms: None,
            },
            authorization: Authorization {
                authenticated: None,
                client_id: Some(client.id.clone()),
                scopes: client.scopes.iter().copied().collect(),
                internal: client.internal,
            },
            result_retention_ms: c.result_retention_ms,
            availability: Availability {
                visible: settings.visible,
                external_paused: settings.external_paused,
                reduced_motion: settings.reduced_motion,
            },
            authentication: None,
        })
    }

    /// `characters.list` (CP-2-3): the current character and every character
    /// ([`CharacterList`]); each character's `capabilities` lists only registered capabilities.
    /// Needs `discover`; params `{}`.
    pub async fn characters_list(
        &self,
        client: &ClientIdentity,
        params: Value,
    ) -> Result<CharacterList, CompanionError> {
        self.admit(client, Method::CharactersList)?;
        let _: NoParams = params::parse(params)?;
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
    /// `catalogRevision` → `INVALID_PARAMS`. Needs `discover`.
    pub async fn capabilities_list(
        &self,
        client: &ClientIdentity,
        params: Value,
    ) -> Result<CapabilityPage, CompanionError> {
        self.admit(client, Method::CapabilitiesList)?;
        let p: CapabilitiesListParams = params::parse(params)?;
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
    /// `UNSUPPORTED_CAPABILITY`. Needs `discover`.
    pub async fn capabilities_describe(
        &self,
        client: &ClientIdentity,
        params: Value,
    ) -> Result<CapabilityDescriptor, CompanionError> {
        self.admit(client, Method::CapabilitiesDescribe)?;
        let p: CapabilitiesDescribeParams = params::parse(params)?;
        match self.inner.catalog().capability_descriptor(&p.capability) {
            Some(Value::Object(d)) => Ok(CapabilityDescriptor(d)),
            _ => Err(unsupported_capability(&p.capability)),
        }
    }

    /// `styles.list` (CP-2-6): every style ([`StyleList`]), each style's `capabilities` limited
    /// to registered ones. Needs `discover`; params `{}`.
    pub async fn styles_list(&self, client: &ClientIdentity, params: Value) -> Result<StyleList, CompanionError> {
        self.admit(client, Method::StylesList)?;
        let _: NoParams = params::parse(params)?;
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
