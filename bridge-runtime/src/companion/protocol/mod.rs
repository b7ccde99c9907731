//! The companion protocol as one table (CP-2-1, CP-5, CP-8-2): every method the runtime
//! answers — the ten logical methods, `rpc.discover`, and the socket transport's
//! `pairing.request` and `session.authenticate` — with its wire name, who answers it (its
//! [`Lane`]), who may call it ([`Admit`] and the scope), its params type and its result type.
//! Routing (one function, from the method name alone), admission, the engine's dispatch, the OpenRPC document and the clients
//! all read this table; a method name appears nowhere else.
//!
//! - [`Method`]: the methods as an enum (exhaustive `match` everywhere), with
//!   [`Method::as_str`] (the wire name, byte for byte), [`Method::lane`], [`Method::admit`],
//!   [`Method::scope`], [`Method::needs_session`], [`Method::errors`], [`Method::summary`] and
//!   [`Method::description`] (from the variant's doc comment), and the params and result JSON
//!   Schemas ([`Method::params_schema`], [`Method::result_schema`]) derived from the types.
//! - [`CompanionMethod`]: the same table at the type level, one marker type per method in
//!   [`method`] (`method::RequestsCreate: CompanionMethod<Params = CreateParams, Result =
//!   RequestSnapshot>`), for typed callers: [`crate::companion::Engine::call_typed`] and the
//!   client's `call`.
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
    type Params: Serialize + DeserializeOwned + JsonSchema + Send + 'static;
    /// What the method returns.
    type Result: Serialize + DeserializeOwned + JsonSchema + Send + 'static;
}

/// Who answers a method (CP-1-3: the engine knows no transport).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Lane {
    /// The socket connection itself, in order, before it reads the next line: the methods that
    /// create or change credentials (`session.authenticate`, `pairing.request`).
    Connection,
    /// The socket transport (`rpc.discover`: its document describes the transport's own
    /// methods too).
    Transport,
    /// The [`Engine`](crate::companion::Engine), for every transport: the ten methods of CP-2-1.
    Engine,
}

impl Lane {
    /// `self == other`, usable in constant expressions.
    const fn is(self, other: Lane) -> bool {
        self as u8 == other as u8
    }
}

/// Who may call a method (CP-5-1, CP-5-6, CP-2-14, CP-7-2). One function applies it, with the
/// row's [`scope`](Method::scope), to every caller (the engine's admission).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Admit {
    /// Any socket connection, authenticated or not, whatever its scopes: `runtime.describe`, so
    /// that the protocol version can always be negotiated (CP-7-2; it reports the caller's real
    /// authorization), and the connection's own methods. A caller inside the app (the host's
    /// own triggers, the MCP tools) is always identified and still needs the row's scope.
    Open,
    /// An authenticated connection (CP-5-1) holding the row's scope, when it names one (CP-5-6,
    /// CP-2-14); without one, ownership and each capability's `requiredScopes` decide inside the
    /// method (CP-5-7).
    Session,
}

/// Where a request goes: its method and who answers it ([`route`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Route {
    /// The method.
    pub(crate) method: Method,
    /// Who answers it ([`Method::lane`]).
    pub(crate) lane: Lane,
}

/// The route of a request for the method named `name` (byte for byte); `None` for a name the
/// table does not have (`METHOD_NOT_FOUND`). Pure: the name alone decides. The socket server
/// (single calls and batches), the engine's by-name entry and the fuzz target all route with it.
pub(crate) fn route(name: &str) -> Option<Route> {
    Method::from_name(name).map(|method| Route { method, lane: method.lane() })
}

