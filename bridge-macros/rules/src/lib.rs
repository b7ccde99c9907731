//! # bridge-rules
//!
//! The rules bridge checks twice: at compile time by `#[bridge_window]`/`#[bridge_actions]`
//! (bridge-macros, at the author's tokens) and at run time by bridge-runtime (hand-built
//! declarations, the registry). Both call these functions, so the two checks cannot drift.
//!
//! Plain functions over `&str`, no dependencies. A rule returns `Err` with a problem that says
//! what is wrong; each side puts it into its own message (a `compile_error!` at a span, a
//! `SpecError` at run time).
//!
//! How a capability's declared properties fit its kind (interaction type, completion, display
//! time, queue mode, fallback) are in the same style, with a `reason()` (run time) and an
//! `explanation()` (compile time) per problem: [`check_interaction`], [`default_completion`],
//! [`check_completion`], [`check_display_ms`], [`check_queue_mode`], [`check_fallback_target`],
//! [`check_fallback_situation_count`], [`check_fallback_situation`].

use std::fmt;

mod capability;

pub use capability::{
    CompletionProblem, DEFAULT_DISPLAY_MS, DisplayMsProblem, EvictableInteraction, FallbackProblem, InteractionProblem,
    check_completion, check_display_ms, check_fallback_situation, check_fallback_situation_count,
    check_fallback_target, check_interaction, check_queue_mode, default_completion,
};

// ---------------------------------------------------------------------------------------------
// GUI: blocks, actions, labels

/// The seven GB block kinds in wire spelling (GB-4.4-5), in the order of the runtime's
/// `catalog::BlockKind` and of the `#[bridge(…)]` keys that declare them.
pub const BLOCK_KINDS: [&str; 7] = ["text", "fields", "table", "list", "notice", "media", "custom"];

/// Longest action name: a 14-character window handle + `__` + 48 = 64, MCP's tool-name limit
/// (GB-5.2-2).
pub const MAX_ACTION_NAME_LEN: usize = 48;

/// Why an action name is not `^[A-Za-z0-9_-]{1,48}$` (GB-5.2-2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ActionNameProblem {
    /// Longer than [`MAX_ACTION_NAME_LEN`] bytes (`len` bytes).
    TooLong {
        /// The name's length in bytes.
        len: usize,
    },
    /// Empty, or a character other than `A-Z a-z 0-9 _ -`.
    Pattern,
}

impl ActionNameProblem {
    /// The message naming action `name`, e.g. "action name `a b` must match
    /// ^[A-Za-z0-9_-]{1,48}$ (GB-5.2-2)".
    pub fn message(self, name: &str) -> String {
        match self {
            ActionNameProblem::TooLong { len } => format!(
                "action name `{name}` is {len} characters long; at most {MAX_ACTION_NAME_LEN} are allowed, so that \
                 `{{winId}}__{{action}}` fits MCP's 64-character tool names"
            ),
            ActionNameProblem::Pattern => {
                format!("action name `{name}` must match ^[A-Za-z0-9_-]{{1,48}}$ (GB-5.2-2)")
            }
        }
    }
}

/// Checks an action name: `[A-Za-z0-9_-]{1,48}` (GB-5.2-2). A name both too long and badly
/// spelt is reported as too long.
pub fn check_action_name(name: &str) -> Result<(), ActionNameProblem> {
    if name.len() > MAX_ACTION_NAME_LEN {
        Err(ActionNameProblem::TooLong { len: name.len() })
    } else if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-') {
        Err(ActionNameProblem::Pattern)
    } else {
        Ok(())
    }
}

/// A readable label from a Rust name: `edit_field` → `Edit field`, `dry-run` → `Dry run`
/// (`_` and `-` become spaces, the ends are trimmed, the first letter is upper-cased). The
/// default label of a block, a `fields` item and a tool's title.
pub fn humanize(name: &str) -> String {
    let spaced = name.replace(['_', '-'], " ");
    let mut c = spaced.trim().chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

// ---------------------------------------------------------------------------------------------
// Companion: capability, character and style ids, versions, vocabularies, limits

/// Longest accepted capability id, in bytes (CP-2-27).
pub const MAX_CAPABILITY_ID_LEN: usize = 128;

/// Longest accepted character or style id, in bytes.
pub const MAX_SIMPLE_ID_LEN: usize = 64;

/// Upper bound for any capability's `limits.maxTimeoutMs`: 24 h, in milliseconds. Keeps every
/// deadline shorter than the result retention period (CP-4-16, CP-4-12).
pub const MAX_TIMEOUT_CAP_MS: u64 = 24 * 60 * 60 * 1000;

/// Why a capability id breaks CP-2-27.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CapabilityIdProblem {
    /// Longer than [`MAX_CAPABILITY_ID_LEN`] bytes.
    TooLong,
    /// Fewer than two dot-separated segments.
    OneSegment,
    /// Not `[a-z][a-z0-9_]*(\.[a-z0-9_]+)+`.
    Pattern,
    /// A `vendor.` id without two domain labels and a name.
    Vendor,
}

