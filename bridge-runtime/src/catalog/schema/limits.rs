//! Caps on one call's arguments, checked in one linear pass before the JSON-Schema validator
//! runs, so that no call costs more than the caps allow, whatever it carries.

use super::instance::{FieldErrors, MAX_REPORTED_PROBLEMS};
use crate::model::FieldError;
use crate::model::quote::clip;
use serde_json::{Map, Value};

/// The default of [`ArgumentLimits::max_bytes`]: 1 MiB.
pub const DEFAULT_MAX_ARGUMENT_BYTES: usize = 1 << 20;
/// The default of [`ArgumentLimits::max_keys`].
pub const DEFAULT_MAX_ARGUMENT_KEYS: usize = 10_000;
/// The default of [`ArgumentLimits::max_depth`].
pub const DEFAULT_MAX_ARGUMENT_DEPTH: usize = 64;
/// The default of [`ArgumentLimits::max_problems`].
pub const DEFAULT_MAX_REPORTED_PROBLEMS: usize = MAX_REPORTED_PROBLEMS;

/// Caps on one tool call's `arguments` (GB-7.3-1: a call over a cap is answered
/// `validation_failed` naming the parameters at fault). Set them on the
/// [`BridgeBuilder`](crate::gui::BridgeBuilder); the defaults keep the worst call cheap while
/// leaving room for an import action's data:
///
/// - [`max_bytes`](Self::max_bytes), 1 MiB: the arguments as compact JSON (string escapes not
///   counted). A pasted document or a few thousand table rows fit; the transports accept up to
///   16 MiB per message, which an app that imports large files can allow by raising this.
/// - [`max_keys`](Self::max_keys), 10,000: object keys at every level, the top-level
///   parameters included. The JSON-Schema validator's cost grows with the keys it meets
///   (above all with unknown ones, each a problem); 10,000 keep a call within milliseconds
///   while a table of several thousand records still passes.
/// - [`max_depth`](Self::max_depth), 64: levels of nested objects and arrays, the `arguments`
///   object counting as one: a parameter's value may nest 63 levels. Deeper than any
///   hand-written form needs and room for recursive parameters (a tree whose nodes hold their
///   children in an array takes two levels per node: 31 nodes deep); half the 128 levels a JSON
///   parser accepts, so the validator's and the action's recursion stays shallow. An app with
///   deeper trees raises it (up to 124, what the stdio transport reads).
/// - [`max_problems`](Self::max_problems), 20: problems listed in one `validation_failed`;
///   the rest are counted in its message. An agent fixes a few at a time; a 17 MB reply helps no
///   one.
///
/// [`ArgumentLimits::unlimited`] turns every cap off (for benchmarks and trusted callers).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ArgumentLimits {
    /// Size of the arguments as compact JSON, in bytes, escapes not counted.
    pub max_bytes: usize,
    /// Object keys at every level, the top-level parameters included.
    pub max_keys: usize,
    /// Levels of nested objects and arrays, the `arguments` object counting as one.
    pub max_depth: usize,
    /// Problems listed in one `validation_failed` error (at least 1); the rest are counted.
    pub max_problems: usize,
}

impl Default for ArgumentLimits {
    fn default() -> Self {
        Self {
            max_bytes: DEFAULT_MAX_ARGUMENT_BYTES,
            max_keys: DEFAULT_MAX_ARGUMENT_KEYS,
            max_depth: DEFAULT_MAX_ARGUMENT_DEPTH,
            max_problems: DEFAULT_MAX_REPORTED_PROBLEMS,
        }
    }
}

impl ArgumentLimits {
    /// No cap on size, keys or depth, and every problem listed.
    pub fn unlimited() -> Self {
        Self { max_bytes: usize::MAX, max_keys: usize::MAX, max_depth: usize::MAX, max_problems: usize::MAX }
    }

