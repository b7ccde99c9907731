//! Attribute and derive macros for bridge; use them through `bridge_runtime` (which re-exports
//! them), never directly.
//!
//! Stages, one per module (after thiserror's `impl/`): `attr` parses attributes, `ast`
//! builds the internal representation borrowing the author's tokens, `valid` checks the rules,
//! `expand` generates code, or `fallback` stub impls next to the errors. Every error is
//! collected in a `ctxt::Ctxt` and reported at once, at the author's tokens; nothing panics.
//!
//! The attribute syntax is documented on each macro below (also shown on `bridge_runtime`'s
//! re-exports).

mod ast;
mod attr;
mod ctxt;
mod expand;
mod fallback;
mod strip;
mod template;
mod util;
mod valid;

use proc_macro::TokenStream;
use syn::{DeriveInput, parse_macro_input};

/// Turns a struct into a window type: `impl DescribeWindow` (`window_meta`, what the catalog
/// reads) and `impl BridgeWindow` (`render`).
///
/// ```rust,ignore
/// #[bridge_window(title = "Order Editor", summary = "Editing order {order_no} for {form.recipient}")]
/// struct OrderEditor {
///     #[bridge(fields, id = "order", label = "Order")] form: OrderForm,      // FieldSet
///     #[bridge(table, max_rows = 50)]                  products: Vec<Product>, // Row: TableRow
///     #[bridge(list, ordered)]                         steps: Vec<String>,    // T: Serialize
///     #[bridge(notice)]                                status: Vec<Notice>,   // Notice / Option / Vec
///     #[bridge(notice, severity = "warn")]             warning: Option<String>,
///     #[bridge(text)]                                  note: String,          // Display
///     #[bridge(media)]                                 preview: Option<Media>,
///     #[bridge(custom)]                                chart: Chart,          // Serialize
///     #[bridge(skip)]                                  order_no: u32,
/// }
/// ```
///
/// Arguments:
/// - `title = "…"` (required, non-empty) or `title = method` (`fn(&self) -> impl Into<String>`;
///   the catalog then shows the type name humanized).
/// - `summary = "…"` (optional): a template; `{field}` / `{field.nested}` / `{field:spec}` are
///   `format!`-ed, `{{`/`}}` are literal braces. Naming a missing field, a `sensitive` block or a
///   sensitive item of a `fields` block is a compile error. Or `summary = method`
///   (`fn(&self)` returning `String`, `&str` or an `Option` of either).
/// - `shared_state` (optional flag): the window's `title`, `summary`, blocks or action
///   availability read state outside the window value itself (an `Arc<Mutex<…>>` shared with
///   other windows or threads, a clock, a file). Such a window is re-rendered after every
///   operation; any other window is re-rendered only after an operation that can change it (its
///   own actions, `cx.update` of it, the host's `Ui::edit` of it), so its `version` stays exact
///   at a cost that follows the change (issue #10). Debug builds check the contract.
/// - `undo` (optional flag): the window's value is copied (`Clone`, required) before each agent
///   tool call on it, so the app can take the agent's change back (`Ui::undo`). A compile
///   error with `shared_state`: restoring the struct would not restore the state it reads.
/// - `user_only` (optional flag): every action of the window is the user's alone (an approval
///   dialog): agents see the window, in `operableWindowIds` too, with no tools, and learn from
///   its summary what it waits for ("Waiting for the user to confirm"). `OpenOptions::user_only`
///   makes the same choice when a window opens.
/// - `crate = path` (optional): the runtime's path, default `::bridge_runtime`.
///
/// Every field carries `#[bridge(kind, …)]` with exactly one kind, or `#[bridge(skip)]`.
/// Options of every kind: `id = "…"` (stable block id, default the field name with `_` → `-`,
/// unique per window) and `label = "…"` (default the field name humanized). Kind options:
/// `fields`: `sensitive` (every item redacted; the value is never read); `table`, `list`:
/// `max_rows = N`; `list`: `ordered`; `notice`: `severity = "info"|"warn"|"error"|"success"` for
/// `String`/`Option<String>`/`Vec<String>` fields. Blocks render in declaration order; a
/// `notice` field renders 0..n blocks (`id`, `id-2`, …), a `media` field 0..1. A `table`'s rows
/// and a `fields` block are structs of the app's own (`BridgeRow`, `BridgeFields`): a std type
/// such as `Vec<String>` or `HashMap<…>` there is a compile error (use `list`, `text`, `custom`).
///
/// The bridge owns a window while it is open, so a window type is `'static`: a lifetime
/// parameter is a compile error (own the data: `String`, `Vec<T>`, `Arc<T>`). Type parameters
/// are fine (`struct Editor<T>`): each instantiation is its own window type, named
/// `Editor<Doc>` in the catalog (`WindowMeta::type_name`), and the impl infers the bounds its
/// blocks need of a generic field (`T: Serialize` for `custom`, …) plus `T: Send + 'static`.
/// A summary template naming a generic field needs the author's own bound (`T: Display`).
#[proc_macro_attribute]
pub fn bridge_window(args: TokenStream, input: TokenStream) -> TokenStream {
    expand::bridge_window(args.into(), input.into()).into()
}

