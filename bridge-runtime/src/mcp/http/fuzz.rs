//! The HTTP transport's pre-body checks on one arbitrary request head, for the `http_head` fuzz
//! target and its corpus replay test (`__internals::http_head`, feature `fuzzing` with `http`).

use super::HttpOptions;
use super::access::Access;
use super::token::Tokens;
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode, Uri, Version, header};

/// The port the checked server is taken to be bound to.
const PORT: u16 = 4000;
/// The named tokens the checked server accepts, `(label, secret)`.
const TOKENS: [(&str, &str); 2] =
    [("planner", "planner-secret-0123456789"), ("reviewer", "reviewer-secret-0123456789")];
/// An origin the checked server trusts besides its own.
const TRUSTED: &str = "http://localhost:5173";

/// What one head came to.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct HttpHeadReport {
    /// Header lines kept (a valid name and value).
    pub headers: usize,
    /// Refused for its `Host`, request target or `Origin` (403, or 400 below).
    pub forbidden: bool,
    /// Of those, refused as a malformed head (400: no `Host`, two, or one of a bad grammar).
    pub malformed: bool,
    /// Passed `Host` and `Origin`, refused for the token (401).
    pub unauthorized: bool,
    /// Passed every check, with this token's index in the configured list.
    pub admitted_as: Option<usize>,
}

/// Reads `data` as a request head (lines split at `\n`, a trailing `\r` dropped; the first line
/// is the request line, the others `name: value`, invalid ones skipped), runs the `Host` and
/// `Origin` check and the token check as the transport does before reading a body, and checks
/// what must hold: the same answer twice; an admitted head has exactly one `Host`, loopback and
/// without userinfo, an origin-form target or an absolute-form one naming that `Host`, no
/// `Origin` or exactly one that is the server's own or the trusted one, and exactly one
/// configured token as `Bearer`; a refused one lacks one of those. Panics when a property
/// breaks.
pub fn http_head(data: &[u8]) -> HttpHeadReport {
    let mut options = HttpOptions::default().trust_origin(TRUSTED);
    options.bound = Some(([127, 0, 0, 1], PORT).into());
    for (label, secret) in TOKENS {
        options = options.named_token(label, secret);
    }
    let access = Access::new(&options);
    let tokens = Tokens::resolve(&options, Some(PORT)).expect("configured tokens are valid");

    let text = String::from_utf8_lossy(data);
    let mut lines = text.split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l));
    let uri = lines
        .next()
        .and_then(|request_line| request_line.split(' ').nth(1))
        .and_then(|target| target.parse::<Uri>().ok())
        .unwrap_or_else(|| Uri::from_static("/mcp"));
    let mut headers = HeaderMap::new();
    let mut report = HttpHeadReport::default();
    for line in lines {
        let Some((name, value)) = line.split_once(':') else { continue };
        let (Ok(name), Ok(value)) =
            (HeaderName::from_bytes(name.trim().as_bytes()), HeaderValue::from_str(value.trim()))
        else {
            continue;
        };
        headers.append(name, value);
        report.headers += 1;
    }

    let access_answer = access.check(Version::HTTP_11, &uri, &headers);
    let again = access.check(Version::HTTP_11, &uri, &headers);
    assert_eq!(access_answer, again, "the Host/Origin check is deterministic");
    let token = tokens.check(&headers);
    assert_eq!(token, tokens.check(&headers), "the token check is deterministic");
    match access_answer {
        Err(status) => {
            assert!(matches!(status, StatusCode::FORBIDDEN | StatusCode::BAD_REQUEST), "{status}");
            report.forbidden = true;
            report.malformed = status == StatusCode::BAD_REQUEST;
            return report;
        }
        Ok(()) => check_admitted_head(&uri, &headers),
    }
    // Exactly one Authorization header may admit: two never do, whatever they hold.
    let single = headers.get_all(header::AUTHORIZATION).iter().count() == 1;
    let presented = headers.get(header::AUTHORIZATION).and_then(|v| v.to_str().ok()).filter(|_| single);
    let expected = TOKENS.iter().position(|(_, secret)| {
        presented.is_some_and(|p| {
            p.split_once(' ')
                .is_some_and(|(scheme, rest)| scheme.eq_ignore_ascii_case("bearer") && rest.trim() == *secret)
        })
    });
    match token {
        None => {
            assert_eq!(expected, None, "a configured token was refused: {presented:?}");
            report.unauthorized = true;
        }
        Some(label) => {
            let index = TOKENS.iter().position(|(l, _)| *l == &*label.0).expect("a configured label");
            assert_eq!(Some(index), expected, "admitted with {presented:?}");
            report.admitted_as = Some(index);
        }
    }
    report
}

/// What a head that passed `Host` and `Origin` must look like.
fn check_admitted_head(uri: &Uri, headers: &HeaderMap) {
    assert_eq!(headers.get_all(header::HOST).iter().count(), 1, "an admitted HTTP/1.1 head has one Host");
    assert!(headers.get_all(header::ORIGIN).iter().count() <= 1, "an admitted head has at most one Origin");
    let host = headers
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<axum::http::uri::Authority>().ok())
        .expect("an admitted Host is an authority");
    assert!(!host.as_str().contains('@'), "admitted Host with userinfo {host}");
    let name = canonical_host(host.host());
    assert!(["localhost", "127.0.0.1", "::1"].contains(&name.as_str()), "admitted Host {host}");
    if let Some(target) = uri.authority() {
        assert!(!target.as_str().contains('@'), "admitted target with userinfo {uri}");
        let same = canonical_host(target.host()) == name && target.port_u16() == host.port_u16();
        assert!(same, "an admitted absolute-form target names the Host {host}: {uri}");
    }
    if let Some(origin) = headers.get(header::ORIGIN) {
        let text = origin.to_str().expect("an admitted Origin is text");
        let uri: Uri = text.trim().parse().expect("an admitted Origin parses as a URI");
        let authority = uri.authority().expect("an admitted Origin has a host");
        let host = authority.host().trim_start_matches('[').trim_end_matches(']').to_ascii_lowercase();
        let scheme = uri.scheme_str().map(str::to_ascii_lowercase);
        let own = ["localhost", "127.0.0.1", "::1"].contains(&host.as_str()) && authority.port_u16() == Some(PORT);
        let trusted = host == "localhost" && authority.port_u16() == Some(5173);
        assert!(scheme.as_deref() == Some("http") && (own || trusted), "admitted Origin {text}");
        assert!(!authority.as_str().contains('@'), "admitted Origin with userinfo {text}");
        assert!(uri.path_and_query().is_none_or(|p| p.as_str() == "/" || p.as_str().is_empty()), "{text}");
    }
}

/// A host as compared: an IP literal in its canonical spelling, a name lowercased.
fn canonical_host(host: &str) -> String {
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    bare.parse::<std::net::IpAddr>().map_or_else(|_| bare.to_ascii_lowercase(), |ip| ip.to_string())
}
