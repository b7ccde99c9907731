//! A window type's own MCP Apps view: the author's HTML and its content-security policy
//! (MA-6, MA-9).
//!
//! Declared with `#[bridge_window(view = "views/order.html")]` or
//! `#[bridge_window(view(file = "…", resource_domains = ["https://…"]))]`, or in code with
//! `Bridge::builder(..).window_view::<W>(WindowView::html(..))` (a view a build script bundles
//! into `OUT_DIR`, say); a window type without one is shown by the built-in view, which needs
//! no declaration.

use serde::Serialize;
use std::borrow::Cow;

/// The CSP domain lists of a view, sent as `_meta.ui.csp` on its `resources/read` content
/// (MA-6-7). Every list is empty unless the author adds origins (MA-9-2): each entry is an
/// `https://` origin (`bridge_rules::check_csp_domain`). `connect_domains` and
/// `resource_domains` are separate on purpose: loading a font or script from an origin does
/// not allow sending data to it (MA-9-14).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ViewCsp {
    /// Origins the view may `fetch`/XHR/WebSocket to (`connectDomains`).
    pub connect_domains: Vec<Cow<'static, str>>,
    /// Origins the view may load scripts, styles, images and fonts from (`resourceDomains`).
    pub resource_domains: Vec<Cow<'static, str>>,
    /// Origins the view may embed in nested frames (`frameDomains`).
    pub frame_domains: Vec<Cow<'static, str>>,
    /// Origins the view's `<base href>` may point to (`baseUriDomains`).
    pub base_uri_domains: Vec<Cow<'static, str>>,
}

impl ViewCsp {
    /// The four lists with their wire names, in the order of `bridge_rules::CSP_LISTS`.
    pub fn lists(&self) -> [(&'static str, &[Cow<'static, str>]); 4] {
        [
            (bridge_rules::CSP_LISTS[0], &self.connect_domains),
            (bridge_rules::CSP_LISTS[1], &self.resource_domains),
            (bridge_rules::CSP_LISTS[2], &self.frame_domains),
            (bridge_rules::CSP_LISTS[3], &self.base_uri_domains),
        ]
    }

    /// Checks every entry (the macro checks literals at compile time; this is the same rule
    /// for views built in code). Errors: the first entry that is not an `https://` origin
    /// ([`ViewCspError`], e.g. "resourceDomains: `http://x` must be an https:// origin …").
    pub fn check(&self) -> Result<(), ViewCspError> {
        for (list, domains) in self.lists() {
            for d in domains {
                if let Err(p) = bridge_rules::check_csp_domain(d) {
                    return Err(ViewCspError { list, domain: d.to_string(), reason: p.reason() });
                }
            }
        }
        Ok(())
    }
}

/// A CSP entry of a view that is not an `https://` origin (MA-9-2): which list, the entry, and
/// why. Displays as "resourceDomains: `http://x` must be an https:// origin such as …".
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{list}: `{domain}` {reason}")]
pub struct ViewCspError {
    /// The list's wire name, e.g. `resourceDomains`.
    pub list: &'static str,
    /// The entry as given.
    pub domain: String,
    /// What is wrong with it.
    pub reason: &'static str,
}

/// A window type's own view: a complete HTML document served as a `ui://` resource with MIME
/// type `text/html;profile=mcp-app` to hosts that render MCP Apps (MA-6).
///
/// The document should be self-contained (MA-9-3); whatever it loads from elsewhere must be in
/// [`WindowView::csp`]. It talks to the host with the Apps bridge (`ui/initialize`, MA-10) and
/// must treat every message as untrusted (MA-9-6). In the catalog export only `file` and `csp`
/// appear.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WindowView {
    /// The HTML document.
    #[serde(skip)]
    pub html: Cow<'static, str>,
    /// Where the document came from, relative to the crate root (`view = "…"`), if a file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<Cow<'static, str>>,
    /// The origins it may reach (all empty by default).
    pub csp: ViewCsp,
}

impl WindowView {
    /// A view from an HTML document, with an empty CSP.
    pub fn html(html: impl Into<Cow<'static, str>>) -> Self {
        WindowView { html: html.into(), file: None, csp: ViewCsp::default() }
    }

    /// Sets the CSP lists. Errors: the first entry that is not an `https://` origin
    /// ([`ViewCsp::check`]).
    pub fn with_csp(mut self, csp: ViewCsp) -> Result<Self, ViewCspError> {
        csp.check()?;
        self.csp = csp;
        Ok(self)
    }
}
