//! Who may send a request at all, decided from its head before its body is read: `Host` (and
//! the request target), then `Origin`; the token and the connection cap follow (`token.rs`,
//! `admission.rs`). A refusal is an HTTP status with no body (a JSON-RPC body would need the
//! body's `id`, and a notification must never get one, MA-8-4).
//!
//! The head is read strictly, so that no two parts of the stack can read it differently:
//! exactly one `Host` (RFC 9112 §3.2; the URI's authority stands in for HTTP/2's
//! `:authority`), of the grammar `reg-name / IPv4 / "[" IPv6 "]"` with an optional port and
//! nothing else (no userinfo, no path, no percent-encoding; 400 otherwise); a request target in
//! origin form (`/mcp`), or in absolute form naming exactly the `Host` (403 otherwise); at most
//! one `Origin`, and that one the exact serialization of an origin, `scheme://host[:port]` with
//! nothing after it, not even a `/` (403 otherwise, RFC 6454 §6.2).

use super::HttpOptions;
use axum::http::{HeaderMap, StatusCode, Uri, Version, header};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Host names of the loopback interface as a `Host` header or an origin spells them (IPv6
/// without brackets).
const LOOPBACK_NAMES: [&str; 3] = ["localhost", "127.0.0.1", "::1"];

/// A `Host` (or request-target authority) as compared: lowercase host (IPv6 without brackets)
/// and the port, when one is given.
#[derive(Debug, Clone, PartialEq, Eq)]
struct HostPort {
    host: String,
    port: Option<u16>,
}

impl HostPort {
    /// Parses `host [":" port]` strictly: `host` a reg-name of letters, digits, `-`, `.` and `_`
    /// (IPv4 literals included), or `[IPv6]`; `port` one to five digits up to 65535. `None` for
    /// anything else: userinfo (`a@b`), a second colon, white space, an empty host or port.
    fn parse(value: &[u8]) -> Option<Self> {
        let value = std::str::from_utf8(value).ok()?;
        let (host, port) = if let Some(rest) = value.strip_prefix('[') {
            let (literal, after) = rest.split_once(']')?;
            let ip: Ipv6Addr = literal.parse().ok()?;
            (ip.to_string(), after)
        } else {
            let end = value.find(':').unwrap_or(value.len());
            let (name, after) = value.split_at(end);
            let name_ok =
                !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_'));
            if !name_ok {
                return None;
            }
            // An IPv4-looking name must be a valid IPv4 literal (no `127.0.0.01`, `1.2.3.4.5`).
            if name.bytes().all(|b| b.is_ascii_digit() || b == b'.') && name.parse::<Ipv4Addr>().is_err() {
                return None;
            }
            (name.to_ascii_lowercase(), after)
        };
        let port = match port.strip_prefix(':') {
            None if port.is_empty() => None,
            None => return None,
            Some(digits) => {
                if digits.is_empty() || digits.len() > 5 || !digits.bytes().all(|b| b.is_ascii_digit()) {
                    return None;
                }
                Some(digits.parse::<u16>().ok()?)
            }
        };
        Some(Self { host, port })
    }
}

/// An origin as compared: lowercase scheme and host (IPv6 without brackets) and a port (the
/// scheme's default when the serialization omits it).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Origin {
    scheme: String,
    host: String,
    port: Option<u16>,
}

impl Origin {
    /// Parses `scheme://host[:port]` (no path beyond `/`); `None` for anything else, `null`
    /// included.
    fn parse(value: &str) -> Option<Self> {
        let uri: Uri = value.trim().parse().ok()?;
        let scheme = uri.scheme_str()?.to_ascii_lowercase();
        let authority = uri.authority()?;
        if uri.path_and_query().is_some_and(|p| p.as_str() != "/" && !p.as_str().is_empty())
            || authority.as_str().contains('@')
        {
            return None;
        }
        let default_port = match scheme.as_str() {
            "http" => Some(80),
            "https" => Some(443),
            _ => None,
        };
        Some(Self { host: normalize_host(authority.host()), port: authority.port_u16().or(default_port), scheme })
    }
}

