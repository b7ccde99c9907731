//! Presentation styles and the capabilities they apply to (CP-2-6, CP-2-20).

use schemars::JsonSchema;
use serde::Serialize;

/// A presentation style and the capabilities it applies to (CP-2-6, CP-2-20). A style changes
/// appearance only; it never overrides a `tone` parameter (and vice versa).
///
/// Serialized as `styles.list` lists it: `{"id", "description", "capabilities", "fallback"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StyleSpec {
    /// Stable id.
    pub id: String,
    /// Human-readable description.
    pub description: String,
    /// Capability ids the style applies to.
    pub capabilities: Vec<String>,
    /// A style to use instead when this one does not apply and the caller allowed fallback
    /// (`fallbackReason: "style_unsupported"`, CP-2-29); `null` if none.
    pub fallback: Option<String>,
}

impl StyleSpec {
    /// A style applying to nothing yet.
    pub fn new(id: impl Into<String>, description: impl Into<String>) -> Self {
        Self { id: id.into(), description: description.into(), capabilities: Vec::new(), fallback: None }
    }
    /// Adds capability ids the style applies to.
    pub fn applies_to<S: Into<String>>(mut self, ids: impl IntoIterator<Item = S>) -> Self {
        self.capabilities.extend(ids.into_iter().map(Into::into));
        self
    }
    /// Declares the fallback style.
    pub fn fallback(mut self, style: impl Into<String>) -> Self {
        self.fallback = Some(style.into());
        self
    }
    /// Whether the style applies to capability `id`.
    pub fn applies(&self, id: &str) -> bool {
        self.capabilities.iter().any(|c| c == id)
    }
}