impl CapabilityIdProblem {
    /// The run-time reason, after "invalid id `…`: " (e.g. "longer than 128 bytes").
    pub fn reason(self) -> &'static str {
        match self {
            CapabilityIdProblem::TooLong => "longer than 128 bytes",
            CapabilityIdProblem::OneSegment => "needs at least two dot-separated segments, e.g. `notice.show`",
            CapabilityIdProblem::Pattern => "must match [a-z][a-z0-9_]*(\\.[a-z0-9_]+)+",
            CapabilityIdProblem::Vendor => {
                "vendor ids read vendor.<reverse-domain>.<name> with at least two domain labels"
            }
        }
    }

    /// The compile-time explanation, after "capability id `…` " (e.g. "is longer than 128
    /// bytes"): the reason with an example of the right spelling.
    pub fn explanation(self) -> &'static str {
        match self {
            CapabilityIdProblem::TooLong => "is longer than 128 bytes",
            CapabilityIdProblem::OneSegment => "needs at least two dot-separated segments, e.g. `notice.show`",
            CapabilityIdProblem::Pattern => {
                "must match [a-z][a-z0-9_]*(\\.[a-z0-9_]+)+ (lowercase letters, digits, `_`, dot-separated)"
            }
            CapabilityIdProblem::Vendor => {
                "is a vendor id and must read vendor.<reverse-domain>.<name> with at least two domain labels, \
                 e.g. `vendor.com.example.wave`"
            }
        }
    }
}

impl fmt::Display for CapabilityIdProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.reason())
    }
}

/// Checks a capability id: `[a-z][a-z0-9_]*(\.[a-z0-9_]+)+`, at most
/// [`MAX_CAPABILITY_ID_LEN`] bytes; ids starting with `vendor.` must read
/// `vendor.<reverse-domain>.<name>` with at least two domain labels (CP-2-27). The first
/// problem found, in the order of [`CapabilityIdProblem`]'s variants.
pub fn check_capability_id(id: &str) -> Result<(), CapabilityIdProblem> {
    let segments = id.split('.').count();
    if id.len() > MAX_CAPABILITY_ID_LEN {
        Err(CapabilityIdProblem::TooLong)
    } else if segments < 2 {
        Err(CapabilityIdProblem::OneSegment)
    } else if !is_dotted_id(id) {
        Err(CapabilityIdProblem::Pattern)
    } else if id.starts_with("vendor.") && segments < 4 {
        Err(CapabilityIdProblem::Vendor)
    } else {
        Ok(())
    }
}

/// A character or style id that is empty, longer than [`MAX_SIMPLE_ID_LEN`] bytes or not
/// `[a-z][a-z0-9_]*(\.[a-z0-9_]+)*`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SimpleIdProblem;

impl SimpleIdProblem {
    /// The run-time reason for a `what` id (`"character"`, `"style"`).
    pub fn reason(self, what: &str) -> String {
        format!("{what} ids must match [a-z][a-z0-9_]*(\\.[a-z0-9_]+)* and be at most 64 bytes")
    }
}

/// Checks a character or style id: `[a-z][a-z0-9_]*(\.[a-z0-9_]+)*`, 1..=64 bytes (CP-2-3,
/// CP-2-6).
pub fn check_simple_id(id: &str) -> Result<(), SimpleIdProblem> {
    if id.is_empty() || id.len() > MAX_SIMPLE_ID_LEN || !is_dotted_id(id) { Err(SimpleIdProblem) } else { Ok(()) }
}

/// `[a-z][a-z0-9_]*(\.[a-z0-9_]+)*`: a lowercase letter first, then lowercase letters, digits
/// and `_`, in non-empty dot-separated segments.
fn is_dotted_id(id: &str) -> bool {
    let word = |s: &str| s.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
    let mut segments = id.split('.');
    let first = segments.next().unwrap_or_default();
    first.starts_with(|c: char| c.is_ascii_lowercase()) && word(first) && segments.all(|s| !s.is_empty() && word(s))
}

