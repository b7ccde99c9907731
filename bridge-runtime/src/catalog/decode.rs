//! Decoding a method's JSON parameters, for the code `#[bridge_actions]` generates on both
//! surfaces whose methods take one JSON object: GUI actions (the tool arguments) and companion
//! capabilities (the request params, read again for their semantic checks).
//!
//! One reader ([`ParamReader`]) and one problem type ([`FieldProblem`]: a JSON pointer and a
//! message); a [`Surface`] says how its problems are worded and which are reported, and each
//! surface shows them in its own shape: GB's `{field, error}` items of `validation_failed`
//! (GB-7.3-1), CP's `{path, message}` problems as they are. Besides, a GUI action's return value
//! and error turned into what the tool returns, and a capability's business result decoded for
//! its result check. Not API: reachable only through `bridge_runtime::__private`, except
//! [`FieldProblem`] (`catalog::FieldProblem`).

use crate::model::{ActionError, FieldError};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

// The doc comment is the schema's description in the companion's OpenRPC document (CP-7),
// which stays byte for byte: GB shows the same problems as `{field, error}`, `field` being the
// top-level parameter the pointer starts in (GB-7.3-1).
/// One problem with a parameter or result: `{"path": JSON pointer, "message": text}`. `path` is
/// relative to the value checked (e.g. `/options/1/id`); the engine prefixes it with the method
/// parameter it came from (e.g. `/params/options/1/id`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct FieldProblem {
    /// JSON pointer to the offending value (`""` = the whole value).
    pub path: String,
    /// What is wrong; never echoes the value itself (CP-4-18).
    pub message: String,
}

impl FieldProblem {
    /// Builds `{"path": path, "message": message}`.
    pub fn new(path: impl Into<String>, message: impl Into<String>) -> Self {
        Self { path: path.into(), message: message.into() }
    }

    /// A problem with top-level property `name` (its pointer, RFC 6901 escaped).
    fn at(name: &str, message: impl Into<String>) -> Self {
        Self::new(format!("/{}", name.replace('~', "~0").replace('/', "~1")), message)
    }
}

/// GB's `{field, error}` for a problem: `field` is the top-level parameter its pointer starts in
/// (`""` for the whole value), and a pointer that goes deeper says where in `error`
/// (`"… (at /lines/0)"`), as schema problems do.
fn field_error(problem: FieldProblem) -> FieldError {
    let Some(rest) = problem.path.strip_prefix('/') else {
        return FieldError::new(problem.path, problem.message);
    };
    let (top, inner) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let field = top.replace("~1", "/").replace("~0", "~");
    if inner.is_empty() {
        FieldError::new(field, problem.message)
    } else {
        FieldError::new(field, format!("{} (at {inner})", problem.message))
    }
}

/// Which surface reads the parameters: it decides how a problem is worded and which problems
/// are reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Surface {
    /// A GUI action's tool arguments (without `expectedVersion`): every problem, keyed by its
    /// parameter (GB-7.3-1): a missing required one "Required", an unknown one "Unknown
    /// parameter", a wrong value with serde's reason.
    Action,
    /// A capability's request params, which passed its strict `inputSchema` already: the first
    /// parameter whose value its type still refuses, in words that never echo the value
    /// (CP-4-18). Members it does not know stay unreported (the result check reads the params
    /// as stored).
    Capability,
}

impl Surface {
    /// The message for a parameter's value (absent unless `present`: read as `null`) that its
    /// type refuses with `err`.
    fn refused(self, present: bool, err: &serde_json::Error) -> String {
        match (self, present) {
            (Surface::Action, true) => err.to_string(),
            (Surface::Action, false) => "Required".to_owned(),
            (Surface::Capability, _) => "does not match the parameter's declared type".to_owned(),
        }
    }

    /// The problem for a whole argument object (`#[bridge(args)]`) its type refuses: for an
    /// action at the field serde names (`missing field `x``), with serde's reason.
    fn refused_object(self, err: &serde_json::Error) -> FieldProblem {
        match self {
            Surface::Action => {
                let text = err.to_string();
                let field = crate::model::serde_field(&text).to_owned();
                if field.is_empty() { FieldProblem::new("", text) } else { FieldProblem::at(&field, text) }
            }
            Surface::Capability => FieldProblem::new("", "does not match the params' declared type"),
        }
    }

