//! The one registry: every window type, its blocks and actions, and the app-level actions.
//!
//! `#[bridge_window]` and `#[bridge_actions]` generate the code that describes a type; the
//! [`Catalog`] collects those descriptions once, and every protocol adapter (MCP tools,
//! catalog export) reads from it. No adapter keeps a list of its own (CP-2).

mod action;
pub(crate) mod args;
mod capability;
pub(crate) mod decode;
mod describe;
pub(crate) mod rule_ids;
pub(crate) mod schema;
mod tool_name;
mod view;

pub use action::{ActionHints, ActionSpec};
pub use args::BridgeArgs;
#[cfg(feature = "companion")]
pub(crate) use capability::schema_problems;
pub(crate) use capability::validate_capability_id;
pub use capability::{
    BridgeCapabilities, CancelBehavior, CapabilityBuilder, CapabilityKind, CapabilityLimits, CapabilitySpec,
    CharacterSpec, Completion, Fallback, FallbackReason, FieldProblem, InteractionType, MAX_TIMEOUT_CAP_MS, ParamsMap,
    QueueMode, QueuePolicy, Scope, SpecError, StyleSpec, checks, empty_strict_object,
};
pub use describe::{DescribeActions, DescribeWindow};
pub use schema::{
    ArgumentLimits, Capped, DEFAULT_MAX_ARGUMENT_BYTES, DEFAULT_MAX_ARGUMENT_DEPTH, DEFAULT_MAX_ARGUMENT_KEYS,
    DEFAULT_MAX_REPORTED_PROBLEMS,
};
#[cfg(feature = "companion")]
pub(crate) use tool_name::claims_companion;
pub use tool_name::{APP_PREFIX, COMPANION_PREFIX, ToolName};
pub(crate) use tool_name::{WINDOW_TOOL_SHAPE, claimed, is_window_handle};
pub use view::{ViewCsp, ViewCspError, WindowView};

use serde::Serialize;
use std::any::TypeId;
use std::collections::HashMap;
use std::sync::Arc;

/// Which of the seven GB block kinds a block declaration renders to (GB-4.4-5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum BlockKind {
    /// `text`: one plain text.
    Text,
    /// `fields`: label/value pairs.
    Fields,
    /// `table`: columns and rows, pageable.
    Table,
    /// `list`: items, pageable.
    List,
    /// `notice`: a message with a severity.
    Notice,
    /// `media`: an image or other media by URL.
    Media,
    /// `custom`: any JSON payload.
    Custom,
}

impl BlockKind {
    /// Every kind, in declaration order.
    pub const ALL: [BlockKind; 7] = [
        BlockKind::Text,
        BlockKind::Fields,
        BlockKind::Table,
        BlockKind::List,
        BlockKind::Notice,
        BlockKind::Media,
        BlockKind::Custom,
    ];

    /// The wire name, e.g. `"fields"`: the block's `type` and the `#[bridge(…)]` key that
    /// declares it (the macros read the same list, `bridge_rules::BLOCK_KINDS`).
    pub fn as_str(self) -> &'static str {
        bridge_rules::BLOCK_KINDS[self as usize]
    }
}

/// One block declared by a `#[bridge_window]` field.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BlockSpec {
    /// Stable block id (GB-10.3-1); default derived from the field name.
    pub id: String,
    /// The GB block type.
    pub kind: BlockKind,
    /// Human-readable label (default: the field name humanized).
    pub label: String,
    /// For `table`/`list`: at most this many rows/items go into state (GB-9-2).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_rows: Option<usize>,
    /// Whether the block's values are redacted (GB-4.5-2).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub sensitive: bool,
}

/// What `#[bridge_window]` says about a window type: its default title and blocks.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WindowMeta {
    /// The Rust type's name, e.g. `OrderEditor`.
    pub type_name: String,
    /// The default window title.
    pub title: String,
    /// The blocks in declaration order.
    pub blocks: Vec<BlockSpec>,
}

/// A window type as the registry knows it: its meta plus its actions.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WindowSpec {
    /// The window type's name, description, blocks and flags (flattened on the wire).
    #[serde(flatten)]
    pub meta: WindowMeta,
    /// The actions of `#[bridge_actions] impl`, in declaration order.
    pub actions: Vec<Arc<ActionSpec>>,
    /// The type's own MCP Apps view (`#[bridge_window(view = "…")]`); `None` means the
    /// built-in view shows it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub view: Option<Arc<WindowView>>,
}