impl Origin {
    /// An `Origin` header: exactly `scheme://host[:port]` (RFC 6454's serialization), no path
    /// (not even `/`), query, fragment or surrounding space; `None` otherwise.
    fn parse_header(value: &str) -> Option<Self> {
        let (_, rest) = value.split_once("://")?;
        if rest.is_empty() || rest.contains(['/', '?', '#']) || value.trim() != value {
            return None;
        }
        Self::parse(value)
    }
}

fn normalize_host(host: &str) -> String {
    host.trim_start_matches('[').trim_end_matches(']').to_ascii_lowercase()
}

/// The host a request is for: its one `Host` header, which an absolute-form target (or
/// HTTP/2's `:authority`) must name exactly; see the module docs.
fn request_host(version: Version, uri: &Uri, headers: &HeaderMap) -> Result<HostPort, StatusCode> {
    let mut hosts = headers.get_all(header::HOST).iter();
    let (first, second) = (hosts.next(), hosts.next());
    if second.is_some() {
        tracing::warn!("refused an HTTP request with more than one Host header");
        return Err(StatusCode::BAD_REQUEST);
    }
    let header = match first {
        Some(value) => match HostPort::parse(value.as_bytes()) {
            Some(host) => Some(host),
            None => {
                tracing::warn!(host = ?value, "refused an HTTP request whose Host is not host[:port]");
                return Err(StatusCode::BAD_REQUEST);
            }
        },
        None => None,
    };
    // Origin form (`/mcp`) has no authority; absolute form (`http://host/mcp`) and HTTP/2 do.
    let target = match uri.authority() {
        None => None,
        Some(authority) => {
            let scheme_ok = matches!(uri.scheme_str(), Some("http" | "https"));
            match HostPort::parse(authority.as_str().as_bytes()).filter(|_| scheme_ok) {
                Some(target) => Some(target),
                None => {
                    tracing::warn!(target = %uri, "refused an HTTP request whose target names another host");
                    return Err(StatusCode::FORBIDDEN);
                }
            }
        }
    };
    match (header, target) {
        (Some(header), Some(target)) if header != target => {
            tracing::warn!(target = %uri, "refused an HTTP request whose target names another host than Host");
            Err(StatusCode::FORBIDDEN)
        }
        (Some(header), _) => Ok(header),
        (None, Some(target)) if version >= Version::HTTP_2 => Ok(target),
        (None, _) => {
            tracing::warn!("refused an HTTP request without a Host header");
            Err(StatusCode::BAD_REQUEST)
        }
    }
}

/// The `Host`/`Origin` rules of one router.
#[derive(Debug)]
pub(super) struct Access {
    allow_non_loopback: bool,
    /// The bound address, when [`serve_http_on_with`](super::serve_http_on_with) knows it.
    bound: Option<(IpAddr, u16)>,
    /// [`HttpOptions::trusted_origins`], parsed (unparseable entries never match).
    trusted: Vec<Origin>,
}

impl Access {
    pub(super) fn new(options: &HttpOptions) -> Self {
        let trusted = options
            .trusted_origins
            .iter()
            .filter_map(|raw| {
                let parsed = Origin::parse(raw);
                if parsed.is_none() {
                    tracing::warn!(origin = raw.as_str(), "ignoring a trusted origin that is not scheme://host:port");
                }
                parsed
            })
            .collect();
        Self {
            allow_non_loopback: options.allow_non_loopback,
            bound: options.bound.map(|addr| (addr.ip(), addr.port())),
            trusted,
        }
    }

