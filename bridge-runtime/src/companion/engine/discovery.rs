//! The five discovery methods (CP-2-2 … CP-2-6): generated from the registry, never a second list
//! (CP-2-12, CP-2-13).

use super::*;

impl Engine {
    /// `runtime.describe` (CP-2-2): `{"implementation": {"name","version"}, "protocolVersion",
    /// "supportedProtocolVersions", "runtimeInstanceId", "catalogRevision", "limits": {...},
    /// "authorization": {"clientId","scopes","internal"}, "resultRetentionMs",
    /// "availability": {"visible","externalPaused","reducedMotion"}}`. Needs `discover`.
    /// Params `{"protocolVersions"?: [..]}`: none supported → `INVALID_PARAMS` (CP-7-2, OQ-CP-15).
    pub async fn runtime_describe(&self, client: &ClientIdentity, params: Value) -> Result<Value, CompanionError> {
        self.require_discover(client)?;
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
        Ok(json!({
            "implementation": {"name": c.implementation_name, "version": c.implementation_version},
            "protocolVersion": PROTOCOL_VERSION,
            "supportedProtocolVersions": [PROTOCOL_VERSION],
            "runtimeInstanceId": self.inner.instance_id,
            "catalogRevision": revision,
            "limits": {
                "maxActivePerClient": c.max_active_per_client,
                "maxActiveTotal": c.max_active_total,
                "maxRecords": c.max_records,
                "maxCreatesPerMinute": c.max_creates_per_minute,
                "defaultWaitMs": c.default_wait_ms,
                "maxWaitMs": c.max_wait_ms,
                "maxTimeoutMs": MAX_TIMEOUT_CAP_MS,
            },
            "authorization": {
                "clientId": client.id,
                "scopes": client.scopes.iter().map(|s| s.as_str()).collect::<Vec<_>>(),
                "internal": client.internal,
            },
            "resultRetentionMs": c.result_retention_ms,
            "availability": {
                "visible": settings.visible,
                "externalPaused": settings.external_paused,
                "reducedMotion": settings.reduced_motion,
            },
        }))
    }

    /// `characters.list` (CP-2-3): `{"current": id|null, "characters": [{"id","name",
    /// "capabilities"}]}`; each character's `capabilities` lists only registered capabilities.
    /// Needs `discover`; params `{}`.
    pub async fn characters_list(&self, client: &ClientIdentity, params: Value) -> Result<Value, CompanionError> {
        self.require_discover(client)?;
        let _: NoParams = params::parse(params)?;
        let cat = self.inner.catalog();
        let settings = self.inner.lock().settings.clone();
        let characters: Vec<Value> = cat
            .characters()
            .iter()
            .map(|c| {
                let caps: Vec<&String> = c.capabilities.iter().filter(|id| cat.capability(id).is_some()).collect();
                json!({"id": c.id, "name": c.name, "capabilities": caps})
            })
            .collect();
        Ok(json!({"current": current_character(&cat, &settings).map(|c| c.id.clone()), "characters": characters}))
    }

    /// `capabilities.list` (CP-2-4): the descriptors whose `requiredScopes` the caller holds,
    /// `{"catalogRevision": int, "capabilities": [descriptor], "nextCursor": string|null}`.
    /// Params `{"cursor"?, "limit"?}`; a cursor from another `catalogRevision` → `INVALID_PARAMS`.
    /// Needs `discover`.
    pub async fn capabilities_list(&self, client: &ClientIdentity, params: Value) -> Result<Value, CompanionError> {
        self.require_discover(client)?;
        let p: CapabilitiesListParams = params::parse(params)?;
        let visible = |c: &CapabilitySpec| c.required_scopes().iter().all(|s| client.has(*s));
        self.inner.catalog().capabilities_page(visible, p.cursor.as_deref(), p.limit.map(|l| l as usize)).ok_or_else(
            || {
                CompanionError::invalid_params(
                    "The cursor is invalid or the catalog changed since; list again from the start",
                    vec![FieldProblem::new("/cursor", "stale or malformed cursor")],
                )
            },
        )
    }

    /// `capabilities.describe` (CP-2-5): one descriptor, params `{"capability": id}`. Unknown →
    /// `UNSUPPORTED_CAPABILITY`. Needs `discover`.
    pub async fn capabilities_describe(&self, client: &ClientIdentity, params: Value) -> Result<Value, CompanionError> {
        self.require_discover(client)?;
        let p: CapabilitiesDescribeParams = params::parse(params)?;
        self.inner.catalog().capability_descriptor(&p.capability).ok_or_else(|| unsupported_capability(&p.capability))
    }

    /// `styles.list` (CP-2-6): `{"styles": [{"id","description","capabilities","fallback"}]}`,
    /// each style's `capabilities` limited to registered ones. Needs `discover`; params `{}`.
    pub async fn styles_list(&self, client: &ClientIdentity, params: Value) -> Result<Value, CompanionError> {
        self.require_discover(client)?;
        let _: NoParams = params::parse(params)?;
        let cat = self.inner.catalog();
        let styles: Vec<Value> = cat
            .styles()
            .iter()
            .map(|s| {
                let caps: Vec<&String> = s.capabilities.iter().filter(|id| cat.capability(id).is_some()).collect();
                json!({"id": s.id, "description": s.description, "capabilities": caps, "fallback": s.fallback})
            })
            .collect();
        Ok(json!({"styles": styles}))
    }
}