    /// Whether every problem is reported, or only the first.
    fn every_problem(self) -> bool {
        self == Surface::Action
    }

    /// The message for an argument that names no parameter; `None`: not reported.
    fn unknown(self) -> Option<&'static str> {
        match self {
            Surface::Action => Some("Unknown parameter"),
            Surface::Capability => None,
        }
    }
}

/// Reads a method's parameters one at a time, so that every bad one is reported by its name
/// (GB-7.3-1), or the whole object as one `#[bridge(args)]` struct. Problems are
/// [`FieldProblem`]s at the parameter's pointer, worded by the [`Surface`], and reported as the
/// surface's error ([`SurfaceError`]).
#[derive(Debug)]
pub struct ParamReader {
    args: Map<String, Value>,
    surface: Surface,
    problems: Vec<FieldProblem>,
}

impl ParamReader {
    /// Starts reading `args` (a GUI action's arguments without `expectedVersion`, or a copy of
    /// a capability's params).
    pub fn new(surface: Surface, args: Map<String, Value>) -> Self {
        Self { args, surface, problems: Vec::new() }
    }

    /// Starts reading a copy of the members of `params` (none when it is not an object).
    pub fn of(surface: Surface, params: &Value) -> Self {
        Self::new(surface, params.as_object().cloned().unwrap_or_default())
    }

    /// Takes parameter `name`. A missing parameter reads as JSON `null`, so `Option<T>` is
    /// optional and anything else a problem. `None` means a problem was recorded.
    pub fn take<T: DeserializeOwned>(&mut self, name: &str) -> Option<T> {
        let value = self.args.remove(name);
        let present = value.is_some();
        match serde_json::from_value(value.unwrap_or(Value::Null)) {
            Ok(t) => Some(t),
            Err(e) => {
                let message = self.surface.refused(present, &e);
                self.record(FieldProblem::at(name, message));
                None
            }
        }
    }

    /// Takes parameter `name` declared `#[serde(default)]`: a missing parameter is
    /// `T::default()`, a present one (even `null`) is deserialized. `None` means a problem was
    /// recorded.
    pub fn take_or_default<T: DeserializeOwned + Default>(&mut self, name: &str) -> Option<T> {
        if self.args.contains_key(name) { self.take(name) } else { Some(T::default()) }
    }

    /// `Ok` when every parameter was read and no unknown one was given (where the surface
    /// reports them).
    pub fn finish<E: SurfaceError>(self) -> Result<(), E> {
        let problems = self.into_problems();
        if problems.is_empty() { Ok(()) } else { Err(E::from_problems(problems)) }
    }

    /// The problems of a read in which a parameter failed ([`ParamReader::take`] returned
    /// `None`), unknown parameters included.
    pub fn fail<E: SurfaceError>(self) -> E {
        E::from_problems(self.into_problems())
    }

    /// The whole argument object as one `#[bridge(args)]` struct.
    pub fn whole<T: DeserializeOwned, E: SurfaceError>(self) -> Result<T, E> {
        serde_json::from_value(Value::Object(self.args))
            .map_err(|e| E::from_problems(vec![self.surface.refused_object(&e)]))
    }

    fn record(&mut self, problem: FieldProblem) {
        if self.problems.is_empty() || self.surface.every_problem() {
            self.problems.push(problem);
        }
    }

    fn into_problems(mut self) -> Vec<FieldProblem> {
        if let Some(message) = self.surface.unknown() {
            let unknown: Vec<String> = self.args.keys().cloned().collect();
            for name in unknown {
                self.record(FieldProblem::at(&name, message));
            }
        }
        self.problems
    }
}

/// The error a surface's methods report their parameters' problems as: a GUI action's
/// [`ActionError`] (`validation_failed`, GB's `{field, error}` items), a capability check's
/// problems as they are.
#[doc(hidden)]
pub trait SurfaceError {
    /// The error for `problems` (at least one).
    fn from_problems(problems: Vec<FieldProblem>) -> Self;
}

impl SurfaceError for ActionError {
    fn from_problems(problems: Vec<FieldProblem>) -> Self {
        ActionError::fields(problems.into_iter().map(field_error).collect())
    }
}

impl SurfaceError for Vec<FieldProblem> {
    fn from_problems(problems: Vec<FieldProblem>) -> Self {
        problems
    }
}

/// An action's error type converted (`Result<T, E>` with `E: Into<ActionError>`).
pub fn action_error<E: Into<ActionError>>(err: E) -> ActionError {
    err.into()
}