/// Whether `v` is a semantic version (SemVer 2.0.0): `MAJOR.MINOR.PATCH` (each fits a `u64`,
/// no leading zeros), an optional `-pre.release` (numeric identifiers without leading zeros)
/// and an optional `+build` (identifiers of `[0-9A-Za-z-]`). A capability's `version` (CP-7-1).
pub fn is_semver(v: &str) -> bool {
    let (rest, build) = match v.split_once('+') {
        Some((r, b)) => (r, Some(b)),
        None => (v, None),
    };
    let (core, pre) = match rest.split_once('-') {
        Some((c, p)) => (c, Some(p)),
        None => (rest, None),
    };
    let numeric = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) && (s == "0" || !s.starts_with('0'));
    let ident = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-');
    let parts: Vec<&str> = core.split('.').collect();
    parts.len() == 3
        && parts.iter().all(|p| numeric(p) && p.parse::<u64>().is_ok())
        && pre.is_none_or(|p| {
            p.split('.').all(|id| ident(id) && (!id.bytes().all(|b| b.is_ascii_digit()) || numeric(id)))
        })
        && build.is_none_or(|b| b.split('.').all(ident))
}

/// Why `timeout_ms` bounds are not `1 <= min <= max <= MAX_TIMEOUT_CAP_MS`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeoutBoundsProblem {
    /// `min` is 0.
    ZeroMin,
    /// `min` is above `max`.
    MinAboveMax,
    /// `max` is above [`MAX_TIMEOUT_CAP_MS`].
    AboveCap,
}

/// Checks a capability's accepted `timeoutMs` range, ms: `1 <= min <= max <=`
/// [`MAX_TIMEOUT_CAP_MS`] (CP-3-17, CP-4-12).
pub fn check_timeout_bounds(min: u64, max: u64) -> Result<(), TimeoutBoundsProblem> {
    if min == 0 {
        Err(TimeoutBoundsProblem::ZeroMin)
    } else if min > max {
        Err(TimeoutBoundsProblem::MinAboveMax)
    } else if max > MAX_TIMEOUT_CAP_MS {
        Err(TimeoutBoundsProblem::AboveCap)
    } else {
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------
// MCP Apps: a window view's content-security policy

/// The four CSP domain lists of an MCP Apps view, in wire spelling (`_meta.ui.csp`, MA-6-7):
/// `connectDomains` (fetch/XHR/WebSocket), `resourceDomains` (scripts, styles, images, fonts),
/// `frameDomains` (nested frames), `baseUriDomains` (`<base href>`).
pub const CSP_LISTS: [&str; 4] = ["connectDomains", "resourceDomains", "frameDomains", "baseUriDomains"];

/// Why a string is not an allowed CSP domain of a view.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CspDomainProblem {
    /// Not `https://`: plain `http:`, `ws:`, `data:`, a bare host, … (MA-9-2).
    NotHttps,
    /// No host after `https://`, or a host with characters a host cannot have.
    BadHost,
    /// A path, query, fragment or user info after the origin: a CSP source here is an origin.
    NotAnOrigin,
    /// `*` alone, a wildcard other than a leading `*.` label, or one over a whole top-level
    /// domain (`https://*.com`).
    Wildcard,
    /// A port that is not 1..=65535.
    BadPort,
    /// `HTTPS://…` or an upper-case host: CSP sources are written in lower case here, so that
    /// the list a host reviews reads as the origins it matches.
    NotLowercase,
}

impl CspDomainProblem {
    /// What is wrong, as a sentence fragment (`"… is not an https:// origin"` style).
    pub fn reason(self) -> &'static str {
        match self {
            CspDomainProblem::NotHttps => {
                "must be an https:// origin such as `https://cdn.example.com` (for WebSocket too: it also allows `wss://` to the same host)"
            }
            CspDomainProblem::BadHost => "has no valid host after `https://`",
            CspDomainProblem::NotAnOrigin => {
                "must be one origin only (scheme, host, optional port), without a path, query, fragment, user info or a second source"
            }
            CspDomainProblem::Wildcard => {
                "may use a wildcard only as a leading `*.` label under a registrable name, as in `https://*.example.com`"
            }
            CspDomainProblem::BadPort => "has a port outside 1..=65535",
            CspDomainProblem::NotLowercase => "must be written in lower case, as in `https://cdn.example.com`",
        }
    }
}