macro_rules! methods {
    ($(
        $(#[doc = $doc:literal])*
        $variant:ident = $name:literal {
            lane: $lane:ident $(($run:ident))?,
            admit: $admit:ident,
            scope: $scope:expr,
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

            /// Who answers the method.
            pub const fn lane(self) -> Lane {
                match self { $( Method::$variant => Lane::$lane, )* }
            }

            /// Who may call the method ([`Admit`], with [`Method::scope`]).
            pub const fn admit(self) -> Admit {
                match self { $( Method::$variant => Admit::$admit, )* }
            }

            /// The scope the caller must hold to call it at all (CP-5-6, CP-2-14): `discover`
            /// for discovery; `None` for the request methods (ownership and each capability's
            /// `requiredScopes` decide, CP-5-7) and for the connection's own methods.
            pub const fn scope(self) -> Option<Scope> {
                match self { $( Method::$variant => $scope, )* }
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
            pub(crate) fn result_type_name(self) -> String {
                match self { $( Method::$variant => <$result as JsonSchema>::schema_name().into_owned(), )* }
            }

            /// `params` decoded into the method's params type through the schema pipeline (as the
            /// engine decodes them, [`params::parse`]) and encoded again; `INVALID_PARAMS` when
            /// they do not fit.
            #[cfg(feature = "fuzzing")]
            pub(crate) fn decode_params(self, params: Value) -> Result<Value, crate::companion::CompanionError> {
                fn again<T: Serialize>(value: T) -> Value {
                    serde_json::to_value(value).unwrap_or(Value::Null)
                }
                match self { $( Method::$variant => params::parse::<$params>(params).map(again), )* }
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

/// The table: one row per method, in the order the OpenRPC document lists them, handed to
/// `$then!` (here `methods!`; the engine's dispatch is generated from the same rows). A row:
///
/// - `lane`: who answers ([`Lane`]); an `Engine` row names the engine's typed method
///   (`Engine(requests_create)`);
/// - `admit`, `scope`: who may call it ([`Admit`], [`Method::scope`]);
/// - `params`, `result`: the types of the method's params and result; `result_name`: the
///   result's OpenRPC content descriptor;
/// - `errors`: every code it can fail with;
/// - its doc comment: the OpenRPC summary (first paragraph) and description.
macro_rules! table {
    ($then:ident) => {
        $then! {
            /// Describes the runtime: versions, instance, limits, authorisation, retention.
            ///
            /// Implementation and protocol versions, runtime instance id, `catalogRevision`, limits, the
            /// caller's authorisation and the result retention period (CP-2-2). With `protocolVersions`,
            /// at least one must be supported, else INVALID_PARAMS (CP-7-2). Over the socket it needs
            /// neither authentication nor a scope, so a client can always negotiate the protocol version.
            RuntimeDescribe = "runtime.describe" {
                lane: Engine(runtime_describe), admit: Open, scope: Some(Scope::Discover),
                params: RuntimeDescribeParams, result: RuntimeDescription, result_name: "runtime",
                errors: [Unauthenticated, InvalidParams, InternalError, Forbidden],
            }
            /// Lists the characters, the current one, and the capabilities each supports.
            ///
            /// Counts derive from the arrays (CP-2-3). Needs the `discover` scope (CP-2-14).
            CharactersList = "characters.list" {
                lane: Engine(characters_list), admit: Session, scope: Some(Scope::Discover),
                params: NoParams, result: CharacterList, result_name: "characters",
                errors: [Unauthenticated, InvalidParams, InternalError, Forbidden],
            }
            /// Lists the capability descriptors the caller's authorisation allows, paginated.
            ///
            /// Descriptors whose `requiredScopes` the caller holds, with `catalogRevision`; a cursor from
            /// another revision is INVALID_PARAMS (CP-2-4). Needs the `discover` scope (CP-2-14).
            CapabilitiesList = "capabilities.list" {
                lane: Engine(capabilities_list), admit: Session, scope: Some(Scope::Discover),
                params: CapabilitiesListParams, result: CapabilityPage, result_name: "page",
                errors: [Unauthenticated, InvalidParams, InternalError, Forbidden],
            }
            /// Returns the complete contract of one capability.
            ///
            /// Unknown capability: UNSUPPORTED_CAPABILITY (CP-2-5, CP-2-28). Needs the `discover` scope
            /// (CP-2-14).
            CapabilitiesDescribe = "capabilities.describe" {
                lane: Engine(capabilities_describe), admit: Session, scope: Some(Scope::Discover),
                params: CapabilitiesDescribeParams, result: CapabilityDescriptor, result_name: "capability",
                errors: [Unauthenticated, InvalidParams, InternalError, Forbidden, UnsupportedCapability],
            }
            /// Lists the styles and the capabilities each applies to.
            ///
            /// No promise that every capability supports every style (CP-2-6). Needs the `discover` scope
            /// (CP-2-14).
            StylesList = "styles.list" {
                lane: Engine(styles_list), admit: Session, scope: Some(Scope::Discover),
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
                lane: Engine(requests_create), admit: Session, scope: None,
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
                lane: Engine(requests_get), admit: Session, scope: None,
                params: RequestRef, result: RequestSnapshot, result_name: "request",
                errors: [Unauthenticated, InvalidParams, InternalError, NotFound, ResultExpired],
            }
            /// Waits, for a bounded time, until the request changes or ends.
            ///
            /// Returns the snapshot as soon as `revision` exceeds `afterRevision` (default: the current
            /// one) or the request is terminal, else, after `waitMs`, `{"unchanged": true, "requestId",
            /// "revision", "state"}`; a wait timeout does not cancel the request (CP-2-9, CP-3-20).
            RequestsWait = "requests.wait" {
                lane: Engine(requests_wait), admit: Session, scope: None,
                params: WaitParams, result: WaitResult, result_name: "request",
                errors: [Unauthenticated, InvalidParams, InternalError, NotFound, ResultExpired],
            }
            /// Cancels one of the caller's requests.
            ///
            /// Only the owner can cancel (CP-2-10); the state becomes `cancelled` at once (CP-3-24). A
            /// terminal request is returned unchanged.
            RequestsCancel = "requests.cancel" {
                lane: Engine(requests_cancel), admit: Session, scope: None,
                params: RequestRef, result: RequestSnapshot, result_name: "request",
                errors: [Unauthenticated, InvalidParams, InternalError, NotFound, ResultExpired],
            }
            /// Updates a non-terminal request's updatable fields, or completes a progress request.
            ///
            /// Only the capability's `updatableFields` may change; `expectedRevision` must be current,
            /// else REVISION_CONFLICT (CP-2-11, CP-3-25). `complete: true` ends a `caller_completes`
            /// request. While the app has not yet drawn `maxPendingPresentations` earlier changes, a
            /// change to the request on screen is refused with QUEUE_FULL, nothing changed.
            RequestsUpdate = "requests.update" {
                lane: Engine(requests_update), admit: Session, scope: None,
                params: UpdateParams, result: RequestSnapshot, result_name: "request",
                errors: [
                    Unauthenticated, InvalidParams, InternalError, NotFound, ResultExpired, RevisionConflict,
                    UnsupportedCapability, QueueFull,
                ],
            }
            /// Returns this OpenRPC document.
            ///
            /// OpenRPC service discovery (CP-8-2): generated from the same registry the runtime serves
            /// (CP-2-13). Needs the `discover` scope (CP-2-14).
            Discover = "rpc.discover" {
                lane: Transport, admit: Session, scope: Some(Scope::Discover),
                params: NoParams, result: OpenrpcDocument, result_name: "openrpcDocument",
                errors: [Unauthenticated, InvalidParams, InternalError, Forbidden],
            }
            /// Authenticates this connection as a paired client.
            ///
            /// Must precede every call that needs an identity on this connection; once per connection.
            /// An unknown client and a wrong key give the same UNAUTHENTICATED.
            SessionAuthenticate = "session.authenticate" {
                lane: Connection, admit: Open, scope: None,
                params: SessionParams, result: Session, result_name: "session",
                errors: [InvalidParams, Unauthenticated, InternalError],
            }
            /// Asks the user to pair a new client; returns its id and key once.
            ///
            /// No authentication needed. The host asks the user, showing the self-reported `name`, the
            /// requested scopes and the caller's process; nothing is approved from the name alone
            /// (CP-5-2, CP-5-11). On approval the result carries the new `clientId` and `key` (shown only
            /// this once; the runtime keeps only its digest, CP-5-3, CP-5-4), the granted scopes (a
            /// subset of those asked for) and the label the user confirmed. A name that equals a paired
            /// client's, invisible characters and case aside: INVALID_PARAMS. The user denied this client
            /// recently, another pairing is waiting for the user, or too many prompts lately: RATE_LIMITED
            /// (`data.limit` says which, `retryAfterMs` when to ask again); denied, unanswered in time or
            /// nothing granted: FORBIDDEN.
            PairingRequest = "pairing.request" {
                lane: Connection, admit: Open, scope: None,
                params: PairingParams, result: Pairing, result_name: "pairing",
                errors: [InvalidParams, RateLimited, Forbidden, InternalError],
            }
        }
    };
}
pub(crate) use table;

table!(methods);

/// The ten logical methods of CP-2-1 (lane [`Lane::Engine`]), in the spec's order.
pub(crate) const ENGINE_METHODS: [Method; 10] = lane_methods(Lane::Engine);

/// The methods only the socket transport answers (lanes [`Lane::Transport`] and
/// [`Lane::Connection`]), in the table's order.
pub(crate) const SOCKET_METHODS: [Method; 3] = {
    let mut out = [Method::Discover; 3];
    let (mut i, mut n) = (0, 0);
    while i < Method::ALL.len() {
        if !Method::ALL[i].lane().is(Lane::Engine) {
            out[n] = Method::ALL[i];
            n += 1;
        }
        i += 1;
    }
    assert!(n == 3, "three socket methods");
    out
};

/// The `N` methods of `lane`, in the table's order (a build error if there are not `N`).
const fn lane_methods<const N: usize>(lane: Lane) -> [Method; N] {
    let mut out = [Method::ALL[0]; N];
    let (mut i, mut n) = (0, 0);
    while i < Method::ALL.len() {
        if Method::ALL[i].lane().is(lane) {
            assert!(n < N, "more methods in the lane than expected");
            out[n] = Method::ALL[i];
            n += 1;
        }
        i += 1;
    }
    assert!(n == N, "fewer methods in the lane than expected");
    out
}

impl Method {
    /// The method with wire name `name`, if any.
    pub fn from_name(name: &str) -> Option<Method> {
        Method::ALL.into_iter().find(|m| m.as_str() == name)
    }

    /// Whether the socket requires an authenticated connection first (CP-5-1): every method
    /// except those [`Admit::Open`] (`runtime.describe`, so the protocol version can always be
    /// negotiated, CP-7-2, `pairing.request` and `session.authenticate`).
    pub const fn needs_session(self) -> bool {
        matches!(self.admit(), Admit::Session)
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

    // CP-1-4, CP-2-1, CP-5-1, CP-7-2: the name alone decides the route; the ten CP-2-1 methods
    // go to the engine, `rpc.discover` to the transport, pairing and authentication to the
    // connection; only `runtime.describe` and the connection's methods are open without a
    // session, and the connection's methods need no scope.
    #[test]
    fn the_table_routes_and_admits() {
        for m in Method::ALL {
            assert_eq!(route(m.as_str()), Some(Route { method: m, lane: m.lane() }));
        }
        assert_eq!(route("nope"), None);
        assert_eq!(route("Requests.Create"), None, "byte for byte");
        assert_eq!(route("requests.create "), None, "byte for byte");
        let lane = |l: Lane| Method::ALL.iter().filter(|m| m.lane() == l).map(|m| m.as_str()).collect::<Vec<_>>();
        assert_eq!(lane(Lane::Engine), params::METHODS);
        assert_eq!(lane(Lane::Transport), ["rpc.discover"]);
        assert_eq!(lane(Lane::Connection), ["session.authenticate", "pairing.request"]);
        let open: Vec<&str> = Method::ALL.iter().filter(|m| !m.needs_session()).map(|m| m.as_str()).collect();
        assert_eq!(open, ["runtime.describe", "session.authenticate", "pairing.request"]);
        for m in Method::ALL.into_iter().filter(|m| m.lane() == Lane::Connection) {
            assert_eq!((m.admit(), m.scope()), (Admit::Open, None), "{m}");
        }
        let socket: Vec<&str> = SOCKET_METHODS.iter().map(|m| m.as_str()).collect();
        assert_eq!(socket, ["rpc.discover", "session.authenticate", "pairing.request"]);
    }

    #[test]
    fn schemas_derive_for_every_method() {
        for m in Method::ALL {
            assert_eq!(m.params_schema()["type"], "object", "{m}");
            assert!(m.result_schema().is_object(), "{m}");
        }
    }
}
