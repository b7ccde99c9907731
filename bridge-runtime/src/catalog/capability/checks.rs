//! Ready-made semantic checks for capabilities declared by hand with [`super::CapabilityBuilder`]
//! (its `check_params`/`check_result`): the common rules of CP-2-23.

use crate::catalog::decode::FieldProblem;
use serde_json::Value;

/// Params check: the objects of the array at JSON pointer `array` carry unique string
/// values under `key` (option ids unique within one request, CP-2-23).
pub fn unique_ids(
    array: &'static str,
    key: &'static str,
) -> impl Fn(&Value) -> Result<(), Vec<FieldProblem>> + Send + Sync + 'static {
    move |params: &Value| {
        let mut seen = std::collections::HashSet::new();
        let mut problems = Vec::new();
        for (i, item) in params.pointer(array).and_then(Value::as_array).into_iter().flatten().enumerate() {
            if let Some(id) = item.get(key).and_then(Value::as_str)
                && !seen.insert(id)
            {
                problems.push(FieldProblem::new(format!("{array}/{i}/{key}"), format!("duplicate {key}")));
            }
        }
        if problems.is_empty() { Ok(()) } else { Err(problems) }
    }
}

/// Result check: the string at `result[result_key]` equals `key` of one of the objects in the
/// params array at JSON pointer `array` (a returned id belongs to the request, CP-2-23).
pub fn result_id_in(
    array: &'static str,
    key: &'static str,
    result_key: &'static str,
) -> impl Fn(&Value, &Value) -> Result<(), Vec<FieldProblem>> + Send + Sync + 'static {
    move |params: &Value, result: &Value| {
        let chosen = result.get(result_key).and_then(Value::as_str);
        let known = params
            .pointer(array)
            .and_then(Value::as_array)
            .is_some_and(|items| items.iter().any(|it| it.get(key).and_then(Value::as_str) == chosen));
        if chosen.is_some() && known {
            Ok(())
        } else {
            Err(vec![FieldProblem::new(format!("/{result_key}"), format!("not one of the request's {array} ids"))])
        }
    }
}
