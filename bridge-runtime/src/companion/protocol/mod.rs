//! The companion protocol as one table (CP-2-1, CP-5, CP-8-2): every method the runtime
//! answers — the ten logical methods, `rpc.discover`, and the socket transport's
//! `pairing.request` and `session.authenticate` — with its wire name, the scope it needs, its
//! params type and its result type. The engine's dispatch, the socket server's routing, the
//! OpenRPC document and the CLI all read this table; a method name appears nowhere else.
//!
//! - [`Method`]: the methods as an enum (exhaustive `match` everywhere), with
//!   [`Method::as_str`] (the wire name, byte for byte), [`Method::scope`],
//!   [`Method::needs_session`], [`Method::errors`], [`Method::summary`] and
//!   [`Method::description`] (from the variant's doc comment), and the params and result JSON
//!   Schemas ([`Method::params_schema`], [`Method::result_schema`]) derived from the types.
//! - [`CompanionMethod`]: the same table at the type level, one marker type per method in
//!   [`method`] (`method::RequestsCreate: CompanionMethod<Params = CreateParams, Result =
//!   RequestSnapshot>`), for typed callers such as the CLI.
//! - Params types live in [`params`], result types in [`results`]; all of them are
//!   `Serialize + Deserialize + JsonSchema` with the spec's camelCase wire names.

pub mod params;
pub mod results;

use crate::catalog::Scope;
use crate::catalog::schema::{input_schema_for, output_schema_for};
use crate::companion::error::ErrorCode;
use crate::companion::model::RequestSnapshot;
use params::{
    CapabilitiesDescribeParams, CapabilitiesListParams, CreateParams, NoParams, PairingParams, RequestRef,
    RuntimeDescribeParams, SessionParams, UpdateParams, WaitParams,
};
use results::{
    CapabilityDescriptor, CapabilityPage, CharacterList, OpenrpcDocument, Pairing, RuntimeDescription, Session,
    StyleList, WaitResult,
};
use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// One method of the table at the type level: its [`Method`], params type and result type.
pub trait CompanionMethod {
    /// The method.
    const METHOD: Method;
    /// What `params` deserializes into (by name, one JSON object).
    type Params: Serialize + DeserializeOwned + JsonSchema;
    /// What the method returns.
    type Result: Serialize + DeserializeOwned + JsonSchema;
}

/// Where a method is served.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Served {
    /// By the [`super::Engine`] (the ten logical methods of CP-2-1), for every transport.
    Engine,
    /// By the socket server itself (`rpc.discover`, pairing, connection authentication).
    Transport,
}

