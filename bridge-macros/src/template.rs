//! The `summary = "…"` template: literal text with `{field.path[:spec]}` placeholders and
//! `{{` / `}}` escapes, checked against the struct's fields at compile time.

/// One piece of a parsed template.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Piece {
    /// Literal text (escapes already resolved).
    Text(String),
    /// `{a.b:spec}`: a field path and an optional format spec.
    Hole { path: Vec<String>, spec: Option<String>, source: String },
}

/// Parses a template; `Err` is a readable reason.
pub(crate) fn parse(template: &str) -> Result<Vec<Piece>, String> {
    let mut pieces = Vec::new();
    let mut text = String::new();
    let mut chars = template.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '{' if chars.peek() == Some(&'{') => {
                chars.next();
                text.push('{');
            }
            '}' if chars.peek() == Some(&'}') => {
                chars.next();
                text.push('}');
            }
            '}' => return Err("unmatched `}` in summary: write `}}` for a literal brace".to_owned()),
            '{' => {
                let mut inner = String::new();
                loop {
                    match chars.next() {
                        Some('}') => break,
                        Some('{') | None => {
                            return Err("unclosed `{` in summary: write `{{` for a literal brace".to_owned());
                        }
                        Some(c) => inner.push(c),
                    }
                }
                if !text.is_empty() {
                    pieces.push(Piece::Text(std::mem::take(&mut text)));
                }
                pieces.push(hole(&inner)?);
            }
            c => text.push(c),
        }
    }
    if !text.is_empty() {
        pieces.push(Piece::Text(text));
    }
    Ok(pieces)
}

fn hole(inner: &str) -> Result<Piece, String> {
    let (path, spec) = match inner.split_once(':') {
        Some((p, s)) => (p.trim(), Some(s.to_owned())),
        None => (inner.trim(), None),
    };
    if path.is_empty() {
        return Err("empty `{}` in summary: name a field, e.g. `{order_no}`".to_owned());
    }
    let segments: Vec<String> = path.split('.').map(|s| s.trim().to_owned()).collect();
    for seg in &segments {
        let ok = !seg.is_empty()
            && seg.chars().all(|c| c.is_alphanumeric() || c == '_')
            && (seg.chars().all(|c| c.is_ascii_digit()) || !seg.starts_with(|c: char| c.is_ascii_digit()));
        if !ok {
            return Err(format!("`{{{inner}}}` in summary is not a field path like `{{form.recipient}}`"));
        }
    }
    if segments[0].chars().all(|c| c.is_ascii_digit()) {
        return Err(format!(
            "`{{{inner}}}` in summary: placeholders name fields (positional arguments are not supported)"
        ));
    }
    Ok(Piece::Hole { path: segments, spec, source: format!("{{{inner}}}") })
}

/// The `format!` string for `pieces`: text re-escaped, each hole as `{}` / `{:spec}`.
pub(crate) fn format_string(pieces: &[Piece]) -> String {
    let mut out = String::new();
    for piece in pieces {
        match piece {
            Piece::Text(t) => out.push_str(&t.replace('{', "{{").replace('}', "}}")),
            Piece::Hole { spec: None, .. } => out.push_str("{}"),
            Piece::Hole { spec: Some(s), .. } => {
                out.push_str("{:");
                out.push_str(s);
                out.push('}');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_holes_and_escapes() {
        let p = parse("Order {order_no}; {{x}} {form.recipient} {amount:.2}").unwrap();
        assert_eq!(format_string(&p), "Order {}; {{x}} {} {:.2}");
        assert_eq!(p[1], Piece::Hole { path: vec!["order_no".into()], spec: None, source: "{order_no}".into() });
        assert!(parse("a } b").is_err());
        assert!(parse("a { b").is_err());
        assert!(parse("{}").is_err());
        assert!(parse("{0}").is_err());
        assert!(parse("{a b}").is_err());
    }
}
