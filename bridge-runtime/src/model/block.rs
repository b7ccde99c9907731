use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What every redacted value looks like on the wire (GB-4.5-2).
pub const REDACTED: &str = "••••••";

/// One semantic block of a window (GB-4.4, GB-B-1). Serialized with a `type` tag:
/// `text | fields | table | list | notice | media | custom`. Blocks never nest and carry no
/// operation (GB-4.4-1, GB-4.4-4).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum Block {
    /// `{"type":"text","id"?,"text"}` (GB-4.4-6).
    Text {
        /// The block's id for referencing, unique within its window (GB-4.4-3, GB-10.3-1);
        /// absent for anonymous blocks.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<String>,
        /// The text, plain (never interpreted as markup).
        text: String,
    },
    /// `{"type":"fields","id"?,"items":[{label,value,sensitive?}]}` (GB-4.4-7).
    Fields {
        /// The block's id for referencing, unique within its window (GB-4.4-3, GB-10.3-1);
        /// absent for anonymous blocks.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<String>,
        /// The label/value pairs, in display order; sensitive values already redacted.
        items: Vec<FieldItem>,
    },
    /// `{"type":"table","id"?,"columns":string[],"rows":any[][],"offset"?,"total"?}`;
    /// `total` is present whenever rows were truncated (GB-4.4-8, GB-B-2).
    Table {
        /// The block's id for referencing, unique within its window (GB-4.4-3, GB-10.3-1);
        /// absent for anonymous blocks.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<String>,
        /// Column headings, one per cell of every row.
        columns: Vec<String>,
        /// The rows shown, each with one JSON value per column.
        rows: Vec<Vec<Value>>,
        /// Index (0-based) of the first row shown within all rows; absent = 0.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        offset: Option<u64>,
        /// Number of rows in all, present whenever `rows` is a page or was truncated.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        total: Option<u64>,
    },
    /// `{"type":"list","id"?,"items":any[],"ordered"?,"offset"?,"total"?}` (GB-4.4-9, GB-B-2).
    List {
        /// The block's id for referencing, unique within its window (GB-4.4-3, GB-10.3-1);
        /// absent for anonymous blocks.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<String>,
        /// The items shown, as JSON values.
        items: Vec<Value>,
        /// Whether the order is meaningful (numbered); absent = unordered.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        ordered: Option<bool>,
        /// Index (0-based) of the first item shown within all items; absent = 0.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        offset: Option<u64>,
        /// Number of items in all, present whenever `items` is a page or was truncated.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        total: Option<u64>,
    },
    /// `{"type":"notice","id"?,"severity","text"}` (GB-4.4-10).
    Notice {
        /// The block's id for referencing, unique within its window (GB-4.4-3, GB-10.3-1);
        /// absent for anonymous blocks.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<String>,
        /// The notice's tone.
        severity: Severity,
        /// The message, plain text.
        text: String,
    },
    /// `{"type":"media","id"?,"mimeType","url","alt"?}`; `url` is `https://`, `file://` or
    /// `data:` (GB-4.4-11, GB-4.4-12).
    Media {
        /// The block's id for referencing, unique within its window (GB-4.4-3, GB-10.3-1);
        /// absent for anonymous blocks.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<String>,
        /// MIME type of the media, e.g. `image/png` (wire name `mimeType`).
        #[serde(rename = "mimeType")]
        mime_type: String,
        /// Where the media is: an `https://`, `file://` or `data:` URL.
        url: String,
        /// Text alternative for readers that cannot show the media.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        alt: Option<String>,
    },
    /// `{"type":"custom","id"?,"payload":any}`: the fallback (GB-4.4-13).
    Custom {
        /// The block's id for referencing, unique within its window (GB-4.4-3, GB-10.3-1);
        /// absent for anonymous blocks.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<String>,
        /// Any JSON the app chooses, redacted like the other blocks.
        payload: Value,
    },
}

impl Block {
    /// The block's `id`, if any.
    pub fn id(&self) -> Option<&str> {
        match self {
            Block::Text { id, .. }
            | Block::Fields { id, .. }
            | Block::Table { id, .. }
            | Block::List { id, .. }
            | Block::Notice { id, .. }
            | Block::Media { id, .. }
            | Block::Custom { id, .. } => id.as_deref(),
        }
    }
}

/// A `notice` block's tone (GB-4.4-10): exactly `info`, `warn`, `error` or `success`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// `info`: neutral information.
    Info,
    /// `warn`: something needs attention.
    Warn,
    /// `error`: something failed.
    Error,
    /// `success`: something completed well.
    Success,
}

/// One item of a `fields` block: `{label, value, sensitive?}` (GB-4.4-7).
///
/// The fields are private so that a sensitive item can only be built by
/// [`FieldItem::redacted`], which never sees the plaintext (GB-4.5-2).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FieldItem {
    label: String,
    value: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    sensitive: Option<bool>,
}

impl FieldItem {
    /// A plain item. `value` `""` or `null` means "not filled in".
    pub fn new(label: impl Into<String>, value: impl Into<Value>) -> Self {
        Self { label: label.into(), value: value.into(), sensitive: None }
    }

    /// A sensitive item: value `"••••••"`, `"sensitive": true` (GB-4.5-2). It takes no value,
    /// so there is nothing to leak.
    pub fn redacted(label: impl Into<String>) -> Self {
        Self { label: label.into(), value: Value::String(REDACTED.to_owned()), sensitive: Some(true) }
    }

    /// The label shown to the user.
    pub fn label(&self) -> &str {
        &self.label
    }

    /// The value as it appears on the wire (already redacted when sensitive).
    pub fn value(&self) -> &Value {
        &self.value
    }

    /// Whether the value was redacted.
    pub fn is_sensitive(&self) -> bool {
        self.sensitive == Some(true)
    }
}
