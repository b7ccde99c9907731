//! # bridge-runtime
//!
//! Hand a desktop app's UI to AI agents safely. Annotate your own types with
//! `#[bridge_window]` and `#[bridge_actions]`; the runtime keeps one registry of windows and
//! actions and serves it as the GUI Bridge protocol over MCP (spec GB): one subscribable
//! resource `app://windows`, window-level tools `{winId}__{action}`, optimistic concurrency,
//! coded errors and notifications.
//!
//! Data flows one way: annotated type → [`catalog`] → [`gui`] model → [`mcp`] adapter → wire;
//! the desktop companion (`companion`) reads the same catalog, and [`export`] combines the
//! surfaces into build-time files.
//!
//! # Cargo features
//!
//! Pay for what you use: an app that serves its windows over MCP on stdio builds the default
//! set, with no C compiler, no axum, no clap.
//!
//! | feature | adds | pulls in |
//! | --- | --- | --- |
//! | *(default)* | the registry ([`catalog`]), the GUI window model ([`gui`]), MCP over stdio ([`mcp`]), the JSON export | rmcp (server, stdio), schemars, serde, serde_json, jsonschema, tokio (rt, sync, time, macros, io-util), tokio-util, tracing, thiserror, bridge-rules (no dependencies) |
//! | `http` | streamable HTTP: `mcp::serve_http*`, `mcp::http_router`, with a bearer access token | axum (http1, tokio only), hyper, hyper-util, tower, getrandom, subtle, libc (Unix), rmcp's HTTP server |
//! | `companion` | the desktop companion (spec CP): engine, durable SQLite store, OpenRPC, `companion__…` MCP tools; on Unix the private-socket server and pairing | rusqlite with bundled SQLite (C), sha2, subtle, getrandom, uuid, libc (Unix) |
//! | `cli` | the `companion` command-line client (binary `companion`; implies `companion`) | clap |
//! | `yaml` | `Catalog::to_yaml`, `catalog.yaml` in the export | yaml_serde |
//! | `tokens` | `export::tool_costs`: each tool's cost to an agent, in OpenAI's `o200k_base` tokens, also listed by `export::write_all`'s report | tiktoken-rs |
//! | `testing` | `testing::TestApp`: drive your windows in a plain `#[test]` as an agent would, with the GUI Bridge invariants checked on every step | nothing |
//! | `fuzzing` | not public API: the companion socket's input path and the stdio pre-layer's classifier in `__internals`, for the fuzz targets in `bridge-runtime/fuzz/` and their corpus replay test (implies `companion`) | nothing more |
//!
//! Everything Unix-specific (the socket, file modes, `geteuid`) sits in modules gated by
//! `#[cfg(unix)]`; the rest builds everywhere (`.ci/check-layers` enforces it).
#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod catalog;
#[cfg(feature = "companion")]
#[cfg_attr(docsrs, doc(cfg(feature = "companion")))]
pub mod companion;
pub mod export;
pub mod gui;
pub mod mcp;
pub mod model;
#[cfg(all(unix, any(feature = "http", feature = "companion")))]
mod private_dir;
pub mod render;
#[cfg(feature = "testing")]
#[cfg_attr(docsrs, doc(cfg(feature = "testing")))]
pub mod testing;

pub use bridge_macros::{BridgeArgs, BridgeFields, BridgeRow, bridge_action, bridge_actions, bridge_window};
pub use catalog::{ActionHints, ActionSpec, BridgeArgs, BridgeCapabilities, Catalog, DescribeActions, DescribeWindow};
pub use gui::{
    ActionContext, ActionError, Bridge, BridgeActions, BridgeBuilder, BridgeWindow, OpenOptions, Rendered, Ui, UiOwner,
};
pub use model::{Block, ErrorCode, FieldError, FieldItem, Secret, Severity, ToolError, ToolResult};
pub use render::{FieldSet, Media, Notice, TableRow};

/// Everything an app author needs in scope.
pub mod prelude {
    pub use crate::catalog::{BridgeCapabilities, DescribeActions, DescribeWindow};
    pub use crate::gui::{ActionContext, ActionError, Bridge, BridgeActions, BridgeWindow, OpenOptions, Rendered, Ui};
    pub use crate::model::{Block, FieldError, FieldItem, Secret, Severity};
    pub use crate::render::{FieldSet, Media, Notice, TableRow};
    // `BridgeArgs` is both the trait and its derive, as serde's `Serialize` is.
    pub use crate::{BridgeArgs, BridgeFields, BridgeRow};
    pub use crate::{bridge_action, bridge_actions, bridge_window};
    pub use schemars::JsonSchema;
    pub use serde::{Deserialize, Serialize};
}