/// Turns the `#[bridge_action]` methods of an inherent `impl` block into an action set:
/// `impl DescribeActions` (the specs) and `impl BridgeActions`. On a window type the actions are its tools `{winId}__{action}`; on
/// the app type (`Bridge::builder(..).app(app)`) they are `app__{action}`. Other methods stay
/// as they are; `#[bridge_actions] impl T {}` declares no actions. Optional `crate = path`.
///
/// ```rust,ignore
/// #[bridge_actions]
/// impl OrderEditor {
///     /// Edit one field of the order form.           <- the tool description
///     #[bridge_action(title = "Edit field", idempotent, available = editable)]
///     fn edit_field(
///         &mut self,
///         /// The field's label or key.                <- the parameter's description
///         field: String,
///         #[bridge(description = "The new value")] value: String,
///         note: Option<String>,                        // optional parameter
///         cx: &mut ActionContext,                      // not a parameter
///     ) -> Result<(), ActionError> { todo!() }
///
///     /// Add a product line.
///     #[bridge_action(name = "add-line", destructive)]
///     fn add_line(&mut self, #[bridge(args)] line: NewLine)  // NewLine: #[derive(BridgeArgs)]
///         -> Result<Totals, ActionError> { todo!() }
///
///     fn editable(&self) -> bool { todo!() }
/// }
/// ```
///
/// `#[bridge_action(…)]` keys: `name = "…"` (default the method name; `[A-Za-z0-9_-]{1,48}`),
/// `title = "…"`, `description = "…"` (default the doc comment; one of them is required),
/// flags `read_only`, `destructive` (not both), `idempotent`, `open_world`,
/// `available = method` (`fn(&self) -> bool`; the action is hidden while it returns false),
/// and `user_only`: the user's alone (an approval, "Confirm order"): never listed as a tool, an
/// agent calling it by name gets `action_not_available`, the app's user path
/// (`Ui::call_tool_as(Actor::User, …)`) runs it; the hint flags, which describe tools, are a
/// compile error next to it.
///
/// The method takes `&self` or `&mut self`, is not `async`, not generic. Each other parameter
/// is a JSON property of the same name (owned type, `DeserializeOwned + JsonSchema`; `Option<T>`
/// = not required, and an explicit `null` counts as absent); `expectedVersion`/`expected_version`
/// are reserved (GB-5.5). Every schema goes through the runtime's schema pipeline
/// (`bridge_runtime::catalog::schema`), so any `JsonSchema` type works in every major MCP
/// client; the return type's schema describes what it serializes to. At most one
/// `&mut ActionContext` parameter. Or one `#[bridge(args)] p: P` parameter whose struct `P` is
/// the whole argument object (`#[derive(Deserialize, JsonSchema, BridgeArgs)]`; an enum or other
/// non-object type is a compile error at `P`: take it as one named parameter instead).
///
/// Parameter attributes, the same here and in companion mode: a description (`///` or
/// `#[bridge(description = "…")]`); `#[schemars(…)]`, forwarded to the property's schema
/// (`length(min = 1, max = 20)`, `range(…)`, `regex(…)`, …; `rename`/`default`/`skip`/`flatten`
/// are errors, as they would change the schema alone); `#[serde(rename = "…")]`, the JSON name
/// (in the schema, where the argument is read, in `updatable`); `#[serde(default)]`, an optional
/// property whose absence reads as `Default::default()`; `#[bridge(sensitive)]`, a secret the
/// journal masks as the snapshot masks sensitive fields (the property's schema says
/// `"writeOnly": true`, as a `Secret<…>` parameter's does by itself). Other serde keys are an
/// error: take a `#[bridge(args)]` struct, where serde applies in full. On the
/// `#[bridge(args)]` parameter itself, `#[schemars]`, `#[serde]` and `sensitive` have no effect
/// and are errors.
///
/// On a generic impl (`impl<T> Editor<T>`), each parameter type naming `T` is given the bounds
/// it needs (`DeserializeOwned + JsonSchema`, …) in the generated impl's where clause, so an
/// instantiation lacking one is reported where it is registered. A lifetime on the impl's type
/// is a compile error: the bridge owns its windows and the app, so they are `'static`.
///
/// Return `()` (no `result`), `T` or `Result<T, E>` with `T: Serialize + JsonSchema` (the
/// ToolResult `result` and the tool's `outputSchema`) and `E: Into<ActionError>`.
///
/// # Desktop-companion capabilities: `#[bridge_actions(companion)]`
///
/// In companion mode each `#[bridge_action(…)]` method declares one capability (spec CP §2)
/// instead of a GUI action, and the block gets `impl BridgeCapabilities`; register it with
/// `Catalog::register_capabilities::<T>()` (all or none). Characters and styles are registered
/// separately (`CharacterSpec`, `StyleSpec`). GUI keys (`read_only`, …) are an error here, and
/// capability keys are an error in a GUI impl.
///
/// ```rust,ignore
/// #[bridge_actions(companion)]
/// impl Desk {
///     /// Shows a short text bubble.                   <- the description (required)
///     #[bridge_action(id = "notice.show", version = "0.1.0", kind = "notice", display_ms = 4000,
///                     timeout_ms(min = 1000, max = 60_000))]
///     fn notice_show(
///         /// The text.                                <- the property's description
///         #[schemars(length(min = 1, max = 200))] text: String,
///         tone: Option<Tone>,                          // optional: absent (or null) = None
///     ) {}                                             // no semantic check: body stays empty
///
///     /// Asks the user to pick one option.
///     #[bridge_action(id = "interaction.choose", version = "0.1.0", kind = "interaction",
///                     interaction = "choice", output = ChooseResult, check_result = selected_in_options)]
///     fn interaction_choose(#[bridge(args)] p: ChooseParams)  // #[derive(BridgeArgs)]
///         -> Result<(), ActionError> {
///         todo!("semantic check, e.g. unique option ids (CP-2-23)")
///     }
///
///     fn selected_in_options(p: &ChooseParams, r: &ChooseResult) -> Result<(), ActionError> { todo!() }
/// }
/// ```
///
/// Keys, one builder call each (`CapabilitySpec::new(id, kind)….build()`):
/// - `id = "…"` (required): `[a-z][a-z0-9_]*(\.[a-z0-9_]+)+`, ≤ 128 bytes; extensions read
///   `vendor.<reverse-domain>.<name>` with ≥ 2 domain labels (CP-2-27). Unique per impl.
/// - `version = "…"` (required): a semantic version, e.g. `"0.1.0"`.
/// - `description = "…"` or the doc comment (one is required).
/// - `kind = "animation"|"notice"|"progress"|"interaction"` (required, CP-2-17).
/// - `interaction = "none"|"choice"|"text"`: required (`choice`/`text`) for kind
///   `interaction`, only `none` otherwise (CP-2-18).
/// - `completion = "displayed"|"animation_end"|"user_response"|"caller_completes"`; default per
///   kind (animation → `animation_end`, notice → `displayed`, progress → `caller_completes`,
///   interaction → `user_response`); `user_response` iff kind `interaction`.
/// - `display_ms = N` (≥ 1; only with completion `displayed`, default 5000).
/// - `timeout_ms(min = N, max = N)`: both, `1 ≤ min ≤ max ≤ 86_400_000` (default 1 s … 10 min).
/// - `scopes = ["discover"|"animate"|"notify"|"interact", …]` (non-empty; default per kind,
///   OQ-CP-14).
/// - `updatable = ["param", …]`: parameters `requests.update` may change (CP-2-11); checked
///   against plain parameters here, against a `#[bridge(args)]` struct by `build()`.
/// - `cancelable` / `cancelable = true|false` (default `true`);
///   `cancel_behavior = "remove"|"finish_cycle"` (default `remove`).
/// - `queue = "queue"|"evictable"` (default `evictable` for notices, else `queue`; never
///   `evictable` for interactions, CP-4-11).
/// - `output = Type` (`JsonSchema`, a struct): the business result's `outputSchema`; default the
///   explicit empty schema (no business output, CP-2-16).
/// - `check_result = path` (needs `output`): `fn(&p1, …, &pn, &Output) -> Result<(), E>`, the
///   method's parameters by reference (deref coercion applies: `&str` for a `String`), then the
///   result; `Output: DeserializeOwned` (CP-2-23).
/// - `fallback(capability = "…", when = ["character_unsupported"|"reduced_motion", …],
///   map = path)`: the alternative presentation (CP-2-29); `map` (optional) is
///   `fn(&serde_json::Value) -> serde_json::Value` from this capability's params to the target's.
///
/// The method takes no `self`, is not `async`, `unsafe` or generic. Its parameters are the
/// `inputSchema` (strict: `additionalProperties: false`; none = the explicit empty schema):
/// plain parameters named like the JSON properties (owned, `JsonSchema`; docs and
/// `#[schemars(…)]` such as `length(min, max)`/`range(min, max)` go to the property,
/// `#[serde(rename = "…")]`/`#[serde(default)]` as in window mode; `Option<T>` = optional,
/// absent or `null`), or one `#[bridge(args)] p: P` whose struct is the object
/// (`#[derive(BridgeArgs)]`).
/// It returns `()` with an empty body (no semantic check) or `Result<(), E>`,
/// `E: Into<ActionError>`: the semantic params check that runs after schema validation (CP-2-25),
/// with its parameters `DeserializeOwned`. Each `FieldError { field, error }` becomes a
/// problem `{path: "/field", message: error}` (a `field` starting with `/` is kept as a JSON
/// pointer, e.g. `/options/1/id`); an error without fields is one problem at `""`.
#[proc_macro_attribute]
pub fn bridge_actions(args: TokenStream, input: TokenStream) -> TokenStream {
    expand::bridge_actions(args.into(), input.into()).into()
}

