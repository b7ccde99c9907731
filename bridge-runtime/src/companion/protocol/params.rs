//! The params types of the companion methods ([`super::Method`], CP-2-1, CP-5). Each
//! is a Rust type whose JSON Schema (schemars, normalized like every catalog schema) validates
//! incoming params with the jsonschema crate before anything else happens; the same schemas are
//! the params of the OpenRPC document (CP-8-2). Optional keys are omitted when serialized.

use super::{ENGINE_METHODS, Method};
use crate::catalog::schema::{input_schema_for, normalize_arguments};
use crate::catalog::schema_problems;
use crate::catalog::{FieldProblem, Scope};
use crate::companion::error::CompanionError;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::sync::LazyLock;

/// The protocol version this runtime speaks (CP-7-1).
pub const PROTOCOL_VERSION: &str = "0.1";

/// The ten method names of CP-2-1, byte for byte, in the spec's order (from
/// [`super::Method`]).
pub const METHODS: [&str; 10] = {
    let mut out = [""; 10];
    let mut i = 0;
    while i < 10 {
        out[i] = ENGINE_METHODS[i].as_str();
        i += 1;
    }
    out
};

/// `runtime.describe` params: `{"protocolVersions"?: [string]}`. When given, at least one must be
/// supported, else `INVALID_PARAMS` (CP-7-2, OQ-CP-15).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RuntimeDescribeParams {
    /// Protocol versions the client speaks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol_versions: Option<Vec<String>>,
}

/// Params of methods that take none (`characters.list`, `styles.list`): `{}`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoParams {}

/// `capabilities.list` params: `{"cursor"?: string, "limit"?: 1..=100}` (CP-2-4).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CapabilitiesListParams {
    /// `nextCursor` of the previous page.
    #[schemars(length(max = 64))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
    /// Page size (default: all).
    #[schemars(range(min = 1, max = 100))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<u32>,
}

/// `capabilities.describe` params: `{"capability": id}` (CP-2-5).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CapabilitiesDescribeParams {
    /// The capability id.
    #[schemars(length(min = 1, max = 128))]
    pub capability: String,
}

/// `requests.create` params (CP-3-1, OQ-CP-3, OQ-CP-4):
/// `{"capability", "params": object, "character"?, "style"?, "timeoutMs", "idempotencyKey"?,
/// "taskId"?, "allowFallback"?: bool}`. `timeoutMs` is required and must lie within the
/// capability's `limits`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CreateParams {
    /// The capability id.
    #[schemars(length(min = 1, max = 128))]
    pub capability: String,
    /// The capability's params (`{}` when it takes none; never omitted, CP-2-16).
    pub params: Map<String, Value>,
    /// Character id; omitted = the user's current character.
    #[schemars(length(min = 1, max = 64))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub character: Option<String>,
    /// Style id; omitted = the default look.
    #[schemars(length(min = 1, max = 64))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub style: Option<String>,
    /// Deadline from acceptance, ms (CP-3-17).
    pub timeout_ms: u64,
    /// Client-scoped idempotency key (CP-4-1).
    #[schemars(length(min = 1, max = 128))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotency_key: Option<String>,
    /// The client's own label (CP-3-2).
    #[schemars(length(min = 1, max = 128))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_id: Option<String>,
    /// Allows a declared fallback presentation (CP-2-29).
    #[serde(default)]
    pub allow_fallback: bool,
}

impl CreateParams {
    /// A request for `capability` within `timeout_ms` (from acceptance, CP-3-17), with empty
    /// capability params (`{}`) and nothing else set: add the capability's params to
    /// [`CreateParams::params`] and set the optional members as needed.
    pub fn new(capability: impl Into<String>, timeout_ms: u64) -> Self {
        Self { capability: capability.into(), timeout_ms, ..Self::default() }
    }
}

/// `requests.get` / `requests.cancel` params: `{"requestId"}`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RequestRef {
    /// The request.
    #[schemars(length(min = 1, max = 64))]
    pub request_id: String,
}