impl WindowSpec {
    /// The action named `name`, if this window type declares it.
    pub fn action(&self, name: &str) -> Option<&Arc<ActionSpec>> {
        self.actions.iter().find(|a| a.name == name)
    }
}

/// The app-level action set (`app__{action}` tools, OQ-GB-12).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AppSpec {
    /// The Rust type's name.
    pub type_name: String,
    /// The app-level actions.
    pub actions: Vec<Arc<ActionSpec>>,
}

impl AppSpec {
    /// The action named `name`, if declared.
    pub fn action(&self, name: &str) -> Option<&Arc<ActionSpec>> {
        self.actions.iter().find(|a| a.name == name)
    }
}

/// The registry of everything an app exposes. Built once by the GUI's bridge builder; window
/// types opened later are added on first use (their description comes from the same generated
/// code, [`DescribeWindow`] and [`DescribeActions`], never from a second list).
#[derive(Debug, Default)]
pub struct Catalog {
    app: Option<Arc<AppSpec>>,
    windows: Vec<Arc<WindowSpec>>,
    by_type: HashMap<TypeId, Arc<WindowSpec>>,
    /// Desktop-companion capabilities, in registration order (CP-2-15).
    capabilities: Vec<Arc<CapabilitySpec>>,
    /// Desktop-companion characters, in registration order (CP-2-3).
    characters: Vec<Arc<CharacterSpec>>,
    /// Desktop-companion styles, in registration order (CP-2-6).
    styles: Vec<Arc<StyleSpec>>,
    /// `catalogRevision`: bumps on every companion registration (CP-2-4, CP-7-1).
    companion_revision: u64,
}

/// The serializable view of a [`Catalog`] (what `to_json`/`to_yaml` write, and `catalog.json` /
/// `catalog.yaml` of [`export`](crate::export)).
///
/// Shape: `{"catalogVersion": "1", "app"?: {typeName, actions}, "windows": [{typeName, title,
/// blocks, actions}], "catalogRevision": int, "capabilities": [descriptor], "characters":
/// [{id, name, capabilities}], "styles": [{id, description, capabilities, fallback}]}`. The
/// companion keys are always present (empty arrays for a GUI-only app, CP-2-16); a descriptor
/// is exactly what `capabilities.describe` returns (CP-2-5).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CatalogDocument<'a> {
    /// Catalog format version.
    pub catalog_version: &'static str,
    /// The app-level actions, if the app declares any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub app: Option<&'a AppSpec>,
    /// Every registered window type, in registration order.
    pub windows: Vec<&'a WindowSpec>,
    /// `catalogRevision` of the companion registry (CP-2-4, CP-7-1).
    pub catalog_revision: u64,
    /// Companion capability descriptors, in registration order (CP-2-5, CP-2-15).
    pub capabilities: Vec<serde_json::Value>,
    /// Companion characters, in registration order (CP-2-3).
    pub characters: Vec<&'a CharacterSpec>,
    /// Companion styles, in registration order (CP-2-6).
    pub styles: Vec<&'a StyleSpec>,
}

impl Catalog {
    /// An empty catalog.
    pub fn new() -> Self {
        Self::default()
    }

    /// Registers the app-level action set.
    pub fn set_app<A: DescribeActions>(&mut self) -> Arc<AppSpec> {
        let spec = Arc::new(AppSpec {
            type_name: short_type_name::<A>(),
            actions: A::action_specs_for(false).into_iter().map(Arc::new).collect(),
        });
        self.app = Some(spec.clone());
        spec
    }

