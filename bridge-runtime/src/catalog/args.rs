//! The `#[bridge(args)]` contract: one parameter whose struct is the whole argument object.

/// A struct that can be the whole argument object of an action or capability:
/// `#[bridge(args)] p: P` reads the tool's arguments (or a request's params) as one `P`.
///
/// Shape: a struct with named fields, each field one top-level property of the `inputSchema`
/// (whose root must be `type: object`, MCP `Tool.inputSchema`, CP-2-15). Implement it with
/// `#[derive(BridgeArgs)]`, next to `Deserialize` and `JsonSchema`; the derive rejects enums,
/// tuple structs and unit structs, whose schema is not an object with properties. A marker
/// only: `#[bridge_actions]` requires it of the `#[bridge(args)]` type, so an enum or other
/// non-object type is a compile error at that type rather than a tool that can never succeed.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be the whole argument object: `#[bridge(args)]` takes a struct with named \
               fields and `#[derive(BridgeArgs)]`",
    label = "take `{Self}` as one named parameter instead, e.g. `value: {Self}` without #[bridge(args)]"
)]
pub trait BridgeArgs {}

/// Compile-time check the generated code runs on the `#[bridge(args)]` type. Not API: reachable
/// only through `bridge_runtime::__private`.
pub fn require_args<T: BridgeArgs + ?Sized>() {}