/// Checks one entry of a view's CSP domain lists (MA-9-2, MA-9-14, MA-13-11): an `https://`
/// origin `https://HOST[:PORT]`, where HOST is a DNS name (a leading `*.` label allowed), an
/// IPv4 address or a bracketed IPv6 address and PORT is 1..=65535.
pub fn check_csp_domain(domain: &str) -> Result<(), CspDomainProblem> {
    if domain.trim() == "*" {
        return Err(CspDomainProblem::Wildcard);
    }
    if domain.to_ascii_lowercase().starts_with("https://") && domain.bytes().any(|b| b.is_ascii_uppercase()) {
        return Err(CspDomainProblem::NotLowercase);
    }
    let Some(rest) = domain.strip_prefix("https://") else { return Err(CspDomainProblem::NotHttps) };
    if rest.contains(['/', '?', '#', '@', ';', ',']) || rest.contains(char::is_whitespace) {
        return Err(CspDomainProblem::NotAnOrigin);
    }
    let (host, port) = if let Some(v6) = rest.strip_prefix('[') {
        let Some((addr, after)) = v6.split_once(']') else { return Err(CspDomainProblem::BadHost) };
        if addr.is_empty() || !addr.bytes().all(|b| b.is_ascii_hexdigit() || b == b':' || b == b'.') {
            return Err(CspDomainProblem::BadHost);
        }
        match after {
            "" => (addr, None),
            p => match p.strip_prefix(':') {
                Some(p) => (addr, Some(p)),
                None => return Err(CspDomainProblem::BadHost),
            },
        }
    } else {
        match rest.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (rest, None),
        }
    };
    if let Some(p) = port
        && !(!p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()) && p.parse::<u16>().is_ok_and(|n| n > 0))
    {
        return Err(if p.bytes().all(|b| b.is_ascii_digit()) {
            CspDomainProblem::BadPort
        } else {
            CspDomainProblem::BadHost
        });
    }
    if rest.starts_with('[') {
        return Ok(());
    }
    let (host, wildcard) = match host.strip_prefix("*.") {
        Some(h) => (h, true),
        None => (host, false),
    };
    if host.contains('*') || (wildcard && !host.contains('.')) {
        return Err(CspDomainProblem::Wildcard);
    }
    let label = |l: &str| {
        !l.is_empty()
            && l.len() <= 63
            && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
            && !l.starts_with('-')
            && !l.ends_with('-')
    };
    if host.is_empty() || host.len() > 253 || !host.split('.').all(label) {
        return Err(CspDomainProblem::BadHost);
    }
    Ok(())
}

