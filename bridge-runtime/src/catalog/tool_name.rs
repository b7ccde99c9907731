//! The tool-name grammar, in one place: how a window action, an app action and a companion
//! capability are spelled as MCP tool names (GB-5.2-1, OQ-GB-12, CP-1-4), and which window
//! handles keep those spellings unambiguous (GB-12.4-3, OQ-GB-13).
//!
//! Names are made by the listing, from a [`ToolName`]; a call finds its tool by looking the
//! name up in the published tool table, never by taking it apart. Only a name that is not
//! listed is read here ([`claimed`]), to say which GB-7.2 check it fails.

use std::fmt;

/// Prefix of app-level tools, a pseudo window id never given to a window (OQ-GB-12).
pub const APP_PREFIX: &str = "app";

/// Tool-name prefix of companion capabilities (CP-1-4): `companion__{capability}`.
pub const COMPANION_PREFIX: &str = "companion__";

/// The pseudo window id of companion tools, never given to a window.
const COMPANION: &str = "companion";

/// Between a window id (or `app`, `companion`) and the action.
const SEPARATOR: &str = "__";

/// MCP's limit on tool names, in bytes (GB-5.2-1).
const MAX_TOOL_NAME_LEN: usize = 64;

/// Longest window handle: 14 + `__` + a 48-char action = 64, MCP's tool-name limit.
pub(crate) const MAX_HANDLE_LEN: usize = 14;

/// The window-tool shape as messages and exports spell it: `{winId}__{action}`.
pub(crate) const WINDOW_TOOL_SHAPE: &str = "{winId}__{action}";

/// What a listed tool runs: an action of one window, an app-level action, or a companion
/// capability. Its [`Display`](fmt::Display) is the tool's name:
///
/// | variant | name |
/// | --- | --- |
/// | `Window { id: "w-1", action: "save" }` | `w-1__save` (GB-5.2-1) |
/// | `App { action: "new_doc" }` | `app__new_doc` (OQ-GB-12) |
/// | `Companion { capability: "notice.show" }` | `companion__notice_show` (CP-1-4; `.` becomes `_`, so this one cannot be read back) |
///
/// Values are made by the listing; a name is resolved by looking it up in the listed table.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ToolName {
    /// An action of the window whose external id is `id`.
    Window {
        /// The window's external id (a handle, see `gui::is_handle_safe`).
        id: String,
        /// The action's name.
        action: String,
    },
    /// An app-level action.
    App {
        /// The action's name.
        action: String,
    },
    /// A desktop-companion capability served as an MCP tool.
    Companion {
        /// The capability id, e.g. `notice.show`.
        capability: String,
    },
}

impl ToolName {
    /// The tool of `action` on window `id`.
    pub fn window(id: impl Into<String>, action: impl Into<String>) -> Self {
        ToolName::Window { id: id.into(), action: action.into() }
    }

    /// The app-level tool of `action`.
    pub fn app(action: impl Into<String>) -> Self {
        ToolName::App { action: action.into() }
    }

    /// The tool of companion capability `capability`.
    pub fn companion(capability: impl Into<String>) -> Self {
        ToolName::Companion { capability: capability.into() }
    }

    /// The name as listed, or `None` when it would exceed MCP's 64 characters (a companion
    /// capability id can be that long; window and app names never are).
    pub fn listed(&self) -> Option<String> {
        let name = self.to_string();
        (name.len() <= MAX_TOOL_NAME_LEN).then_some(name)
    }
}

impl fmt::Display for ToolName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ToolName::Window { id, action } => write!(f, "{id}{SEPARATOR}{action}"),
            ToolName::App { action } => write!(f, "{APP_PREFIX}{SEPARATOR}{action}"),
            ToolName::Companion { capability } => write!(f, "{COMPANION_PREFIX}{}", capability.replace('.', "_")),
        }
    }
}

/// Whether `id` can be an external window id as is: name-safe (`[A-Za-z0-9_-]`), at most
/// [`MAX_HANDLE_LEN`] bytes, not a pseudo window id (`app`, `companion`), no `__`, and not
/// ending in `_` (which would move the first `__` of its tool names). So a window's tool names
/// never collide with app or companion tools, nor with another window's (GB-12.4-3, OQ-GB-13).
pub(crate) fn is_window_handle(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= MAX_HANDLE_LEN
        && id != APP_PREFIX
        && id != COMPANION
        && !id.contains(SEPARATOR)
        && !id.ends_with('_')
        && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// What a name that is *not* listed claims to be, so a call to it gets the error GB-7.2 asks
/// for (OQ-GB-21: `window_not_found` for a closed window, `blocked_by_modal`,
/// `action_not_available`). Window handles hold no `__`, so the first `__` ends the window id.
/// `None`: no `__` at all. Never used to run a listed tool; companion names are never read back.
pub(crate) fn claimed(name: &str) -> Option<ToolName> {
    let (id, action) = name.split_once(SEPARATOR)?;
    Some(if id == APP_PREFIX { ToolName::app(action) } else { ToolName::window(id, action) })
}

/// Whether an unlisted `name` is spelled as a companion tool (`companion__…`), so a server
/// that serves the companion answers it as an unknown capability.
#[cfg(feature = "companion")]
pub(crate) fn claims_companion(name: &str) -> bool {
    name.starts_with(COMPANION_PREFIX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_as_listed() {
        assert_eq!(ToolName::window("w-1", "save").to_string(), "w-1__save");
        assert_eq!(ToolName::app("new_doc").to_string(), "app__new_doc");
        assert_eq!(ToolName::companion("interaction.choose").to_string(), "companion__interaction_choose");
        assert_eq!(COMPANION_PREFIX, format!("{COMPANION}{SEPARATOR}"));
        assert_eq!(WINDOW_TOOL_SHAPE, ToolName::window("{winId}", "{action}").to_string());
        assert_eq!(ToolName::companion("x".repeat(60)).listed(), None);
    }

    #[test]
    fn reserved_ids_are_no_handles() {
        for bad in ["app", "companion", "a__b", "a_", "", "has space", "waytoolongidentifier"] {
            assert!(!is_window_handle(bad), "{bad}");
        }
        for good in ["w-1", "orders", "a_b", "companion2"] {
            assert!(is_window_handle(good), "{good}");
        }
    }

    #[test]
    fn unlisted_names_claim_a_window_or_the_app() {
        assert_eq!(claimed("w-1__a__b"), Some(ToolName::window("w-1", "a__b")));
        assert_eq!(claimed("app__x"), Some(ToolName::app("x")));
        assert_eq!(claimed("nothing"), None);
        #[cfg(feature = "companion")]
        assert!(claims_companion("companion__x") && !claims_companion("companionx"));
    }
}
