//! Decoding an action call for the code `#[bridge_actions]` generates: the arguments read one
//! parameter at a time ([`ParamReader`]) or as one `#[bridge(args)]` struct, and the method's
//! return value and error turned into what the tool returns. Not API: reachable only through
//! `bridge_runtime::__private`.

use crate::model::{ActionError, FieldError};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

/// Reads an action's arguments one parameter at a time, so that every bad parameter is reported
/// by name (GB-7.3-1): a missing required one as "Required", an unknown one as "Unknown
/// parameter", a wrong value with serde's reason.
#[derive(Debug)]
pub struct ParamReader {
    args: Map<String, Value>,
    errors: Vec<FieldError>,
}

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

/// An action's return value as its ToolResult `result`. A value serde cannot encode (a map with
/// non-string keys, a failing `Serialize` impl) is an `action_not_available` error saying the
/// action ran, never a silent `null` that its `outputSchema` does not allow (GB-12.3-4).
pub fn result_value<T: Serialize + ?Sized>(value: &T) -> Result<Value, ActionError> {
    serde_json::to_value(value).map_err(|e| {
        tracing::error!(error = %e, "an action's result could not be encoded as JSON");
        ActionError::not_available(format!(
            "The action ran, but its result could not be encoded as JSON ({e}); re-read app://windows to see its effect"
        ))
    })
}

/// An action's error type converted (`Result<T, E>` with `E: Into<ActionError>`).
pub fn action_error<E: Into<ActionError>>(err: E) -> ActionError {
    err.into()
}

#[cfg(test)]
mod tests {
    use super::*;

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