/// Capability categories, descriptor key `kind` (CP-2-17), in wire spelling and in the order of
/// the runtime's `CapabilityKind`.
pub const CAPABILITY_KINDS: [&str; 4] = ["animation", "notice", "progress", "interaction"];
/// Interaction types, descriptor key `interaction` (CP-2-18), as `InteractionType`.
pub const INTERACTIONS: [&str; 3] = ["none", "choice", "text"];
/// Completion conditions, descriptor key `completion` (CP-2-15), as `Completion`.
pub const COMPLETIONS: [&str; 4] = ["displayed", "animation_end", "user_response", "caller_completes"];
/// Authorisation scopes (CP-5-6), as `Scope`.
pub const SCOPES: [&str; 4] = ["discover", "animate", "notify", "interact"];
/// Cancel behaviours, descriptor key `cancelBehavior` (CP-2-15), as `CancelBehavior`.
pub const CANCEL_BEHAVIORS: [&str; 2] = ["remove", "finish_cycle"];
/// Queue modes, `queuePolicy.mode` (CP-4-10), as `QueueMode`.
pub const QUEUE_MODES: [&str; 2] = ["queue", "evictable"];
/// Fallback situations, `fallback.when` and `fallbackReason` (CP-2-29), as `FallbackReason`.
pub const FALLBACK_REASONS: [&str; 3] = ["character_unsupported", "reduced_motion", "style_unsupported"];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csp_domains() {
        // MA-9-2, MA-9-14: https origins only.
        for ok in [
            "https://cdn.example.com",
            "https://*.example.com",
            "https://api.example.com:8443",
            "https://[::1]:443",
            "https://10.0.0.1",
        ] {
            assert_eq!(check_csp_domain(ok), Ok(()), "{ok}");
        }
        let cases = [
            ("http://cdn.example.com", CspDomainProblem::NotHttps),
            ("cdn.example.com", CspDomainProblem::NotHttps),
            ("wss://x.example.com", CspDomainProblem::NotHttps),
            ("*", CspDomainProblem::Wildcard),
            ("https://*", CspDomainProblem::Wildcard),
            ("https://a.*.example.com", CspDomainProblem::Wildcard),
            ("https://cdn.example.com/app.js", CspDomainProblem::NotAnOrigin),
            ("https://user@cdn.example.com", CspDomainProblem::NotAnOrigin),
            ("https://", CspDomainProblem::BadHost),
            ("https://exa mple.com", CspDomainProblem::NotAnOrigin),
            ("https://example.com:0", CspDomainProblem::BadPort),
            ("https://example.com:99999", CspDomainProblem::BadPort),
            ("https://example.com:", CspDomainProblem::BadPort),
            ("https://example.com:x1", CspDomainProblem::BadHost),
            ("https://*.com", CspDomainProblem::Wildcard),
            ("HTTPS://CDN.EXAMPLE.COM", CspDomainProblem::NotLowercase),
            ("https://Cdn.example.com", CspDomainProblem::NotLowercase),
            ("https://a.com; script-src *", CspDomainProblem::NotAnOrigin),
            ("https://[zz]", CspDomainProblem::BadHost),
        ];
        for (bad, problem) in cases {
            assert_eq!(check_csp_domain(bad), Err(problem), "{bad}");
        }
    }

    #[test]
    fn action_names() {
        assert_eq!(check_action_name("edit_field-2"), Ok(()));
        assert_eq!(check_action_name("edit field"), Err(ActionNameProblem::Pattern));
        assert_eq!(check_action_name(""), Err(ActionNameProblem::Pattern));
        assert_eq!(check_action_name(&"a".repeat(48)), Ok(()));
        assert_eq!(check_action_name(&"a".repeat(49)), Err(ActionNameProblem::TooLong { len: 49 }));
        assert_eq!(check_action_name(&"é".repeat(30)), Err(ActionNameProblem::TooLong { len: 60 }));
    }

    #[test]
    fn humanizes() {
        assert_eq!(humanize("report_rows"), "Report rows");
        assert_eq!(humanize("dry-run"), "Dry run");
        assert_eq!(humanize("_x_"), "X");
        assert_eq!(humanize(""), "");
    }

    #[test]
    fn capability_ids() {
        for ok in ["notice.show", "vendor.com.example.wave", "a1.b_2.c", "a.1"] {
            assert_eq!(check_capability_id(ok), Ok(()), "{ok}");
        }
        for (bad, why) in [
            ("vendor.example.wave", CapabilityIdProblem::Vendor),
            ("notice", CapabilityIdProblem::OneSegment),
            ("", CapabilityIdProblem::OneSegment),
            ("Notice.show", CapabilityIdProblem::Pattern),
            ("1notice.show", CapabilityIdProblem::Pattern),
            ("notice..show", CapabilityIdProblem::Pattern),
            ("notice.show-x", CapabilityIdProblem::Pattern),
            ("notice.shöw", CapabilityIdProblem::Pattern),
        ] {
            assert_eq!(check_capability_id(bad), Err(why), "{bad}");
        }
        assert_eq!(check_capability_id(&format!("a.{}", "b".repeat(126))), Ok(()));
        assert_eq!(check_capability_id(&format!("a.{}", "b".repeat(127))), Err(CapabilityIdProblem::TooLong));
    }

    #[test]
    fn simple_ids() {
        for ok in ["pet", "pet.cat_2", "a"] {
            assert_eq!(check_simple_id(ok), Ok(()), "{ok}");
        }
        for bad in ["", "Pet", "2pet", "pet.", "pet-cat", &"a".repeat(65)] {
            assert_eq!(check_simple_id(bad), Err(SimpleIdProblem), "{bad}");
        }
    }

    #[test]
    fn semver() {
        for ok in ["0.1.0", "1.2.3", "10.20.30", "1.0.0-alpha.1", "1.0.0-0.3.7", "1.0.0+build.5", "1.0.0-rc-1+x"] {
            assert!(is_semver(ok), "{ok}");
        }
        for bad in ["0.1", "1", "01.0.0", "1.0.0-", "1.0.0-01", "1.0.0+", "v1.0.0", "1.0.0-a..b", "1.0.x", ""] {
            assert!(!is_semver(bad), "{bad}");
        }
    }

    #[test]
    fn timeout_bounds() {
        assert_eq!(check_timeout_bounds(1, MAX_TIMEOUT_CAP_MS), Ok(()));
        assert_eq!(check_timeout_bounds(0, 10), Err(TimeoutBoundsProblem::ZeroMin));
        assert_eq!(check_timeout_bounds(10, 9), Err(TimeoutBoundsProblem::MinAboveMax));
        assert_eq!(check_timeout_bounds(1, MAX_TIMEOUT_CAP_MS + 1), Err(TimeoutBoundsProblem::AboveCap));
    }
}
