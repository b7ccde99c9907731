//! Desktop companion protocol (spec CP, feature `companion`), transport-independent core
//! (CP-1-3): the request engine that the JSON-RPC/Unix-socket server, the `companion` CLI and
//! host-internal triggers all share (CP-1-5 … CP-1-7, CP-7-10).
//!
//! - Capabilities, characters and styles live in the one registry, [`crate::catalog::Catalog`]
//!   ([`crate::catalog::CapabilitySpec`]); discovery output is generated from it (CP-2-12, CP-2-13).
//! - [`protocol`] is the one table of the methods ([`protocol::Method`]: wire name, lane,
//!   admission, scope, params and result types) and the one routing decision; everything below
//!   reads it.
//! - [`Engine`] implements the ten methods of CP-2-1 ([`Engine::call_typed`]: a [`protocol::method`]
//!   marker, params JSON and [`ClientIdentity`] in, the method's result type or
//!   [`CompanionError`] out; [`Engine::call`] by name, JSON out), the request state machine
//!   (CP-3-9), idempotency (CP-4-1 … CP-4-3), ownership (CP-4-6), the bounded scheduler with one
//!   display slot (CP-4-8 … CP-4-12) and the user's hide/pause/reduced-motion settings.
//! - The host renders through its [`Presenter`] and reports back with [`Engine::displayed`],
//!   [`Engine::user_responded`], [`Engine::view_closed`], [`Engine::finished`].
//! - Every state change is persisted through a [`Store`] ([`SqliteStore`]) before it is
//!   confirmed (CP-4-20); records are kept for at least 24 h (CP-4-16); a restart fails unfinished
//!   requests without replaying them (CP-4-21).
//!
//! Around the engine (each re-exported here, flat):
//! - `server` (Unix): JSON-RPC 2.0 over a private Unix socket (directory 0700, socket 0600, no
//!   TCP, CP-5-12, CP-5-15), with `rpc.discover` returning the [`openrpc`] document;
//! - `auth` (Unix): pairing confirmed by the user in the app, 256-bit keys stored only as
//!   digests, scopes, revocation (CP-5);
//! - `client` (Unix): [`Client`], the typed client of the socket, which checks who it talks to
//!   before it sends a key, and its [`BlockingClient`];
//! - `cli` (Unix, feature `cli`): the `companion` command line (CP-6), built on the client;
//! - the MCP surface lives in [`crate::mcp::CompanionTools`] (CP-1-4).

#[cfg(unix)]
mod auth;
#[cfg(all(unix, feature = "cli"))]
#[cfg_attr(docsrs, doc(cfg(feature = "cli")))]
pub mod cli;
#[cfg(unix)]
mod client;
mod clock;
mod engine;
mod error;
mod fallback;
#[cfg(all(unix, feature = "fuzzing"))]
pub(crate) mod fuzz;
mod jsonrpc;
mod model;
pub mod openrpc;
mod presenter;
pub mod protocol;
#[cfg(unix)]
mod server;
mod state;
mod store;
#[cfg(unix)]
mod unix;

#[cfg(unix)]
pub use auth::{
    Auth, AuthConfig, CredentialStore, PairedClient, PairingApprover, PairingDecision, PairingReply, PairingRequest,
};
#[cfg(unix)]
pub use client::{BlockingClient, Client, ClientError, CredentialProfile, ProfileError, RpcError};
pub use clock::Clock;
pub use engine::{
    Engine, EngineBuilder, EngineConfig, EngineError, EngineMethod, HostError, MIN_RESULT_RETENTION_MS, WeakEngine,
};
pub use error::{CompanionError, ErrorCode};
pub use model::{ClientIdentity, Presentation, RequestSnapshot, RequestState, Source, TerminalReason};
pub use presenter::{HideReason, Presenter, PresenterEvent, ScriptedPresenter};
#[cfg(unix)]
pub(crate) use server::EXTRA_METHODS;
#[cfg(unix)]
pub use server::{
    Server, ServerConfig, bind_private, default_socket_path, ensure_private_dir, serve_listener, serve_unix,
};
pub use state::RuntimeSettings;
pub use store::{Loaded, SqliteStore, Store, StoreError, StoreSync, StoredRequest, Tombstone, TombstoneReason};
