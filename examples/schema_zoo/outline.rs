//! A companion capability whose params and result are recursive (`outline.sort`, served over
//! MCP as `companion__outline_sort`), and the zoo's stand-in for a user who answers at once.

use crate::types::TreeNode;
use bridge_runtime::companion::{Engine, HideReason, Presentation, Presenter};
use bridge_runtime::prelude::*;

/// The zoo's companion capabilities.
pub struct Outlines;

#[bridge_actions(companion)]
impl Outlines {
    /// Shows an outline to the user, who puts the children of every heading in order; returns
    /// the sorted outline.
    #[bridge_action(
        id = "outline.sort",
        version = "0.1.0",
        kind = "interaction",
        interaction = "text",
        output = TreeNode,
        timeout_ms(min = 1000, max = 60_000)
    )]
    fn outline_sort(
        /// What the user is asked.
        title: String,
        /// The outline to sort.
        outline: TreeNode,
    ) -> Result<(), ActionError> {
        if title.trim().is_empty() {
            return Err(ActionError::field("title", "Cannot be empty"));
        }
        if outline.has_blank_label() {
            return Err(ActionError::field("outline", "Every node needs a label"));
        }
        Ok(())
    }
}

/// Question title the zoo's user never answers: the request expires at its `timeoutMs`.
pub const IGNORED: &str = "(ignored)";
/// Question title the zoo's user closes: the request ends `cancelled`.
pub const CLOSED: &str = "(closed)";

/// A user who reads every question at once and answers it with the sorted outline, except
/// questions titled [`IGNORED`] (no answer) or [`CLOSED`] (closes it).
pub struct InstantUser;

impl Presenter for InstantUser {
    fn show(&self, p: &Presentation, engine: &Engine) {
        if engine.displayed(&p.request_id).is_err() {
            return;
        }
        let answer = match p.params["title"].as_str() {
            Some(IGNORED) => return,
            Some(CLOSED) => {
                let _ = engine.view_closed(&p.request_id);
                return;
            }
            _ => serde_json::from_value::<TreeNode>(p.params["outline"].clone()).map(|t| t.sorted()),
        };
        match answer.map(serde_json::to_value) {
            Ok(Ok(result)) => {
                if let Err(e) = engine.user_responded(&p.request_id, result) {
                    tracing::error!(request = %p.request_id, "answer rejected: {e}");
                }
            }
            _ => {
                let _ = engine.presentation_failed(&p.request_id);
            }
        }
    }

    fn update(&self, _: &Presentation, _: &Engine) {}

    fn hide(&self, _: &str, _: HideReason, _: &Engine) {}
}
