//! The engine's entries (CP-1-5 … CP-1-7): by name ([`Engine::call`]) and typed
//! ([`Engine::call_typed`]). Both admit the caller by the method's row of the protocol table
//! ([`Engine::admit`]: the one place where authorization is decided, for the socket too), digest
//! the params of an idempotent method as they arrived, decode the method's params type and run
//! its typed method. The typed methods and the by-name match are generated from the table's
//! rows (`protocol::table!`), so no method is listed here by hand.

use super::{Engine, forbidden, wire};
use crate::companion::error::{CompanionError, ErrorCode};
use crate::companion::model::ClientIdentity;
use crate::companion::protocol::results::TransportLimits;
use crate::companion::protocol::{Admit, CompanionMethod, Lane, Method, Route, method, route};
use serde_json::Value;
use std::future::Future;

/// Who is calling: what admission looks at.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Caller<'a> {
    /// Inside the app: the host's own triggers and the MCP tools, acting as an identity the host
    /// chose (CP-1-5, CP-1-6).
    Host(&'a ClientIdentity),
    /// A socket connection, authenticated (`Some`) or not yet; `transport` is what
    /// `runtime.describe` publishes of the connection's limits (every member present).
    Connection { identity: Option<&'a ClientIdentity>, transport: &'a TransportLimits },
}

impl<'a> Caller<'a> {
    fn identity(self) -> Option<&'a ClientIdentity> {
        match self {
            Caller::Host(client) => Some(client),
            Caller::Connection { identity, .. } => identity,
        }
    }
}

/// An admitted call, as a typed method of the engine receives it: who makes it, and for an
/// idempotent method the digest of its params as they arrived. Opaque: only the engine's
/// entries make one, after admission. Public only as the sealed [`EngineMethod`]'s hidden
/// parameter type: nothing outside the crate can name it.
#[derive(Debug)]
#[allow(unreachable_pub)]
pub struct Admitted<'a> {
    caller: Caller<'a>,
    digest: Option<String>,
}

impl<'a> Admitted<'a> {
    /// The caller's identity: present for every method admitted with a session; `None` only
    /// for an open method called on a connection that has not authenticated.
    pub(super) fn identity(&self) -> Option<&'a ClientIdentity> {
        self.caller.identity()
    }

    /// The caller's identity, for the methods admission lets only identified callers make
    /// (`UNAUTHENTICATED` otherwise, which admission already answered).
    pub(super) fn client(&self) -> Result<&'a ClientIdentity, CompanionError> {
        self.identity().ok_or_else(unauthenticated)
    }

    /// SHA-256 (hex) of the canonical JSON of the params as they arrived (OQ-CP-16), for an
    /// idempotent method.
    pub(super) fn digest(&self) -> Result<&str, CompanionError> {
        self.digest
            .as_deref()
            .ok_or_else(|| CompanionError::new(ErrorCode::InternalError, "The request parameters were not recorded"))
    }

    /// The connection's transport limits, when the caller is a socket connection.
    pub(super) fn transport(&self) -> Option<&'a TransportLimits> {
        match self.caller {
            Caller::Host(_) => None,
            Caller::Connection { transport, .. } => Some(transport),
        }
    }
}

mod sealed {
    // The sealed-trait idiom: public, in a module nobody outside can name.
    #[allow(unreachable_pub)]
    pub trait Sealed {}
}

/// A method the engine serves: lane [`Lane::Engine`] of the protocol table, the ten methods
/// of CP-2-1, one marker type each in [`method`] (`method::RequestsCreate`, …). Sealed: the
/// table implements it. Call one with [`Engine::call_typed`].
pub trait EngineMethod: CompanionMethod + sealed::Sealed {
    /// Whether the method's params are compared by the canonical JSON they arrived as.
    #[doc(hidden)]
    const IDEMPOTENT: bool;

    /// The params, validated against their schema and decoded (`INVALID_PARAMS` with
    /// `problems`).
    #[doc(hidden)]
    fn decode(params: Value) -> Result<Self::Params, CompanionError>;

    /// The typed method.
    #[doc(hidden)]
    fn run<'a>(
        engine: &'a Engine,
        call: Admitted<'a>,
        params: Self::Params,
    ) -> impl Future<Output = Result<Self::Result, CompanionError>> + Send + 'a;
}

/// The engine's part of the table: [`EngineMethod`] for every row answered by the engine,
/// and [`Engine::serve`], the one match from a [`Method`] to its typed method.
macro_rules! engine_methods {
    ($(
        $(#[$attr:meta])*
        $variant:ident = $name:literal {
            lane: $lane:ident $(($run:ident))?,
            admit: $admit:ident,
            scope: $scope:expr,
            params: $params:ty,
            result: $result:ty,
            $($rest:tt)*
        }
    )*) => {
        $($(
            impl sealed::Sealed for method::$variant {}

            impl EngineMethod for method::$variant {
                const IDEMPOTENT: bool = <$params as crate::companion::protocol::params::MethodParams>::IDEMPOTENT;

                fn decode(params: Value) -> Result<$params, CompanionError> {
                    crate::companion::protocol::params::parse(params)
                }

                fn run<'a>(
                    engine: &'a Engine,
                    call: Admitted<'a>,
                    params: $params,
                ) -> impl Future<Output = Result<$result, CompanionError>> + Send + 'a {
                    engine.$run(call, params)
                }
            }
        )?)*

        impl Engine {
            /// Runs `method` for `caller` with JSON `params` and encodes its result: the one
            /// match from the table's methods to the engine's typed methods. A method another
            /// lane answers → `METHOD_NOT_FOUND`.
            pub(crate) async fn serve(
                &self,
                method: Method,
                caller: Caller<'_>,
                params: Value,
            ) -> Result<Value, CompanionError> {
                match method {
                    $( Method::$variant => engine_arm!(self, caller, params, $variant $(, $run)?), )*
                }
            }
        }
    };
}