    /// Checks `args` against the size, key and depth caps in one pass over them, before any
    /// schema work. `declared` is the tool's `inputSchema` `properties`, when known: keys it does
    /// not declare are named first when there are too many keys. Empty when every cap holds.
    ///
    /// Otherwise the problems name, in this order: each parameter nested deeper than
    /// [`max_depth`](Self::max_depth); with too many keys, each undeclared parameter ("Unknown
    /// parameter"), then the declared parameters holding the most keys until the rest fit; with
    /// too many bytes, the largest parameters until the rest fit. At most
    /// [`max_problems`](Self::max_problems) are listed, the rest counted;
    /// [`capped_message`](Self::capped_message) says which caps were exceeded. Linear in the
    /// size of `args` (plus sorting the parameters by size when one has to be singled out).
    pub fn check(&self, args: &Map<String, Value>, declared: Option<&Map<String, Value>>) -> Capped {
        let mut params: Vec<Param<'_>> = Vec::with_capacity(args.len());
        // `{}` plus a comma between parameters.
        let mut bytes = 2 + args.len().saturating_sub(1);
        let mut keys = 0usize;
        for (key, value) in args {
            let mut m = Measure { keys: 1, bytes: key.len() + 3, too_deep: false };
            m.walk(value, 1, self.max_depth);
            keys += m.keys;
            bytes += m.bytes;
            params.push(Param { key, keys: m.keys, bytes: m.bytes, too_deep: m.too_deep });
        }
        let mut out = Capped { keys, bytes, ..Capped::default() };
        let too_deep = params.iter().any(|p| p.too_deep);
        let too_many_keys = keys > self.max_keys;
        let too_big = bytes > self.max_bytes;
        if !(too_deep || too_many_keys || too_big) {
            return out;
        }
        out.too_deep = too_deep;
        let mut problems = Problems { limit: self.max_problems.max(1), errors: FieldErrors::default() };
        for p in params.iter().filter(|p| p.too_deep) {
            problems.push(p.key, || format!("Nested deeper than {} levels, the most this app accepts", self.max_depth));
        }
        let mut named = vec![false; params.len()];
        if too_many_keys {
            let mut rest = keys;
            if let Some(declared) = declared {
                for (i, p) in params.iter().enumerate().filter(|(_, p)| !declared.contains_key(p.key)) {
                    named[i] = true;
                    rest -= p.keys;
                    problems.push(p.key, || "Unknown parameter".to_owned());
                }
            }
            out.keys_over = true;
            largest_first(
                &params,
                &mut named,
                rest,
                self.max_keys,
                |p| p.keys,
                |p| {
                    problems.push(p.key, || {
                        format!("Holds {} keys; the arguments may hold at most {} in all", p.keys, self.max_keys)
                    })
                },
            );
        }
        if too_big {
            out.bytes_over = true;
            let rest = bytes - params.iter().zip(&named).filter(|(_, n)| **n).map(|(p, _)| p.bytes).sum::<usize>();
            largest_first(
                &params,
                &mut named,
                rest,
                self.max_bytes,
                |p| p.bytes,
                |p| {
                    problems.push(p.key, || {
                        format!(
                            "Takes {} bytes; the arguments may take at most {} bytes in all",
                            p.bytes, self.max_bytes
                        )
                    })
                },
            );
        }
        if problems.errors.is_empty() {
            // The caps count the `arguments` object itself; no parameter alone is at fault.
            problems.push("", || "The arguments as a whole exceed this app's limits".to_owned());
        }
        out.problems = problems.errors;
        out
    }

    /// The message of a capped call's `validation_failed`: which caps were exceeded (with the
    /// caps and the measured values) and, when any were, how many problems were left out.
    pub fn capped_message(&self, capped: &Capped) -> String {
        let mut what: Vec<String> = Vec::new();
        if capped.keys_over {
            what.push(format!("{} keys where at most {} are accepted", capped.keys, self.max_keys));
        }
        if capped.bytes_over {
            what.push(format!("{} bytes where at most {} are accepted", capped.bytes, self.max_bytes));
        }
        if capped.too_deep {
            what.push(format!("nested deeper than {} levels", self.max_depth));
        }
        let omitted = capped.problems.omitted;
        let tail = if omitted > 0 { format!("; {}", self.left_out(omitted)) } else { String::new() };
        format!("The arguments exceed this app's limits ({}) and were not validated further{tail}", what.join(", "))
    }

