//! Support for the code `#[bridge_actions(companion)]` generates: the method's parameters read
//! from the request params, its `ActionError` turned into [`FieldProblem`]s. Not API: reachable
//! only through `bridge_runtime::__private`.

use super::problem::FieldProblem;
use crate::model::ActionError;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// A JSON pointer to top-level property `name` (RFC 6901 escaping); a name that already is
/// a pointer (`/options/1/id`, or `""` for the whole value) is kept.
fn pointer(name: &str) -> String {
    if name.is_empty() || name.starts_with('/') {
        name.to_owned()
    } else {
        format!("/{}", name.replace('~', "~0").replace('/', "~1"))
    }
}

/// Parameter `name` of already schema-validated params (absent reads as `null`, so
/// `Option<T>` is optional). The message never echoes the value (CP-4-18).
pub fn capability_param<T: DeserializeOwned>(params: &Value, name: &str) -> Result<T, Vec<FieldProblem>> {
    let value = params.get(name).cloned().unwrap_or(Value::Null);
    serde_json::from_value(value)
        .map_err(|_| vec![FieldProblem::new(pointer(name), "does not match the parameter's declared type")])
}

/// The whole params object as the `#[bridge(args)]` struct.
pub fn capability_params<T: DeserializeOwned>(params: &Value) -> Result<T, Vec<FieldProblem>> {
    serde_json::from_value(params.clone())
        .map_err(|_| vec![FieldProblem::new("", "does not match the params' declared type")])
}

/// The business result as the `output = Type`.
pub fn capability_output<T: DeserializeOwned>(result: &Value) -> Result<T, Vec<FieldProblem>> {
    serde_json::from_value(result.clone())
        .map_err(|_| vec![FieldProblem::new("", "does not match the result's declared type")])
}

/// `ActionError` → problems: each `FieldError` `{field, error}` becomes `{path, message}`
/// with `path` the pointer to that top-level property (a `field` starting with `/` is taken
/// as a pointer, e.g. `/options/1/id`); an error without fields, or `not_available`, is one
/// problem about the whole value (`path` `""`).
pub fn problems(err: ActionError) -> Vec<FieldProblem> {
    match err {
        ActionError::Validation { fields, .. } if !fields.is_empty() => {
            fields.into_iter().map(|f| FieldProblem::new(pointer(&f.field), f.error)).collect()
        }
        ActionError::Validation { message, .. } | ActionError::NotAvailable(message) => {
            vec![FieldProblem::new("", message)]
        }
    }
}