macro_rules! methods {
    ($(
        $(#[doc = $doc:literal])*
        $variant:ident = $name:literal {
            served: $served:ident,
            scope: $scope:expr,
            session: $session:expr,
            params: $params:ty,
            result: $result:ty,
            result_name: $rname:literal,
            errors: [$($err:ident),* $(,)?] $(,)?
        }
    )*) => {
        /// A method of the companion protocol (CP-2-1, CP-5, CP-8-2). [`Method::as_str`] is the
        /// wire name; each variant's documentation is the method's summary (first paragraph)
        /// and description in the OpenRPC document.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Method {
            $( $(#[doc = $doc])* $variant, )*
        }

        impl Method {
            /// Every method, in the order the OpenRPC document lists them.
            pub const ALL: [Method; [$(Method::$variant),*].len()] = [$(Method::$variant),*];

            /// The wire name, byte for byte (e.g. `"requests.create"`).
            pub const fn as_str(self) -> &'static str {
                match self { $( Method::$variant => $name, )* }
            }

            /// Where the method is served.
            pub const fn served(self) -> Served {
                match self { $( Method::$variant => Served::$served, )* }
            }

            /// The scope the caller must hold to call it at all (CP-5-6, CP-2-14): `discover`
            /// for discovery; `None` for the request methods (ownership and each capability's
            /// `requiredScopes` decide, CP-5-7) and for the transport's own methods.
            pub const fn scope(self) -> Option<Scope> {
                match self { $( Method::$variant => $scope, )* }
            }

            /// Whether the socket requires an authenticated connection first (CP-5-1): every
            /// method except `runtime.describe` (so the protocol version can always be
            /// negotiated, CP-7-2), `pairing.request` and `session.authenticate`.
            pub const fn needs_session(self) -> bool {
                match self { $( Method::$variant => $session, )* }
            }

            /// The name of the result's OpenRPC content descriptor (e.g. `request`).
            pub const fn result_name(self) -> &'static str {
                match self { $( Method::$variant => $rname, )* }
            }

            /// Every code the method can fail with (CP-6-17).
            pub const fn errors(self) -> &'static [ErrorCode] {
                match self { $( Method::$variant => &[$(ErrorCode::$err),*], )* }
            }

            /// The params JSON Schema (input contract of the schema pipeline), derived from the
            /// params type: the schema the engine validates with.
            pub fn params_schema(self) -> Value {
                match self { $( Method::$variant => input_schema_for::<$params>(), )* }
            }

            /// The result JSON Schema (output contract), derived from the result type.
            pub fn result_schema(self) -> Value {
                match self { $( Method::$variant => output_schema_for::<$result>(), )* }
            }

            /// The result type's schema name (`RequestSnapshot`, `CapabilityPage`, …): its key
            /// under the OpenRPC document's `components/schemas`.
            pub fn result_type_name(self) -> String {
                match self { $( Method::$variant => <$result as JsonSchema>::schema_name().into_owned(), )* }
            }

            fn doc_lines(self) -> &'static [&'static str] {
                match self { $( Method::$variant => &[$($doc),*], )* }
            }
        }

        /// One marker type per [`Method`], implementing [`CompanionMethod`].
        pub mod method {
            use super::*;
            $(
                $(#[doc = $doc])*
                #[derive(Debug, Clone, Copy)]
                pub struct $variant;
                impl CompanionMethod for $variant {
                    const METHOD: Method = Method::$variant;
                    type Params = $params;
                    type Result = $result;
                }
            )*
        }
    };
}