    /// "N more problems left out (at most M are listed)".
    pub fn left_out(&self, omitted: usize) -> String {
        format!("{omitted} more problems left out (at most {} are listed)", self.max_problems.max(1))
    }
}

/// The outcome of [`ArgumentLimits::check`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Capped {
    /// The problems; empty when every cap holds.
    pub problems: FieldErrors,
    /// Object keys counted at every level.
    pub keys: usize,
    /// Size as compact JSON, escapes not counted.
    pub bytes: usize,
    /// Over [`ArgumentLimits::max_keys`].
    pub keys_over: bool,
    /// Over [`ArgumentLimits::max_bytes`].
    pub bytes_over: bool,
    /// Deeper than [`ArgumentLimits::max_depth`].
    pub too_deep: bool,
}

impl Capped {
    /// Whether every cap holds.
    pub fn is_within(&self) -> bool {
        self.problems.is_empty()
    }
}

struct Param<'a> {
    key: &'a str,
    keys: usize,
    bytes: usize,
    too_deep: bool,
}

struct Problems {
    limit: usize,
    errors: FieldErrors,
}

impl Problems {
    /// Lists a problem while there is room, counts it otherwise (the message is built only when
    /// listed).
    fn push(&mut self, field: &str, message: impl FnOnce() -> String) {
        if self.errors.fields.len() < self.limit {
            // A parameter's name is the peer's text: escaped and bounded.
            self.errors.fields.push(FieldError::new(clip(field), message()));
        } else {
            self.errors.omitted += 1;
        }
    }
}

/// Names the parameters not yet `named` with the largest `size` first until the `rest` fits
/// under `cap`.
fn largest_first<'a>(
    params: &[Param<'a>],
    named: &mut [bool],
    mut rest: usize,
    cap: usize,
    size: impl Fn(&Param<'a>) -> usize,
    mut name: impl FnMut(&Param<'a>),
) {
    if rest <= cap {
        return;
    }
    let mut order: Vec<usize> = (0..params.len()).filter(|i| !named[*i]).collect();
    order.sort_by_key(|i| std::cmp::Reverse(size(&params[*i])));
    for i in order {
        if rest <= cap {
            break;
        }
        named[i] = true;
        rest -= size(&params[i]);
        name(&params[i]);
    }
}

/// What one parameter's value holds: keys, bytes as compact JSON, whether it nests too deep.
struct Measure {
    keys: usize,
    bytes: usize,
    too_deep: bool,
}

impl Measure {
    /// `level` is the nesting level `v` sits at (a parameter's value: 1, inside `arguments`).
    /// Does not descend past `max_depth`, so the walk's own recursion is bounded by the cap.
    fn walk(&mut self, v: &Value, level: usize, max_depth: usize) {
        match v {
            Value::Null => self.bytes += 4,
            Value::Bool(b) => self.bytes += if *b { 4 } else { 5 },
            Value::Number(n) => self.bytes += number_len(n),
            Value::String(s) => self.bytes += s.len() + 2,
            Value::Array(a) => {
                if level >= max_depth {
                    self.too_deep = true;
                    return;
                }
                self.bytes += 2 + a.len().saturating_sub(1);
                for x in a {
                    self.walk(x, level + 1, max_depth);
                }
            }
            Value::Object(m) => {
                if level >= max_depth {
                    self.too_deep = true;
                    return;
                }
                self.keys += m.len();
                self.bytes += 2 + m.len().saturating_sub(1);
                for (k, x) in m {
                    self.bytes += k.len() + 3;
                    self.walk(x, level + 1, max_depth);
                }
            }
        }
    }
}

/// The length of `n` written as JSON, without allocating.
fn number_len(n: &serde_json::Number) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut c = Count(0);
    let _ = serde_json::to_writer(&mut c, n);
    c.0
}
