//! Support for the code `#[bridge_window]` and `#[derive(BridgeFields)]` generate: titles,
//! summaries, generic window type names, the sensitive-key check and setting one field. Not
//! API: reachable only through `bridge_runtime::__private`.

use serde::de::DeserializeOwned;
use serde_json::Value;

/// A `title = method` result: `String`, `&str`, … .
pub fn title_text(title: impl Into<String>) -> String {
    title.into()
}

/// What a `summary = method` may return: `String`, `&str`, or `Option` of either (`None` = no
/// summary).
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
}