/// One arm of [`Engine::serve`]: the typed entry of an engine method, `METHOD_NOT_FOUND` for
/// the others.
macro_rules! engine_arm {
    ($engine:expr, $caller:expr, $params:expr, $variant:ident, $run:ident) => {
        wire(Method::$variant, $engine.typed::<method::$variant>($caller, $params).await)
    };
    ($engine:expr, $caller:expr, $params:expr, $variant:ident) => {
        Err(unknown_method(Method::$variant.as_str()))
    };
}

// The rows name their params and result types as the protocol module sees them.
const _: () = {
    use crate::companion::model::RequestSnapshot;
    use crate::companion::protocol::params::*;
    use crate::companion::protocol::results::*;
    crate::companion::protocol::table!(engine_methods);
};

impl Engine {
    /// Calls method `M` of the protocol table for `client` with its JSON `params` (`null` =
    /// `{}`) and returns its typed result: the typed entry for callers inside the app (the
    /// host's own triggers and the MCP tools, CP-1-5, CP-1-6), through the same admission,
    /// validation, queue and lifecycle as socket clients.
    ///
    /// Errors: a revoked client → `UNAUTHENTICATED`; a client without the method's scope →
    /// `FORBIDDEN` with `requiredScopes`; params that do not fit `M::Params` →
    /// `INVALID_PARAMS` with `problems`; otherwise the method's own errors ([`Method::errors`]).
    ///
    /// ```no_run
    /// # async fn demo(engine: bridge_runtime::companion::Engine) -> Result<(), bridge_runtime::companion::CompanionError> {
    /// use bridge_runtime::companion::ClientIdentity;
    /// use bridge_runtime::companion::protocol::method;
    /// let host = ClientIdentity::host("host", "The app itself");
    /// let params = serde_json::json!({"capability": "notice.show", "params": {"text": "Saved"}, "timeoutMs": 5000});
    /// let snapshot = engine.call_typed::<method::RequestsCreate>(&host, params).await?;
    /// println!("{} is {}", snapshot.request_id, snapshot.state.as_str());
    /// # Ok(()) }
    /// ```
    pub async fn call_typed<M: EngineMethod>(
        &self,
        client: &ClientIdentity,
        params: Value,
    ) -> Result<M::Result, CompanionError> {
        self.typed::<M>(Caller::Host(client), params).await
    }

    /// Calls the method named `method` for `client` with JSON `params` (`null` = `{}`) and
    /// returns its result as JSON: the untyped entry for callers inside the app (CP-1-5,
    /// CP-1-6). An unknown name, or a method the socket transport answers itself (`rpc.discover`,
    /// `pairing.request`, `session.authenticate`) → `METHOD_NOT_FOUND`; otherwise as
    /// [`Engine::call_typed`].
    pub async fn call(&self, client: &ClientIdentity, method: &str, params: Value) -> Result<Value, CompanionError> {
        match route(method) {
            Some(Route { method, lane: Lane::Engine }) => self.serve(method, Caller::Host(client), params).await,
            _ => Err(unknown_method(method)),
        }
    }

    /// Admits `M`, records the digest of idempotent params, decodes them and runs the method.
    async fn typed<M: EngineMethod>(&self, caller: Caller<'_>, params: Value) -> Result<M::Result, CompanionError> {
        self.admit(M::METHOD, caller)?;
        // Compared as they arrived (OQ-CP-16): decoding drops `null` members and defaults
        // omitted ones, so the decoded params are never what is hashed.
        let digest = M::IDEMPOTENT.then(|| params_digest(&params));
        let params = M::decode(params)?;
        M::run(self, Admitted { caller, digest }, params).await
    }

    /// Whether `caller` may call `method`, by the method's row of the protocol table
    /// ([`Admit`], [`Method::scope`]): the one place authorization is decided, for the socket
    /// transport too. A revoked client → `UNAUTHENTICATED` (CP-4-22); an [`Admit::Open`] method
    /// called on a connection → allowed, authenticated or not, whatever the scopes (CP-7-2);
    /// otherwise a connection that has not authenticated → `UNAUTHENTICATED` (CP-5-1), and a
    /// caller without the row's scope → `FORBIDDEN` with `requiredScopes` and `missingScopes`
    /// (CP-5-6, CP-2-14, CP-6-20).
    pub(crate) fn admit(&self, method: Method, caller: Caller<'_>) -> Result<(), CompanionError> {
        let identity = caller.identity();
        if let Some(client) = identity
            && self.inner.lock().revoked.contains(&client.id)
        {
            return Err(CompanionError::new(ErrorCode::Unauthenticated, "This client's key has been revoked"));
        }
        if let (Caller::Connection { .. }, Admit::Open) = (caller, method.admit()) {
            return Ok(());
        }
        let client = identity.ok_or_else(unauthenticated)?;
        match method.scope() {
            Some(scope) if !client.has(scope) => Err(forbidden(&[scope], client)),
            _ => Ok(()),
        }
    }
}

fn unauthenticated() -> CompanionError {
    CompanionError::new(ErrorCode::Unauthenticated, format!("Authenticate first: call {}", Method::SessionAuthenticate))
}

fn unknown_method(name: &str) -> CompanionError {
    CompanionError::new(ErrorCode::MethodNotFound, format!("Unknown method `{}`", crate::model::quote::clip(name)))
}

/// SHA-256 (hex) of the canonical JSON of params as they arrived: what idempotency compares
/// (OQ-CP-16). A digest rather than the JSON itself, so that request content is not stored
/// twice.
fn params_digest(params: &Value) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(crate::model::json::canonical_json(params, false).as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}