/// Items the generated code refers to. Not public API.
#[doc(hidden)]
pub mod __private {
    pub use schemars;
    pub use serde;
    pub use serde_json;

    pub use crate::catalog::args::require_args;
    pub use crate::catalog::decode::*;
    pub use crate::catalog::{
        ActionHints, ActionSpec, BlockKind, BlockSpec, BridgeArgs, DescribeActions, DescribeWindow, ViewCsp,
        WindowMeta, WindowView,
    };
    pub use crate::gui::context::result_value;
    pub use crate::gui::{ActionContext, ActionError, BridgeActions, BridgeWindow, Rendered};
    pub use crate::model::{Block, FieldItem, Severity};

    pub use crate::render::support::*;
    pub use crate::render::*;

    // #[bridge_actions(companion)]
    pub use crate::catalog::{
        BridgeCapabilities, CancelBehavior, CapabilityKind, CapabilitySpec, Completion, FallbackReason, FieldProblem,
        InteractionType, QueueMode, QueuePolicy, Scope, SpecError,
    };
}

/// Internals for this workspace's own tests, benches and fuzz targets. **Not API**: nothing
/// here follows semver; it may change or go away in any release. App code must not use it.
///
/// Each item is crate-private plumbing exposed as it is, under a path that says so; the public
/// API never depends on it.
#[doc(hidden)]
pub mod __internals {
    /// How many legacy forwarding tasks run in this process (the MCP leak test counts them).
    pub use crate::mcp::notify::live_forwarders;

    /// The schema pipeline (`catalog::schema`): what the schema fuzz target and the schema
    /// tests drive directly.
    pub mod schema {
        pub use crate::catalog::schema::{
            Contract, FieldErrors, MAX_REPORTED_PROBLEMS, MAX_SAFE_INTEGER, STANDARD_FORMATS, field_errors, normalize,
            normalize_arguments, object_root, object_schema_for, output_schema_for, tool_result_envelope, validator,
        };
    }

    /// The id rules of capabilities, characters and styles (CP-2-27) as the catalog applies them.
    pub fn validate_capability_id(id: &str) -> Result<(), crate::catalog::SpecError> {
        crate::catalog::validate_capability_id(id)
    }

    /// The companion's OpenRPC internals the OpenRPC tests check.
    #[cfg(feature = "companion")]
    pub mod openrpc {
        /// The `components.schemas` key of capability `id`'s input schema.
        pub fn input_schema_key(id: &str) -> String {
            crate::companion::openrpc::input_schema_key(id)
        }

        /// The `components.schemas` key of capability `id`'s output schema.
        pub fn output_schema_key(id: &str) -> String {
            crate::companion::openrpc::output_schema_key(id)
        }

        /// The methods only the socket transport answers, by wire name, as `rpc.discover` lists
        /// them.
        #[cfg(unix)]
        pub const EXTRA_METHODS: [&str; 3] = crate::companion::EXTRA_METHODS;
    }

    /// The companion socket's input path (framing, parsing, routing, params decoding) on one
    /// byte stream, checking its properties; panics when one breaks. For the fuzz targets in
    /// `bridge-runtime/fuzz/` and their corpus replay test (feature `fuzzing`, which implies
    /// `companion`). The tools and schema targets need no entry here: they drive
    /// `testing::TestApp` and [`schema`].
    #[cfg(all(unix, feature = "fuzzing"))]
    pub use crate::companion::fuzz::{JsonrpcReport, jsonrpc};
    /// The stdio pre-layer's classifier on lines of bytes, checking its properties; panics
    /// when one breaks (feature `fuzzing`).
    #[cfg(feature = "fuzzing")]
    pub use crate::mcp::fuzz::{PrelayerReport, prelayer};

    /// The HTTP transport's checks before a body is read (`Host`, `Origin`, the bearer token) on
    /// one arbitrary request head, checking their properties; panics when one breaks. For the
    /// `http_head` fuzz target and its corpus replay test (features `fuzzing` and `http`).
    #[cfg(all(feature = "fuzzing", feature = "http"))]
    pub use crate::mcp::http::fuzz::{HttpHeadReport, http_head};
}

/// The crate README's code, compiled as a doctest so its quick start cannot rot. (The
/// workspace README's code is tested by the workspace's root package: it lies outside this crate.)
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