/// Marks a method of a `#[bridge_actions]` impl block as an action, or in a
/// `#[bridge_actions(companion)]` block as a capability (see [`macro@bridge_actions`]).
/// Outside such a block it is a compile error.
#[proc_macro_attribute]
pub fn bridge_action(args: TokenStream, input: TokenStream) -> TokenStream {
    expand::bridge_action(args.into(), input.into()).into()
}

/// `impl FieldSet` for a struct whose fields are the items of a `fields` block.
///
/// Field attributes: `#[bridge(label = "…")]` (default the field name humanized),
/// `#[bridge(sensitive)]` (the item is `{"value":"••••••","sensitive":true}` and the value is
/// never read), `#[bridge(skip)]`. Struct attribute: `#[bridge(crate = path)]`. Every shown
/// field is `Serialize` (its value) and `DeserializeOwned` (`FieldSet::set_field` sets it from
/// JSON by key or label, ASCII case-insensitive), so a shown field cannot be a reference (a
/// compile error at its type): `String`, not `&str`. Lifetime parameters are fine for owned
/// data such as `Cow<'a, str>`.
#[proc_macro_derive(BridgeFields, attributes(bridge))]
pub fn derive_fields(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    expand::derive_fields(&input).into()
}

/// `impl BridgeArgs` for a struct that is the whole argument object of an action or
/// capability: `#[bridge(args)] p: P` (see [`macro@bridge_actions`]).
///
/// ```rust,ignore
/// #[derive(Deserialize, JsonSchema, BridgeArgs)]
/// struct NewLine {
///     /// Product name.
///     name: String,
///     #[schemars(range(min = 1))] quantity: u32,
/// }
/// ```
///
/// The struct has named fields, each one top-level property of the `inputSchema` (whose root is
/// `type: object`); its own `#[serde(…)]` and `#[schemars(…)]` shape the object, and the derive
/// takes no field keys. Generics are supported. Struct attribute: `#[bridge(crate = path)]`.
/// An enum, tuple struct or unit struct is a compile error at the item: take such a type as one
/// named parameter instead (`shape: Shape`, without `#[bridge(args)]`). `#[bridge_actions]`
/// requires `BridgeArgs` of every `#[bridge(args)]` type, in window and companion mode.
#[proc_macro_derive(BridgeArgs, attributes(bridge))]
pub fn derive_args(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    expand::derive_args(&input).into()
}

/// `impl TableRow` for a struct whose fields are the columns of a `table` block.
///
/// Field attributes: `#[bridge(label = "…")]` (the column title, default the field name
/// humanized), `#[bridge(skip)]`. Struct attribute: `#[bridge(crate = path)]`. Every shown
/// field is `Serialize`; keep secrets in `Secret<T>`, which serializes as `"••••••"`. A row may
/// borrow (`struct Entry<'a> { name: &'a str }`, held as `Vec<Entry<'static>>` in a window).
#[proc_macro_derive(BridgeRow, attributes(bridge))]
pub fn derive_row(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    expand::derive_row(&input).into()
}
