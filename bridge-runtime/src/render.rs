//! Building blocks from app values: the traits and helpers the generated `render` uses, also
//! usable by hand. Every helper returns an already-redacted [`Block`] (GB-4.4, GB-4.5).

use crate::model::ActionError;
use crate::model::{Block, FieldError, FieldItem, Severity};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

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

// -------------------------------------------------------------------------------------------
// Support for the code `#[derive(BridgeFields)]` and `#[bridge_actions]` generate. Not API.

/// An action's return value as its ToolResult `result`. A value serde cannot encode (a map with
/// non-string keys, a failing `Serialize` impl) is an `action_not_available` error saying the
/// action ran, never a silent `null` that its `outputSchema` does not allow (GB-12.3-4).
#[doc(hidden)]
pub fn result_value<T: Serialize + ?Sized>(value: &T) -> Result<Value, ActionError> {
    serde_json::to_value(value).map_err(|e| {
        tracing::error!(error = %e, "an action's result could not be encoded as JSON");
        ActionError::not_available(format!(
            "The action ran, but its result could not be encoded as JSON ({e}); re-read app://windows to see its effect"
        ))
    })
}

/// An action's error type converted (`Result<T, E>` with `E: Into<ActionError>`).
#[doc(hidden)]
pub fn action_error<E: Into<ActionError>>(err: E) -> ActionError {
    err.into()
}

/// A `title = method` result: `String`, `&str`, … .
#[doc(hidden)]
pub fn title_text(title: impl Into<String>) -> String {
    title.into()
}

/// What a `summary = method` may return: `String`, `&str`, or `Option` of either (`None` = no
/// summary).
#[doc(hidden)]
pub trait SummaryText {
    /// The summary, if any.
    fn summary_text(self) -> Option<String>;
}
impl SummaryText for String {
    fn summary_text(self) -> Option<String> {
        Some(self)
    }
}
impl SummaryText for &str {
    fn summary_text(self) -> Option<String> {
        Some(self.to_owned())
    }
}
impl<T: SummaryText> SummaryText for Option<T> {
    fn summary_text(self) -> Option<String> {
        self.and_then(SummaryText::summary_text)
    }
}

/// `WindowMeta::type_name` of a generic window type: `std::any::type_name` with every path
/// shortened to its last segment (`app::Editor<app::Doc>` → `Editor<Doc>`), so each
/// instantiation has its own name in the catalog.
#[doc(hidden)]
pub fn window_type_name<W: ?Sized>() -> String {
    let full = std::any::type_name::<W>();
    let mut out = String::with_capacity(full.len());
    let mut path = String::new();
    let flush = |path: &mut String, out: &mut String| {
        out.push_str(path.rsplit("::").next().unwrap_or(path));
        path.clear();
    };
    for c in full.chars() {
        if c.is_alphanumeric() || c == '_' || c == ':' {
            path.push(c);
        } else {
            flush(&mut path, &mut out);
            out.push(c);
        }
    }
    flush(&mut path, &mut out);
    out
}

/// Whether `key` is one of `keys` (usable in `const` assertions).
#[doc(hidden)]
pub const fn is_sensitive_key(keys: &[&str], key: &str) -> bool {
    let mut i = 0;
    while i < keys.len() {
        let (a, b) = (keys[i].as_bytes(), key.as_bytes());
        if a.len() == b.len() {
            let mut j = 0;
            while j < a.len() && a[j] == b[j] {
                j += 1;
            }
            if j == a.len() {
                return true;
            }
        }
        i += 1;
    }
    false
}

/// `FieldSet::set_field` for one field: deserializes `value` into `slot`. The error names the
/// field by `label`; for a sensitive field it leaves out serde's message, which may quote the
/// value.
#[doc(hidden)]
pub fn set_value<T: DeserializeOwned>(slot: &mut T, value: Value, label: &str, sensitive: bool) -> Result<(), String> {
    match serde_json::from_value(value) {
        Ok(v) => {
            *slot = v;
            Ok(())
        }
        Err(_) if sensitive => Err(format!("invalid value for '{label}'")),
        Err(e) => Err(format!("invalid value for '{label}': {e}")),
    }
}

/// Reads an action's arguments one parameter at a time, so that every bad parameter is reported
/// by name (GB-7.3-1): a missing required one as "Required", an unknown one as "Unknown
/// parameter", a wrong value with serde's reason.
#[doc(hidden)]
#[derive(Debug)]
pub struct ParamReader {
    args: Map<String, Value>,
    errors: Vec<FieldError>,
}

#[doc(hidden)]
impl ParamReader {
    /// Starts reading `args` (the tool arguments without `expectedVersion`).
    pub fn new(args: Map<String, Value>) -> Self {
        Self { args, errors: Vec::new() }
    }

    /// Takes parameter `name`. A missing parameter reads as JSON `null`, so `Option<T>` is
    /// optional and anything else is "Required". `None` means an error was recorded.
    pub fn take<T: DeserializeOwned>(&mut self, name: &str) -> Option<T> {
        match self.args.remove(name) {
            Some(v) => match serde_json::from_value(v) {
                Ok(t) => Some(t),
                Err(e) => {
                    self.errors.push(FieldError::new(name, e.to_string()));
                    None
                }
            },
            None => match serde_json::from_value(Value::Null) {
                Ok(t) => Some(t),
                Err(_) => {
                    self.errors.push(FieldError::new(name, "Required"));
                    None
                }
            },
        }
    }

    /// Takes parameter `name` declared `#[serde(default)]`: a missing parameter is
    /// `T::default()`, a present one (even `null`) is deserialized. `None` means an error was
    /// recorded.
    pub fn take_or_default<T: DeserializeOwned + Default>(&mut self, name: &str) -> Option<T> {
        if self.args.contains_key(name) { self.take(name) } else { Some(T::default()) }
    }

    /// `Ok` when every parameter was read and no unknown one was given; otherwise a
    /// `validation_failed` error listing each problem.
    pub fn finish(mut self) -> Result<(), ActionError> {
        for unknown in self.args.keys() {
            self.errors.push(FieldError::new(unknown.clone(), "Unknown parameter"));
        }
        if self.errors.is_empty() { Ok(()) } else { Err(ActionError::fields(self.errors)) }
    }

    /// The whole argument object as one `#[bridge(args)]` struct.
    pub fn whole<T: DeserializeOwned>(args: Map<String, Value>) -> Result<T, ActionError> {
        serde_json::from_value(Value::Object(args)).map_err(ActionError::from_deserialize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Doc;
    struct Editor<T>(T);

    #[test]
    fn window_type_names_drop_paths() {
        assert_eq!(window_type_name::<Editor<Doc>>(), "Editor<Doc>");
        assert_eq!(window_type_name::<Editor<Vec<String>>>(), "Editor<Vec<String>>");
        assert_eq!(window_type_name::<Editor<(u8, [i64; 2])>>(), "Editor<(u8, [i64; 2])>");
    }

    #[test]
    fn take_or_default_reads_missing_as_default() {
        let mut args = Map::new();
        let _ = args.insert("n".into(), Value::from(3));
        let mut r = ParamReader::new(args);
        assert_eq!(r.take_or_default::<u32>("n"), Some(3));
        assert_eq!(r.take_or_default::<u32>("m"), Some(0));
        assert_eq!(r.finish(), Ok(()));
    }
}