    /// The origins rmcp's own check (the second line) allows: the server's own spellings for
    /// the bound port, or any loopback port when the port is not known here, plus the trusted.
    pub(super) fn rmcp_origins(&self) -> Vec<String> {
        let port = self.bound.map_or_else(|| "*".to_owned(), |(_, port)| port.to_string());
        let mut origins: Vec<String> =
            ["localhost", "127.0.0.1", "[::1]"].iter().map(|host| format!("http://{host}:{port}")).collect();
        if let Some((ip, port)) = self.bound.filter(|(ip, _)| !ip.is_loopback() && !ip.is_unspecified()) {
            origins.push(match ip {
                IpAddr::V4(v4) => format!("http://{v4}:{port}"),
                IpAddr::V6(v6) => format!("http://[{v6}]:{port}"),
            });
        }
        origins.extend(self.trusted.iter().map(|o| match o.port {
            Some(port) if o.host.contains(':') => format!("{}://[{}]:{port}", o.scheme, o.host),
            Some(port) => format!("{}://{}:{port}", o.scheme, o.host),
            None => format!("{}://{}", o.scheme, o.host),
        }));
        origins
    }

    /// `Host` and the request target, then `Origin`: `Err(400)` for a malformed head (no
    /// `Host`, two, or one of a bad grammar), `Err(403)` for a refused host, target or origin.
    pub(super) fn check(&self, version: Version, uri: &Uri, headers: &HeaderMap) -> Result<(), StatusCode> {
        let host = request_host(version, uri, headers)?;
        if !self.allow_non_loopback && !LOOPBACK_NAMES.contains(&host.host.as_str()) {
            tracing::warn!(host = %host.host, "refused an HTTP request: Host is not a loopback name (DNS rebinding?)");
            return Err(StatusCode::FORBIDDEN);
        }
        let mut origins = headers.get_all(header::ORIGIN).iter();
        let Some(origin) = origins.next() else {
            return Ok(());
        };
        if origins.next().is_some() {
            tracing::warn!("refused an HTTP request with more than one Origin header");
            return Err(StatusCode::FORBIDDEN);
        }
        let parsed = origin.to_str().ok().and_then(Origin::parse_header);
        if parsed.as_ref().is_some_and(|o| self.is_own(o, host.port) || self.trusted.contains(o)) {
            return Ok(());
        }
        tracing::warn!(origin = ?origin, "refused an HTTP request from an untrusted Origin");
        Err(StatusCode::FORBIDDEN)
    }