/// A capability's business result as its `output = Type`, for the result check.
pub fn capability_output<T: DeserializeOwned>(result: &Value) -> Result<T, Vec<FieldProblem>> {
    serde_json::from_value(result.clone())
        .map_err(|_| vec![FieldProblem::new("", "does not match the result's declared type")])
}

/// A capability check's `ActionError` as CP problems: each `{field, error}` becomes
/// `{path, message}` with `path` the pointer to that top-level parameter (a `field` starting
/// with `/` is a pointer already, e.g. `/options/1/id`, and `""` is the whole params); an error
/// without fields, or `not_available`, is one problem about the whole params (`path` `""`).
pub fn problems(err: ActionError) -> Vec<FieldProblem> {
    match err {
        ActionError::Validation { fields, .. } if !fields.is_empty() => fields
            .into_iter()
            .map(|f| {
                if f.field.is_empty() || f.field.starts_with('/') {
                    FieldProblem::new(f.field, f.error)
                } else {
                    FieldProblem::at(&f.field, f.error)
                }
            })
            .collect(),
        ActionError::Validation { message, .. } | ActionError::NotAvailable(message) => {
            vec![FieldProblem::new("", message)]
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn args(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn take_or_default_reads_missing_as_default() {
        let mut r = ParamReader::new(Surface::Action, args(json!({"n": 3})));
        assert_eq!(r.take_or_default::<u32>("n"), Some(3));
        assert_eq!(r.take_or_default::<u32>("m"), Some(0));
        assert_eq!(r.finish::<ActionError>(), Ok(()));
    }

    /// One reader, two surfaces: an action lists every problem in GB's words, keyed by the
    /// parameter's name; a capability names the first parameter in words without its value.
    #[test]
    fn each_surface_words_and_reports_its_problems() {
        fn read<E: SurfaceError>(surface: Surface) -> E {
            let mut r = ParamReader::new(surface, args(json!({"a/b": "x", "c": 1, "extra": true})));
            let (a, c, d) = (r.take::<u32>("a/b"), r.take::<String>("c"), r.take::<bool>("d"));
            assert_eq!((a, c, d), (None, None, None));
            r.fail()
        }
        assert_eq!(
            read::<ActionError>(Surface::Action),
            ActionError::fields(vec![
                FieldError::new("a/b", "invalid type: string \"x\", expected u32"),
                FieldError::new("c", "invalid type: integer `1`, expected a string"),
                FieldError::new("d", "Required"),
                FieldError::new("extra", "Unknown parameter"),
            ])
        );
        assert_eq!(
            read::<Vec<FieldProblem>>(Surface::Capability),
            [FieldProblem::new("/a~1b", "does not match the parameter's declared type")]
        );
        let whole = |surface| ParamReader::new(surface, args(json!({})));
        assert_eq!(
            whole(Surface::Action).whole::<Point, ActionError>(),
            Err(ActionError::fields(vec![FieldError::new("x", "missing field `x`")]))
        );
        assert_eq!(
            whole(Surface::Capability).whole::<Point, Vec<FieldProblem>>(),
            Err(vec![FieldProblem::new("", "does not match the params' declared type")])
        );
    }

    #[derive(Debug, PartialEq, Deserialize)]
    struct Point {
        x: i32,
    }

    #[test]
    fn gb_fields_are_top_level_parameters() {
        let field = |path: &str| field_error(FieldProblem::new(path, "Bad"));
        assert_eq!(field(""), FieldError::new("", "Bad"));
        assert_eq!(field("/"), FieldError::new("", "Bad"));
        assert_eq!(field("/a~1b~0c"), FieldError::new("a/b~c", "Bad"));
        assert_eq!(field("/lines/0/qty"), FieldError::new("lines", "Bad (at /0/qty)"));
    }

    #[test]
    fn author_errors_become_cp_problems() {
        assert_eq!(
            problems(ActionError::field("count", "too many").and_field("/options/1/id", "duplicate")),
            [FieldProblem::new("/count", "too many"), FieldProblem::new("/options/1/id", "duplicate")]
        );
        assert_eq!(problems(ActionError::not_available("later")), [FieldProblem::new("", "later")]);
        assert_eq!(
            problems(ActionError::fields(Vec::new())),
            [FieldProblem::new("", "Rejected: 0 fields are invalid")]
        );
    }
}
