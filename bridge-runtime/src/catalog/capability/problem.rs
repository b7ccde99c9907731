//! What goes wrong: a mistake in a capability, character or style declaration ([`SpecError`]),
//! and a request's params or result against a schema ([`FieldProblem`]s, `schema_problems`).

use crate::catalog::decode::FieldProblem;
use crate::catalog::schema::MAX_REPORTED_PROBLEMS;
use crate::model::quote::{MESSAGE_CHARS, clip_to};
use serde_json::Value;

/// A mistake in a capability, character or style declaration.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SpecError {
    /// The id breaks `[a-z][a-z0-9_]*(\.[a-z0-9_]+)+` or the vendor rule (CP-2-27).
    #[error("invalid id `{id}`: {reason}")]
    InvalidId {
        /// The id as declared.
        id: String,
        /// Which rule it breaks.
        reason: String,
    },
    /// `version` is not a semantic version.
    #[error("capability `{id}`: version `{version}` is not a semantic version (e.g. 0.1.0)")]
    InvalidVersion {
        /// The capability id.
        id: String,
        /// The version as declared.
        version: String,
    },
    /// The declaration omits something every capability must state (CP-2-15).
    #[error("capability `{id}`: missing {what}")]
    Missing {
        /// The capability id.
        id: String,
        /// What is missing, e.g. `description`.
        what: &'static str,
    },
    /// Two declared properties contradict each other.
    #[error("capability `{id}`: {reason}")]
    Inconsistent {
        /// The capability id.
        id: String,
        /// Which properties contradict each other, and how.
        reason: String,
    },
    /// A schema is not a valid JSON Schema object schema.
    #[error("capability `{id}`: {which} is not a valid object schema: {reason}")]
    BadSchema {
        /// The capability id.
        id: String,
        /// Which schema: `inputSchema` or `outputSchema`.
        which: &'static str,
        /// What is wrong with it.
        reason: String,
    },
    /// The registry already holds an entry with this id.
    #[error("duplicate {what} id `{id}`")]
    Duplicate {
        /// What kind of entry: `capability`, `character` or `style`.
        what: &'static str,
        /// The repeated id.
        id: String,
    },
}

/// Runs `validator` on `value`; one problem per error, paths as JSON pointers, messages with the
/// value masked so content is never echoed (CP-4-18). What they quote of the input (property
/// names) has its invisible and control characters escaped and is bounded
/// ([`crate::model::quote`]); at most [`MAX_REPORTED_PROBLEMS`] problems are listed, then one
/// at the top (`""`) counts the ones left out.
pub(crate) fn schema_problems(validator: &jsonschema::Validator, value: &Value) -> Vec<FieldProblem> {
    let mut out = Vec::new();
    let mut omitted = 0usize;
    for e in validator.iter_errors(value) {
        if out.len() < MAX_REPORTED_PROBLEMS {
            let path = clip_to(e.instance_path().as_str(), MESSAGE_CHARS).into_owned();
            let message = clip_to(&e.masked().to_string(), MESSAGE_CHARS).into_owned();
            out.push(FieldProblem::new(path, message));
        } else {
            omitted += 1;
        }
    }
    if omitted > 0 {
        out.push(FieldProblem::new(
            "",
            format!("{omitted} more problems left out (at most {MAX_REPORTED_PROBLEMS} are listed)"),
        ));
    }
    out
}