    /// Registers window type `W` (idempotent) and returns its spec.
    pub fn register<W: DescribeWindow + DescribeActions + 'static>(&mut self) -> Arc<WindowSpec> {
        if let Some(spec) = self.by_type.get(&TypeId::of::<W>()) {
            return spec.clone();
        }
        let spec = Arc::new(WindowSpec {
            meta: W::window_meta(),
            actions: W::action_specs()
                .into_iter()
                .map(|a| if W::user_only() { a.user_only(true) } else { a })
                .map(Arc::new)
                .collect(),
            view: W::window_view().map(Arc::new),
        });
        self.by_type.insert(TypeId::of::<W>(), spec.clone());
        self.windows.push(spec.clone());
        spec
    }

    /// Registers window type `W` (if it is not yet) and makes `view` its MCP Apps view,
    /// replacing the one `#[bridge_window(view = …)]` declared, if any (MA-6). Errors: a CSP
    /// entry that is not an `https://` origin ([`ViewCsp::check`]); the catalog is then
    /// unchanged.
    pub fn set_window_view<W: DescribeWindow + DescribeActions + 'static>(
        &mut self,
        view: WindowView,
    ) -> Result<Arc<WindowSpec>, ViewCspError> {
        view.csp.check()?;
        let old = self.register::<W>();
        let spec = Arc::new(WindowSpec { view: Some(Arc::new(view)), ..(*old).clone() });
        self.by_type.insert(TypeId::of::<W>(), spec.clone());
        for w in &mut self.windows {
            if Arc::ptr_eq(w, &old) {
                *w = spec.clone();
            }
        }
        Ok(spec)
    }

    /// The app-level spec, if the app declared actions.
    pub fn app(&self) -> Option<&Arc<AppSpec>> {
        self.app.as_ref()
    }

    /// Every registered window type, in registration order.
    pub fn windows(&self) -> &[Arc<WindowSpec>] {
        &self.windows
    }

    /// Registers a companion capability (CP-2-15). Errors: `SpecError::Duplicate` if the id is
    /// taken (the catalog is unchanged). Bumps `catalogRevision`.
    pub fn register_capability(&mut self, spec: CapabilitySpec) -> Result<Arc<CapabilitySpec>, SpecError> {
        if self.capability(spec.id()).is_some() {
            return Err(SpecError::Duplicate { what: "capability", id: spec.id().to_owned() });
        }
        let spec = Arc::new(spec);
        self.capabilities.push(spec.clone());
        self.companion_revision += 1;
        Ok(spec)
    }

    /// Registers a companion character (CP-2-3). Errors: bad or duplicate id, or a supported
    /// capability id that is not a valid capability id. Capabilities may be registered later.
    /// Bumps `catalogRevision`.
    pub fn register_character(&mut self, character: CharacterSpec) -> Result<Arc<CharacterSpec>, SpecError> {
        capability::validate_simple_id("character", &character.id)?;
        for id in &character.capabilities {
            capability::validate_capability_id(id)?;
        }
        if self.character(&character.id).is_some() {
            return Err(SpecError::Duplicate { what: "character", id: character.id });
        }
        let character = Arc::new(character);
        self.characters.push(character.clone());
        self.companion_revision += 1;
        Ok(character)
    }

    /// Registers a companion style (CP-2-6). Errors: bad or duplicate id. Bumps `catalogRevision`.
    pub fn register_style(&mut self, style: StyleSpec) -> Result<Arc<StyleSpec>, SpecError> {
        capability::validate_simple_id("style", &style.id)?;
        if let Some(fb) = &style.fallback {
            capability::validate_simple_id("style", fb)?;
        }
        if self.style(&style.id).is_some() {
            return Err(SpecError::Duplicate { what: "style", id: style.id });
        }
        let style = Arc::new(style);
        self.styles.push(style.clone());
        self.companion_revision += 1;
        Ok(style)
    }

    /// Every companion capability, in registration order.
    pub fn capabilities(&self) -> &[Arc<CapabilitySpec>] {
        &self.capabilities
    }

    /// The capability with id `id`.
    pub fn capability(&self, id: &str) -> Option<&Arc<CapabilitySpec>> {
        self.capabilities.iter().find(|c| c.id() == id)
    }

    /// Every companion character, in registration order.
    pub fn characters(&self) -> &[Arc<CharacterSpec>] {
        &self.characters
    }

    /// The character with id `id`.
    pub fn character(&self, id: &str) -> Option<&Arc<CharacterSpec>> {
        self.characters.iter().find(|c| c.id == id)
    }

    /// Every companion style, in registration order.
    pub fn styles(&self) -> &[Arc<StyleSpec>] {
        &self.styles
    }

    /// The style with id `id`.
    pub fn style(&self, id: &str) -> Option<&Arc<StyleSpec>> {
        self.styles.iter().find(|s| s.id == id)
    }

    /// `catalogRevision`: a counter that changes whenever a companion capability, character or
    /// style is registered (CP-2-4, CP-7-1, CP-7-3).
    pub fn catalog_revision(&self) -> u64 {
        self.companion_revision
    }

    /// Ids of the registered characters that support capability `id`, in registration order.
    pub fn characters_supporting(&self, id: &str) -> Vec<String> {
        self.characters.iter().filter(|c| c.supports_capability(id)).map(|c| c.id.clone()).collect()
    }

    /// The `capabilities.describe` descriptor of capability `id` (CP-2-5).
    pub fn capability_descriptor(&self, id: &str) -> Option<serde_json::Value> {
        self.capability(id).map(|c| c.descriptor(&self.characters_supporting(id)))
    }

    /// One page of the `capabilities.list` result (CP-2-4), the one implementation the engine and
    /// the build-time export ([`export`](crate::export)) share:
    /// `{"catalogRevision": int, "capabilities": [descriptor], "nextCursor": string|null}`.
    ///
    /// `visible` picks the capabilities the caller may see (its scopes hold every
    /// `requiredScopes`); `cursor` is a previous page's `nextCursor` (`None` = from the start);
    /// `limit` is the page size (`None` = all). Returns `None` for a malformed cursor or one
    /// issued under another `catalogRevision`.
    pub fn capabilities_page(
        &self,
        visible: impl Fn(&CapabilitySpec) -> bool,
        cursor: Option<&str>,
        limit: Option<usize>,
    ) -> Option<serde_json::Value> {
        let revision = self.companion_revision;
        let offset = match cursor {
            None => 0,
            Some(cursor) => {
                let (rev, offset) = cursor.split_once(':')?;
                (rev.parse::<u64>().ok()? == revision).then_some(())?;
                offset.parse::<usize>().ok()?
            }
        };
        let visible: Vec<&Arc<CapabilitySpec>> = self.capabilities.iter().filter(|c| visible(c)).collect();
        let limit = limit.unwrap_or(visible.len());
        let page: Vec<serde_json::Value> = visible
            .iter()
            .skip(offset)
            .take(limit)
            .map(|c| c.descriptor(&self.characters_supporting(c.id())))
            .collect();
        let end = offset + page.len();
        let next = (end < visible.len()).then(|| format!("{revision}:{end}"));
        Some(serde_json::json!({"catalogRevision": revision, "capabilities": page, "nextCursor": next}))
    }

    /// The serializable document.
    pub fn document(&self) -> CatalogDocument<'_> {
        CatalogDocument {
            catalog_version: "1",
            app: self.app.as_deref(),
            windows: self.windows.iter().map(|w| w.as_ref()).collect(),
            catalog_revision: self.companion_revision,
            capabilities: self.capabilities.iter().map(|c| c.descriptor(&self.characters_supporting(c.id()))).collect(),
            characters: self.characters.iter().map(|c| c.as_ref()).collect(),
            styles: self.styles.iter().map(|s| s.as_ref()).collect(),
        }
    }

    /// The catalog as pretty JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(&self.document()).expect("catalog serializes")
    }

    /// The catalog as YAML (feature `yaml`).
    #[cfg(feature = "yaml")]
    #[cfg_attr(docsrs, doc(cfg(feature = "yaml")))]
    pub fn to_yaml(&self) -> Result<String, serde_yaml::Error> {
        serde_yaml::to_string(&self.document())
    }
}

fn short_type_name<T>() -> String {
    let full = std::any::type_name::<T>();
    let base = full.split('<').next().unwrap_or(full);
    base.rsplit("::").next().unwrap_or(base).to_owned()
}

#[cfg(test)]
mod tests {
    use super::BlockKind;

    #[test]
    fn block_kinds_are_the_macros_list() {
        let wire: Vec<serde_json::Value> = BlockKind::ALL.iter().filter_map(|k| serde_json::to_value(k).ok()).collect();
        let names: Vec<&str> = BlockKind::ALL.iter().map(|k| k.as_str()).collect();
        assert_eq!(names, bridge_rules::BLOCK_KINDS);
        assert_eq!(wire, bridge_rules::BLOCK_KINDS.map(serde_json::Value::from));
    }
}