methods! {
    /// Describes the runtime: versions, instance, limits, authorisation, retention.
    ///
    /// Implementation and protocol versions, runtime instance id, `catalogRevision`, limits, the
    /// caller's authorisation and the result retention period (CP-2-2). With `protocolVersions`,
    /// at least one must be supported, else INVALID_PARAMS (CP-7-2). Over the socket it needs
    /// neither authentication nor a scope, so a client can always negotiate the protocol version.
    RuntimeDescribe = "runtime.describe" {
        served: Engine, scope: Some(Scope::Discover), session: false,
        params: RuntimeDescribeParams, result: RuntimeDescription, result_name: "runtime",
        errors: [Unauthenticated, InvalidParams, InternalError, Forbidden],
    }
    /// Lists the characters, the current one, and the capabilities each supports.
    ///
    /// Counts derive from the arrays (CP-2-3). Needs the `discover` scope (CP-2-14).
    CharactersList = "characters.list" {
        served: Engine, scope: Some(Scope::Discover), session: true,
        params: NoParams, result: CharacterList, result_name: "characters",
        errors: [Unauthenticated, InvalidParams, InternalError, Forbidden],
    }
    /// Lists the capability descriptors the caller's authorisation allows, paginated.
    ///
    /// Descriptors whose `requiredScopes` the caller holds, with `catalogRevision`; a cursor from
    /// another revision is INVALID_PARAMS (CP-2-4). Needs the `discover` scope (CP-2-14).
    CapabilitiesList = "capabilities.list" {
        served: Engine, scope: Some(Scope::Discover), session: true,
        params: CapabilitiesListParams, result: CapabilityPage, result_name: "page",
        errors: [Unauthenticated, InvalidParams, InternalError, Forbidden],
    }
    /// Returns the complete contract of one capability.
    ///
    /// Unknown capability: UNSUPPORTED_CAPABILITY (CP-2-5, CP-2-28). Needs the `discover` scope
    /// (CP-2-14).
    CapabilitiesDescribe = "capabilities.describe" {
        served: Engine, scope: Some(Scope::Discover), session: true,
        params: CapabilitiesDescribeParams, result: CapabilityDescriptor, result_name: "capability",
        errors: [Unauthenticated, InvalidParams, InternalError, Forbidden, UnsupportedCapability],
    }
    /// Lists the styles and the capabilities each applies to.
    ///
    /// No promise that every capability supports every style (CP-2-6). Needs the `discover` scope
    /// (CP-2-14).
    StylesList = "styles.list" {
        served: Engine, scope: Some(Scope::Discover), session: true,
        params: NoParams, result: StyleList, result_name: "styles",
        errors: [Unauthenticated, InvalidParams, InternalError, Forbidden],
    }
    /// Validates and creates a request; returns its snapshot.
    ///
    /// Validates `params` against the capability's inputSchema plus its semantic checks, checks
    /// the capability's `requiredScopes`, and accepts the request into the queue (CP-2-7,
    /// CP-3-1). Acceptance is not completion: follow the snapshot with `requests.wait` (CP-8-1).
    /// `timeoutMs` must lie within the capability's `limits` and runs from acceptance (CP-3-17).
    /// The same `idempotencyKey` with the same params returns the same request; with other params
    /// IDEMPOTENCY_CONFLICT (CP-4-1 … CP-4-3).
    RequestsCreate = "requests.create" {
        served: Engine, scope: None, session: true,
        params: CreateParams, result: RequestSnapshot, result_name: "request",
        errors: [
            Unauthenticated, InvalidParams, InternalError, Forbidden, UnsupportedCapability, UnsupportedStyle,
            IdempotencyConflict, RuntimeUnavailable, RateLimited, QueueFull,
        ],
    }
    /// Returns one of the caller's requests and its current result.
    ///
    /// Another client's request is NOT_FOUND, indistinguishable from a missing one (CP-2-8,
    /// CP-6-18).
    RequestsGet = "requests.get" {
        served: Engine, scope: None, session: true,
        params: RequestRef, result: RequestSnapshot, result_name: "request",
        errors: [Unauthenticated, InvalidParams, InternalError, NotFound, ResultExpired],
    }
    /// Waits, for a bounded time, until the request changes or ends.
    ///
    /// Returns the snapshot as soon as `revision` exceeds `afterRevision` (default: the current
    /// one) or the request is terminal, else, after `waitMs`, `{"unchanged": true, "requestId",
    /// "revision", "state"}`; a wait timeout does not cancel the request (CP-2-9, CP-3-20).
    RequestsWait = "requests.wait" {
        served: Engine, scope: None, session: true,
        params: WaitParams, result: WaitResult, result_name: "request",
        errors: [Unauthenticated, InvalidParams, InternalError, NotFound, ResultExpired],
    }
    /// Cancels one of the caller's requests.
    ///
    /// Only the owner can cancel (CP-2-10); the state becomes `cancelled` at once (CP-3-24). A
    /// terminal request is returned unchanged.
    RequestsCancel = "requests.cancel" {
        served: Engine, scope: None, session: true,
        params: RequestRef, result: RequestSnapshot, result_name: "request",
        errors: [Unauthenticated, InvalidParams, InternalError, NotFound, ResultExpired],
    }
    /// Updates a non-terminal request's updatable fields, or completes a progress request.
    ///
    /// Only the capability's `updatableFields` may change; `expectedRevision` must be current,
    /// else REVISION_CONFLICT (CP-2-11, CP-3-25). `complete: true` ends a `caller_completes`
    /// request.
    RequestsUpdate = "requests.update" {
        served: Engine, scope: None, session: true,
        params: UpdateParams, result: RequestSnapshot, result_name: "request",
        errors: [
            Unauthenticated, InvalidParams, InternalError, NotFound, ResultExpired, RevisionConflict,
            UnsupportedCapability,
        ],
    }
    /// Returns this OpenRPC document.
    ///
    /// OpenRPC service discovery (CP-8-2): generated from the same registry the runtime serves
    /// (CP-2-13). Needs the `discover` scope (CP-2-14).
    Discover = "rpc.discover" {
        served: Transport, scope: Some(Scope::Discover), session: true,
        params: NoParams, result: OpenrpcDocument, result_name: "openrpcDocument",
        errors: [Unauthenticated, InvalidParams, InternalError, Forbidden],
    }
    /// Authenticates this connection as a paired client.
    ///
    /// Must precede every call that needs an identity on this connection; once per connection.
    /// An unknown client and a wrong key give the same UNAUTHENTICATED.
    SessionAuthenticate = "session.authenticate" {
        served: Transport, scope: None, session: false,
        params: SessionParams, result: Session, result_name: "session",
        errors: [InvalidParams, Unauthenticated, InternalError],
    }
    /// Asks the user to pair a new client; returns its id and key once.
    ///
    /// No authentication needed. The host asks the user, showing the self-reported `name`, the
    /// requested scopes and the caller's process; nothing is approved from the name alone
    /// (CP-5-2, CP-5-11). On approval the result carries the new `clientId` and `key` (shown only
    /// this once; the runtime keeps only its digest, CP-5-3, CP-5-4), the granted scopes (a
    /// subset of those asked for) and the label the user confirmed. Another pairing waiting for
    /// the user: RATE_LIMITED; denied, unanswered in time or nothing granted: FORBIDDEN.
    PairingRequest = "pairing.request" {
        served: Transport, scope: None, session: false,
        params: PairingParams, result: Pairing, result_name: "pairing",
        errors: [InvalidParams, RateLimited, Forbidden, InternalError],
    }
}