    /// `origin` is this server's: `http`, a loopback name or the bound address, and the bound
    /// port (when not known: the port the request's `Host` names, 80 when it names none).
    fn is_own(&self, origin: &Origin, host_port: Option<u16>) -> bool {
        let port = self.bound.map(|(_, port)| port).or(host_port).unwrap_or(80);
        let bound_host = self.bound.filter(|(ip, _)| !ip.is_unspecified()).map(|(ip, _)| ip.to_string());
        origin.scheme == "http"
            && origin.port == Some(port)
            && (LOOPBACK_NAMES.contains(&origin.host.as_str()) || bound_host.as_deref() == Some(origin.host.as_str()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn headers(host: &str, origin: Option<&str>) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(header::HOST, HeaderValue::from_str(host).unwrap());
        if let Some(origin) = origin {
            headers.insert(header::ORIGIN, HeaderValue::from_str(origin).unwrap());
        }
        headers
    }

    fn bound(port: u16) -> Access {
        let mut options = HttpOptions::default().trust_origin("https://app.example:8443");
        options.bound = Some(([127, 0, 0, 1], port).into());
        Access::new(&options)
    }

    #[test]
    fn own_origin_in_every_loopback_spelling_and_nothing_else() {
        let access = bound(4000);
        let uri = Uri::from_static("/mcp");
        let check = |host: &str, origin: Option<&str>| access.check(Version::HTTP_11, &uri, &headers(host, origin));
        assert_eq!(check("127.0.0.1:4000", None), Ok(()));
        for own in ["http://127.0.0.1:4000", "http://localhost:4000", "http://[::1]:4000", "HTTP://LocalHost:4000"] {
            assert_eq!(check("127.0.0.1:4000", Some(own)), Ok(()), "{own}");
        }
        assert_eq!(check("localhost:4000", Some("https://app.example:8443")), Ok(()));
        for other in [
            "http://localhost:4001",
            "https://localhost:4000",
            "http://localhost",
            "null",
            "http://evil.example:4000",
            "http://localhost:4000/page",
            "http://localhost:4000/",
            "http://127.0.0.1:4000?x",
            "http://user@localhost:4000",
            "",
        ] {
            assert_eq!(check("127.0.0.1:4000", Some(other)), Err(StatusCode::FORBIDDEN), "{other}");
        }
        assert_eq!(check("evil.example:4000", None), Err(StatusCode::FORBIDDEN));
        assert_eq!(check("127.0.0.2:4000", None), Err(StatusCode::FORBIDDEN));
    }

    #[test]
    fn port_from_host_when_mounted_elsewhere() {
        let access = Access::new(&HttpOptions::default());
        let uri = Uri::from_static("/mcp");
        let v = Version::HTTP_11;
        assert_eq!(access.check(v, &uri, &headers("localhost:5000", Some("http://127.0.0.1:5000"))), Ok(()));
        assert_eq!(
            access.check(v, &uri, &headers("localhost:5000", Some("http://127.0.0.1:5001"))),
            Err(StatusCode::FORBIDDEN)
        );
        assert!(access.rmcp_origins().contains(&"http://localhost:*".to_owned()));
        assert_eq!(
            bound(4000).rmcp_origins()[..3],
            ["http://localhost:4000", "http://127.0.0.1:4000", "http://[::1]:4000"]
        );
    }

    #[test]
    fn host_grammar_is_strict() {
        let parse = |v: &str| HostPort::parse(v.as_bytes()).map(|h| (h.host, h.port));
        assert_eq!(parse("LocalHost:80"), Some(("localhost".into(), Some(80))));
        assert_eq!(parse("127.0.0.1"), Some(("127.0.0.1".into(), None)));
        assert_eq!(parse("[::1]:4000"), Some(("::1".into(), Some(4000))));
        assert_eq!(parse("[0:0:0:0:0:0:0:1]"), Some(("::1".into(), None)));
        assert_eq!(parse("my_host.example"), Some(("my_host.example".into(), None)));
        for bad in [
            "",
            ":80",
            "evil.com@127.0.0.1",
            "user@localhost:80",
            "127.0.0.1:80:80",
            "localhost:",
            "localhost:65536",
            "localhost:123456",
            "localhost:+80",
            "local host",
            "localhost/mcp",
            "[::1",
            "[::1]x",
            "[127.0.0.1]",
            "127.0.0.01",
            "1.2.3.4.5",
            "%6cocalhost",
            "::1",
        ] {
            assert_eq!(parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn one_host_and_an_origin_form_target() {
        let access = bound(4000);
        let own = "127.0.0.1:4000";
        let check = |target: &str, hosts: &[&str], version: Version| {
            let mut map = HeaderMap::new();
            for host in hosts {
                map.append(header::HOST, HeaderValue::from_str(host).unwrap());
            }
            access.check(version, &target.parse().unwrap(), &map)
        };
        let v = Version::HTTP_11;
        assert_eq!(check("/mcp", &[own], v), Ok(()));
        assert_eq!(check("/mcp", &[own, own], v), Err(StatusCode::BAD_REQUEST));
        assert_eq!(check("/mcp", &[], v), Err(StatusCode::BAD_REQUEST));
        assert_eq!(check("http://127.0.0.1:4000/mcp", &[own], v), Ok(()));
        assert_eq!(check("http://evil.example/mcp", &[own], v), Err(StatusCode::FORBIDDEN));
        assert_eq!(check("http://localhost:4000/mcp", &[own], v), Err(StatusCode::FORBIDDEN));
        assert_eq!(check("http://u@127.0.0.1:4000/mcp", &[own], v), Err(StatusCode::FORBIDDEN));
        // HTTP/2: `:authority` stands in for Host; HTTP/1.1 needs the header.
        assert_eq!(check("http://127.0.0.1:4000/mcp", &[], Version::HTTP_2), Ok(()));
        assert_eq!(check("http://127.0.0.1:4000/mcp", &[], v), Err(StatusCode::BAD_REQUEST));
        assert_eq!(check("http://evil.example/mcp", &[], Version::HTTP_2), Err(StatusCode::FORBIDDEN));
    }
}
