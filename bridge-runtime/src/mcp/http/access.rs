//! Who may send a request at all, decided from its head before its body is read: `Host`, then
//! `Origin`, then the connection cap. A refusal is an HTTP status with no body (a JSON-RPC body
//! would need the body's `id`, and a notification must never get one, MA-8-4).

use super::HttpOptions;
use axum::http::{HeaderMap, StatusCode, Uri, header};
use std::net::IpAddr;

/// Host names of the loopback interface as a `Host` header or an origin spells them (IPv6
/// without brackets).
const LOOPBACK_NAMES: [&str; 3] = ["localhost", "127.0.0.1", "::1"];

/// Per-connection facts [`serve_http_on_with`](super::serve_http_on_with) attaches to each
/// request (absent when the router is mounted in an app's own server).
#[derive(Debug, Clone, Copy)]
pub(super) struct Connection {
    /// Accepted past the connection cap: its request is refused with 503 once the checks
    /// before the cap have passed.
    pub(super) over_cap: bool,
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

fn normalize_host(host: &str) -> String {
    host.trim_start_matches('[').trim_end_matches(']').to_ascii_lowercase()
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

    /// `Host`, then `Origin`: `Err(403)` when either is refused.
    pub(super) fn check(&self, uri: &Uri, headers: &HeaderMap) -> Result<(), StatusCode> {
        // HTTP/1.1 always has `Host`; the URI's authority stands in for HTTP/2's `:authority`.
        let host = headers
            .get(header::HOST)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<axum::http::uri::Authority>().ok())
            .or_else(|| uri.authority().cloned());
        let Some(host) = host else {
            tracing::warn!("refused an HTTP request without a usable Host header");
            return Err(StatusCode::FORBIDDEN);
        };
        let host_name = normalize_host(host.host());
        if !self.allow_non_loopback && !LOOPBACK_NAMES.contains(&host_name.as_str()) {
            tracing::warn!(host = %host, "refused an HTTP request: Host is not a loopback name (DNS rebinding?)");
            return Err(StatusCode::FORBIDDEN);
        }
        let Some(origin) = headers.get(header::ORIGIN) else {
            return Ok(());
        };
        let parsed = origin.to_str().ok().and_then(Origin::parse);
        if parsed.as_ref().is_some_and(|o| self.is_own(o, host.port_u16()) || self.trusted.contains(o)) {
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
        let check = |host: &str, origin: Option<&str>| access.check(&uri, &headers(host, origin));
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
        assert_eq!(access.check(&uri, &headers("localhost:5000", Some("http://127.0.0.1:5000"))), Ok(()));
        assert_eq!(
            access.check(&uri, &headers("localhost:5000", Some("http://127.0.0.1:5001"))),
            Err(StatusCode::FORBIDDEN)
        );
        assert!(access.rmcp_origins().contains(&"http://localhost:*".to_owned()));
        assert_eq!(
            bound(4000).rmcp_origins()[..3],
            ["http://localhost:4000", "http://127.0.0.1:4000", "http://[::1]:4000"]
        );
    }
}