/// The ten logical methods of CP-2-1, in the spec's order.
pub const ENGINE_METHODS: [Method; 10] = {
    let mut out = [Method::RuntimeDescribe; 10];
    let (mut i, mut n) = (0, 0);
    while i < Method::ALL.len() {
        if matches!(Method::ALL[i].served(), Served::Engine) {
            out[n] = Method::ALL[i];
            n += 1;
        }
        i += 1;
    }
    assert!(n == 10, "CP-2-1 has ten methods");
    out
};

impl Method {
    /// The method with wire name `name`, if any.
    pub fn from_name(name: &str) -> Option<Method> {
        Method::ALL.into_iter().find(|m| m.as_str() == name)
    }

    /// One line: the first paragraph of the variant's documentation.
    pub fn summary(self) -> String {
        paragraphs(self.doc_lines()).into_iter().next().unwrap_or_default()
    }

    /// The rest of the variant's documentation (Markdown), paragraphs separated by a blank line.
    pub fn description(self) -> String {
        paragraphs(self.doc_lines()).into_iter().skip(1).collect::<Vec<_>>().join("\n\n")
    }
}

impl std::fmt::Display for Method {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Doc-comment lines joined into paragraphs (a blank line separates them).
fn paragraphs(lines: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    let mut current: Vec<&str> = Vec::new();
    for line in lines.iter().map(|l| l.trim()) {
        if line.is_empty() {
            if !current.is_empty() {
                out.push(current.join(" "));
                current.clear();
            }
        } else {
            current.push(line);
        }
    }
    if !current.is_empty() {
        out.push(current.join(" "));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_round_trip() {
        for m in Method::ALL {
            assert_eq!(Method::from_name(m.as_str()), Some(m));
            assert!(!m.summary().is_empty() && !m.description().is_empty(), "{m}");
            assert!(!m.errors().is_empty(), "{m}");
        }
        let mut names: Vec<&str> = Method::ALL.iter().map(|m| m.as_str()).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), Method::ALL.len());
        assert_eq!(Method::from_name("nope"), None);
    }

    #[test]
    fn schemas_derive_for_every_method() {
        for m in Method::ALL {
            assert_eq!(m.params_schema()["type"], "object", "{m}");
            assert!(m.result_schema().is_object(), "{m}");
        }
    }
}