/// `requests.wait` params: `{"requestId", "afterRevision"?, "waitMs"?}` (CP-3-20, OQ-CP-7).
/// Returns as soon as the revision exceeds `afterRevision` (default: the current revision) or
/// the request is terminal, else after `waitMs` (default and maximum in `runtime.describe`
/// `limits`).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WaitParams {
    /// The request.
    #[schemars(length(min = 1, max = 64))]
    pub request_id: String,
    /// The last revision the caller saw.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after_revision: Option<u64>,
    /// How long to wait at most, ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait_ms: Option<u64>,
}

/// `requests.update` params (CP-2-11, CP-3-25): `{"requestId", "expectedRevision",
/// "params"?: {field: value} (only `updatableFields`), "complete"?: bool}`. `complete: true` ends
/// a `caller_completes` request (progress) as `completed`. At least one of the two is needed.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UpdateParams {
    /// The request.
    #[schemars(length(min = 1, max = 64))]
    pub request_id: String,
    /// The revision the update is based on.
    pub expected_revision: u64,
    /// New values of updatable fields.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<Map<String, Value>>,
    /// Ends a `caller_completes` request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub complete: Option<bool>,
}

/// `pairing.request` params (CP-5-2, CP-5-11): `{"name": 1..64 characters, no control
/// characters, "scopes": [scope, …] (1..16)}`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PairingParams {
    /// The client's self-reported name, no control characters.
    #[schemars(length(min = 1, max = 64))]
    pub name: String,
    /// The scopes asked for (CP-5-6).
    #[schemars(length(min = 1, max = 16))]
    pub scopes: Vec<Scope>,
}

/// `session.authenticate` params: `{"clientId": 1..64 bytes, "key": 1..128 bytes}`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SessionParams {
    /// The `clientId` from pairing.
    #[schemars(length(min = 1, max = 64))]
    pub client_id: String,
    /// The `key` from pairing.
    #[schemars(length(min = 1, max = 128))]
    pub key: String,
}

/// A method params type with its normalized schema and compiled validator.
pub(crate) trait MethodParams: DeserializeOwned + JsonSchema {
    /// Whether the method compares its params with an earlier call's, by the canonical JSON
    /// they arrived as (idempotency, OQ-CP-16): its entry digests them before decoding.
    const IDEMPOTENT: bool;

    fn schema() -> &'static (Value, jsonschema::Validator);
}

macro_rules! method_params {
    ($($t:ty => idempotent: $idempotent:literal),* $(,)?) => {$(
        impl MethodParams for $t {
            const IDEMPOTENT: bool = $idempotent;
            fn schema() -> &'static (Value, jsonschema::Validator) {
                static V: LazyLock<(Value, jsonschema::Validator)> = LazyLock::new(|| {
                    let schema = input_schema_for::<$t>();
                    let validator = crate::catalog::schema::validator(&schema).expect("built-in method schemas compile");
                    (schema, validator)
                });
                &V
            }
        }
    )*};
}

method_params!(
    RuntimeDescribeParams => idempotent: false,
    NoParams => idempotent: false,
    CapabilitiesListParams => idempotent: false,
    CapabilitiesDescribeParams => idempotent: false,
    CreateParams => idempotent: true,
    RequestRef => idempotent: false,
    WaitParams => idempotent: false,
    UpdateParams => idempotent: false,
    PairingParams => idempotent: false,
    SessionParams => idempotent: false,
);

/// The params JSON Schema of the method named `method` ([`Method::params_schema`]), or `None`
/// for an unknown name.
pub fn params_schema(method: &str) -> Option<Value> {
    Method::from_name(method).map(Method::params_schema)
}

/// Validates `params` (absent/`null` = `{}`; `null` for an optional key = absent) against `T`'s
/// schema, then deserializes it. Errors: `INVALID_PARAMS` with `problems`.
pub(crate) fn parse<T: MethodParams>(params: Value) -> Result<T, CompanionError> {
    let mut params = if params.is_null() { Value::Object(Map::new()) } else { params };
    let (schema, validator) = T::schema();
    normalize_arguments(schema, &mut params);
    let problems = schema_problems(validator, &params);
    if !problems.is_empty() {
        return Err(CompanionError::invalid_params("The method parameters are invalid", problems));
    }
    serde_json::from_value(params).map_err(|_| {
        CompanionError::invalid_params(
            "The method parameters are invalid",
            vec![FieldProblem::new("", "does not match the method's parameter shape")],
        )
    })
}
