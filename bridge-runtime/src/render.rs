//! Building blocks from app values: the traits and helpers the generated `render` uses, also
//! usable by hand. Every helper returns an already-redacted [`Block`] (GB-4.4, GB-4.5).

use crate::model::{Block, FieldItem, Severity};
use serde::Serialize;
use serde_json::Value;

pub(crate) mod support;

/// A struct whose fields become the items of a `fields` block (`#[derive(BridgeFields)]`).
///
/// Field attributes of the derive: `#[bridge(label = "…")]` (default: the field name
/// humanized), `#[bridge(sensitive)]` (the value is never read; the item is
/// `{"value":"••••••","sensitive":true}`), `#[bridge(skip)]`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a `fields` block: it does not implement `FieldSet`",
    label = "a `fields` block is a struct of your own with #[derive(BridgeFields)], one item per field"
)]
pub trait FieldSet {
    /// The keys (Rust names) of the sensitive items. `#[bridge_window]` checks at compile time
    /// that a summary placeholder such as `{form.password}` names none of them (GB-4.5-2).
    const SENSITIVE_KEYS: &'static [&'static str] = &[];

    /// `(key, label, sensitive)` for every item, in declaration order.
    fn field_specs() -> Vec<FieldSpec>
    where
        Self: Sized;

    /// The items, sensitive ones redacted.
    fn field_items(&self) -> Vec<FieldItem>;

    /// Sets the field whose key (Rust name) or label equals `name` (case-insensitive) from a JSON
    /// value. `Err` carries a readable reason: unknown field, or a value of the wrong type.
    fn set_field(&mut self, name: &str, value: Value) -> Result<(), String>;
}

/// One item declared by a [`FieldSet`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FieldSpec {
    /// The Rust field name.
    pub key: &'static str,
    /// The human-readable label.
    pub label: String,
    /// Whether the value is redacted.
    pub sensitive: bool,
}

/// A row type of a `table` block (`#[derive(BridgeRow)]`): its fields are the columns.
/// Field attributes: `#[bridge(label = "…")]`, `#[bridge(skip)]`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a table row: it does not implement `TableRow`",
    label = "a table's rows are structs of your own with #[derive(BridgeRow)] (fields = columns); \
             for plain values use #[bridge(list)]"
)]
pub trait TableRow {
    /// Column titles, left to right.
    fn columns() -> Vec<String>
    where
        Self: Sized;
    /// This row's cells, positional with [`TableRow::columns`].
    fn cells(&self) -> Vec<Value>;
}

/// A status line for a `notice` block (GB-4.4-10).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct Notice {
    /// Tone.
    pub severity: Severity,
    /// Text, e.g. "Recipient cannot be empty".
    pub text: String,
}

impl Notice {
    /// A notice with `severity` and `text`.
    pub fn new(severity: Severity, text: impl Into<String>) -> Self {
        Self { severity, text: text.into() }
    }
    /// `severity: info`.
    pub fn info(text: impl Into<String>) -> Self {
        Self::new(Severity::Info, text)
    }
    /// `severity: warn`.
    pub fn warn(text: impl Into<String>) -> Self {
        Self::new(Severity::Warn, text)
    }
    /// `severity: error`.
    pub fn error(text: impl Into<String>) -> Self {
        Self::new(Severity::Error, text)
    }
    /// `severity: success`.
    pub fn success(text: impl Into<String>) -> Self {
        Self::new(Severity::Success, text)
    }
}

/// An image, screenshot or chart for a `media` block (GB-4.4-11).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct Media {
    /// e.g. `image/png`.
    pub mime_type: String,
    /// `https://`, `file://` or `data:<mime>;base64,…`.
    pub url: String,
    /// What it shows, for a non-visual agent (GB-4.4-12).
    pub alt: Option<String>,
}

/// Values a `notice` field may hold: `Notice`, `Option<Notice>`, `Vec<Notice>` → 0..n blocks.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a `notice` block",
    label = "a `notice` field is `Notice`, `Option<Notice>` or `Vec<Notice>`; for text add `severity = \"…\"`"
)]
pub trait IntoNotices {
    /// The notices to render.
    fn notices(&self) -> Vec<(Severity, String)>;
}
impl IntoNotices for Notice {
    fn notices(&self) -> Vec<(Severity, String)> {
        vec![(self.severity, self.text.clone())]
    }
}
impl<T: IntoNotices> IntoNotices for Option<T> {
    fn notices(&self) -> Vec<(Severity, String)> {
        self.as_ref().map(IntoNotices::notices).unwrap_or_default()
    }
}
impl<T: IntoNotices> IntoNotices for Vec<T> {
    fn notices(&self) -> Vec<(Severity, String)> {
        self.iter().flat_map(IntoNotices::notices).collect()
    }
}

