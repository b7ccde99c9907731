//! Characters: the sprites that present capabilities (CP-2-3, CP-2-26).

use schemars::JsonSchema;
use serde::Serialize;

/// A character (sprite) and the capability ids it supports (CP-2-3, CP-2-26).
///
/// Serialized as `characters.list` lists it: `{"id", "name", "capabilities": [id, …]}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CharacterSpec {
    /// Stable id, `[a-z][a-z0-9_]*(\.[a-z0-9_]+)*`.
    pub id: String,
    /// Display name.
    pub name: String,
    /// Ids of the capabilities this character presents.
    pub capabilities: Vec<String>,
}

impl CharacterSpec {
    /// A character supporting nothing yet.
    pub fn new(id: impl Into<String>, name: impl Into<String>) -> Self {
        Self { id: id.into(), name: name.into(), capabilities: Vec::new() }
    }
    /// Adds supported capability ids.
    pub fn supports<S: Into<String>>(mut self, ids: impl IntoIterator<Item = S>) -> Self {
        self.capabilities.extend(ids.into_iter().map(Into::into));
        self
    }
    /// Whether this character supports capability `id`.
    pub fn supports_capability(&self, id: &str) -> bool {
        self.capabilities.iter().any(|c| c == id)
    }
}