/// Texts for a `notice` field with a fixed `severity = "…"`: `String`, `&str`,
/// `Option<String>`, `Vec<String>` → 0..n blocks (empty strings render nothing).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a `notice` block with a fixed severity",
    label = "a `notice` field with `severity` is `String`, `Option<String>` or `Vec<String>`"
)]
pub trait IntoTexts {
    /// The texts to render.
    fn texts(&self) -> Vec<String>;
}
impl IntoTexts for String {
    fn texts(&self) -> Vec<String> {
        if self.is_empty() { vec![] } else { vec![self.clone()] }
    }
}
impl IntoTexts for &str {
    fn texts(&self) -> Vec<String> {
        self.to_string().texts()
    }
}
impl<T: IntoTexts> IntoTexts for Option<T> {
    fn texts(&self) -> Vec<String> {
        self.as_ref().map(IntoTexts::texts).unwrap_or_default()
    }
}
impl<T: IntoTexts> IntoTexts for Vec<T> {
    fn texts(&self) -> Vec<String> {
        self.iter().flat_map(IntoTexts::texts).collect()
    }
}

/// Values a `media` field may hold: `Media` or `Option<Media>`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a `media` block",
    label = "a `media` field is `Media` or `Option<Media>`"
)]
pub trait IntoMedia {
    /// The media to render, if any.
    fn media(&self) -> Option<&Media>;
}
impl IntoMedia for Media {
    fn media(&self) -> Option<&Media> {
        Some(self)
    }
}
impl IntoMedia for Option<Media> {
    fn media(&self) -> Option<&Media> {
        self.as_ref()
    }
}

/// `text` block from anything displayable (`Option<T>` renders `""` for `None` via [`TextValue`]).
pub fn text(id: &str, value: &impl TextValue) -> Block {
    Block::Text { id: Some(id.to_owned()), text: value.text_value() }
}

/// Values a `text` field may hold.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a `text` block: it does not implement `Display`",
    label = "a `text` field must implement `std::fmt::Display`"
)]
pub trait TextValue {
    /// The text.
    fn text_value(&self) -> String;
}
impl<T: std::fmt::Display> TextValue for T {
    fn text_value(&self) -> String {
        self.to_string()
    }
}

/// `fields` block from a [`FieldSet`]; with `all_sensitive` every item is redacted.
pub fn fields<F: FieldSet>(id: &str, value: &F, all_sensitive: bool) -> Block {
    if all_sensitive {
        return redacted_fields::<F>(id);
    }
    Block::Fields { id: Some(id.to_owned()), items: value.field_items() }
}

/// `fields` block with every item redacted, built from `F`'s labels alone: there is no value to
/// read, so nothing can leak (`#[bridge(fields, sensitive)]`, GB-4.5-2).
pub fn redacted_fields<F: FieldSet>(id: &str) -> Block {
    let items = F::field_specs().into_iter().map(|s| FieldItem::redacted(s.label)).collect();
    Block::Fields { id: Some(id.to_owned()), items }
}

/// `table` block from rows; at most `max_rows` rows go into state, with `offset`/`total` set
/// when truncated (GB-B-2, GB-9-2).
pub fn table<R: TableRow>(id: &str, rows: &[R], max_rows: Option<usize>) -> Block {
    let limit = max_rows.unwrap_or(usize::MAX);
    let truncated = rows.len() > limit;
    Block::Table {
        id: Some(id.to_owned()),
        columns: R::columns(),
        rows: rows.iter().take(limit).map(TableRow::cells).collect(),
        offset: truncated.then_some(0),
        total: truncated.then_some(rows.len() as u64),
    }
}

/// `list` block; truncation as for [`table`].
pub fn list<T: Serialize>(id: &str, items: &[T], ordered: bool, max_rows: Option<usize>) -> Block {
    let limit = max_rows.unwrap_or(usize::MAX);
    let truncated = items.len() > limit;
    Block::List {
        id: Some(id.to_owned()),
        items: items.iter().take(limit).map(to_value).collect(),
        ordered: ordered.then_some(true),
        offset: truncated.then_some(0),
        total: truncated.then_some(items.len() as u64),
    }
}

/// `notice` blocks (0..n); ids are `id`, `id-2`, `id-3`, … so they stay unique.
pub fn notices(id: &str, value: &impl IntoNotices) -> Vec<Block> {
    numbered(id, value.notices())
}

/// `notice` blocks of a fixed severity from texts.
pub fn notice_texts(id: &str, severity: Severity, value: &impl IntoTexts) -> Vec<Block> {
    numbered(id, value.texts().into_iter().map(|t| (severity, t)).collect())
}

fn numbered(id: &str, items: Vec<(Severity, String)>) -> Vec<Block> {
    items
        .into_iter()
        .enumerate()
        .map(|(i, (severity, text))| Block::Notice {
            id: Some(if i == 0 { id.to_owned() } else { format!("{id}-{}", i + 1) }),
            severity,
            text,
        })
        .collect()
}

/// `media` block (0..1).
pub fn media(id: &str, value: &impl IntoMedia) -> Option<Block> {
    value.media().map(|m| Block::Media {
        id: Some(id.to_owned()),
        mime_type: m.mime_type.clone(),
        url: m.url.clone(),
        alt: m.alt.clone(),
    })
}

/// `custom` block from any `Serialize` (a [`crate::Secret`] inside stays redacted).
pub fn custom<T: Serialize + ?Sized>(id: &str, value: &T) -> Block {
    Block::Custom { id: Some(id.to_owned()), payload: to_value(value) }
}

/// Serializes for the wire; a value that cannot be serialized becomes `null`, never a panic.
pub fn to_value<T: Serialize + ?Sized>(value: &T) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}
