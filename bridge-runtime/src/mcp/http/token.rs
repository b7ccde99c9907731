//! The access token of the HTTP transport: where it comes from at start-up, and the check of
//! `Authorization: Bearer <token>` on every request (after `Host` and `Origin`, before the
//! connection cap and before the body is read).

use super::{HttpOptions, TokenSource};
use crate::mcp::ServeError;
use axum::http::{HeaderMap, header};
use std::path::PathBuf;
use std::sync::Arc;
use subtle::ConstantTimeEq;

/// The environment variable bridge reads an HTTP access token from when the app configured none.
pub const TOKEN_ENV: &str = "BRIDGE_MCP_TOKEN";
/// Fewest characters of a configured token (a generated one has 64).
const MIN_TOKEN_CHARS: usize = 16;
/// Most characters of a configured token.
const MAX_TOKEN_CHARS: usize = 1024;

/// The label of the named token a request over HTTP presented. The transport puts it into the
/// request's extensions; rmcp hands the request's `http::request::Parts` to the handler in its
/// request context, so a dispatcher reads it as
/// `ctx.extensions.get::<http::request::Parts>().and_then(|p| p.extensions.get::<TokenLabel>())`.
/// The request's `tracing` span (`mcp_http`) carries it as `agent`. A token set with
/// [`HttpOptions::token`], read from [`TOKEN_ENV`] or a file, or generated, is labelled
/// `"default"`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenLabel(pub Arc<str>);

/// The tokens a router accepts: empty means the app opted out ([`HttpOptions::no_token`]).
pub(super) struct Tokens {
    entries: Vec<(TokenLabel, Vec<u8>)>,
    /// The file a generated token was written to.
    file: Option<Arc<TokenFile>>,
}

impl std::fmt::Debug for Tokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the secrets.
        f.debug_list().entries(self.entries.iter().map(|(label, _)| &label.0)).finish()
    }
}

impl Tokens {
    /// Resolves the options' token source at start-up: the app's tokens, else [`TOKEN_ENV`]
    /// when set, else the app's token file, else a generated token (printed to stderr and
    /// written to a `0600` file in a private directory). `port` names the generated file.
    pub(super) fn resolve(options: &HttpOptions, port: Option<u16>) -> Result<Self, ServeError> {
        let default =
            |secret: String| Self { entries: vec![(TokenLabel("default".into()), secret.into_bytes())], file: None };
        match &options.token_source {
            TokenSource::Disabled => Ok(Self { entries: Vec::new(), file: None }),
            TokenSource::Tokens(tokens) => {
                let mut entries = Vec::with_capacity(tokens.len());
                for (label, secret) in tokens {
                    check_token(secret, &format!("the token labelled {label:?}"))?;
                    entries.push((TokenLabel(label.as_str().into()), secret.clone().into_bytes()));
                }
                Ok(Self { entries, file: None })
            }
            source => {
                if let Some(secret) = std::env::var_os(TOKEN_ENV) {
                    let secret = secret
                        .into_string()
                        .map_err(|_| ServeError::Token(format!("{TOKEN_ENV} is not valid UTF-8")))?;
                    check_token(&secret, TOKEN_ENV)?;
                    return Ok(default(secret));
                }
                if let TokenSource::File(path) = source {
                    let text = std::fs::read_to_string(path).map_err(|e| {
                        ServeError::Token(format!("cannot read the token file {}: {e}", path.display()))
                    })?;
                    let secret = text.trim().to_owned();
                    check_token(&secret, &format!("the token in {}", path.display()))?;
                    return Ok(default(secret));
                }
                let secret = generate()?;
                let file = write_token_file(&secret, port)?;
                eprintln!(
                    "bridge: MCP over HTTP needs the header `Authorization: Bearer {secret}` \
                     (token also in {}, readable by this user only, deleted when the server stops; \
                     set {TOKEN_ENV} to choose it)",
                    file.path.display()
                );
                Ok(Self { file: Some(Arc::new(file)), ..default(secret) })
            }
        }
    }

    /// The generated token's file, if the token was generated.
    pub(super) fn file(&self) -> Option<Arc<TokenFile>> {
        self.file.clone()
    }

    /// No token is required.
    pub(super) fn is_disabled(&self) -> bool {
        self.entries.is_empty()
    }

    /// The label of the token `headers` present, `None` when the header is missing, given more
    /// than once, not `Bearer`, or names no token. Every configured token is compared, in constant time each.
    pub(super) fn check(&self, headers: &HeaderMap) -> Option<TokenLabel> {
        let mut values = headers.get_all(header::AUTHORIZATION).iter();
        let (first, second) = (values.next(), values.next());
        if second.is_some() {
            // Two credentials: no "first wins" (a proxy and the server could read different ones).
            return None;
        }
        let offered = first
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split_once(' '))
            .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
            .map(|(_, token)| token.trim().as_bytes())?;
        let mut found = None;
        for (label, secret) in &self.entries {
            if bool::from(offered.ct_eq(secret)) && found.is_none() {
                found = Some(label.clone());
            }
        }
        found
    }
}

/// A configured token must be 16 to 1,024 visible ASCII characters (it travels in a header).
fn check_token(secret: &str, what: &str) -> Result<(), ServeError> {
    let chars = secret.chars().count();
    if !(MIN_TOKEN_CHARS..=MAX_TOKEN_CHARS).contains(&chars) {
        return Err(ServeError::Token(format!(
            "{what} has {chars} characters; an access token needs {MIN_TOKEN_CHARS} to {MAX_TOKEN_CHARS}"
        )));
    }
    if !secret.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(ServeError::Token(format!(
            "{what} must be visible ASCII characters (no spaces or control characters)"
        )));
    }
    Ok(())
}

/// 32 random bytes from the operating system, as 64 lowercase hex digits.
fn generate() -> Result<String, ServeError> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes)
        .map_err(|e| ServeError::Token(format!("cannot generate an access token: no OS randomness ({e})")))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// The private directory of generated token files: `$XDG_RUNTIME_DIR/bridge-mcp`, or
/// `<temp dir>/bridge-mcp-<uid>` (created `0700`, refused when it exists otherwise; elsewhere than
/// Unix `<temp dir>/bridge-mcp`).
pub fn token_dir() -> PathBuf {
    #[cfg(unix)]
    return crate::private_dir::runtime_dir("bridge-mcp");
    #[cfg(not(unix))]
    std::env::temp_dir().join("bridge-mcp")
}

/// The file a generated token was written to, deleted when this is dropped if it still holds
/// what was written (never a file the app named, never one that another writer replaced).
pub(super) struct TokenFile {
    path: PathBuf,
    contents: String,
}

impl TokenFile {
    /// Deletes the file if it still holds this token; idempotent.
    pub(super) fn remove(&self) {
        match std::fs::read(&self.path) {
            Ok(found) if bool::from(found.ct_eq(self.contents.as_bytes())) => {
                if let Err(e) = std::fs::remove_file(&self.path) {
                    tracing::warn!(path = %self.path.display(), error = %e, "cannot delete the generated token's file");
                }
            }
            Ok(_) => {
                tracing::debug!(path = %self.path.display(), "the token file holds another token now; left in place");
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => tracing::warn!(path = %self.path.display(), error = %e, "cannot read the generated token's file"),
        }
    }
}

impl Drop for TokenFile {
    fn drop(&mut self) {
        self.remove();
    }
}

impl std::fmt::Debug for TokenFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The path only, never the secret.
        f.debug_struct("TokenFile").field("path", &self.path).finish_non_exhaustive()
    }
}

/// Deletes its token file (if any) when dropped, whoever else still holds it.
pub(super) struct RemoveOnDrop(pub(super) Option<Arc<TokenFile>>);

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        if let Some(file) = &self.0 {
            file.remove();
        }
    }
}

/// Writes `secret` to `<token_dir>/mcp-<pid>[-<port>].token`, readable and writable by this user
/// only.
fn write_token_file(secret: &str, port: Option<u16>) -> Result<TokenFile, ServeError> {
    let dir = token_dir();
    let name = match port {
        Some(port) => format!("mcp-{}-{port}.token", std::process::id()),
        None => format!("mcp-{}.token", std::process::id()),
    };
    let path = dir.join(name);
    let contents = format!("{secret}\n");
    #[cfg(unix)]
    let written = crate::private_dir::write_private_file(&dir, &path, contents.as_bytes());
    #[cfg(not(unix))]
    let written = std::fs::create_dir_all(&dir).and_then(|()| std::fs::write(&path, contents));
    written.map_err(|e| ServeError::Token(format!("cannot write the generated token to {}: {e}", path.display())))?;
    Ok(TokenFile { path, contents })
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn tokens() -> Tokens {
        let options = HttpOptions::default()
            .named_token("alice", "alice-secret-0123456789")
            .named_token("bob", "bob-secret-0123456789ab");
        Tokens::resolve(&options, None).unwrap()
    }

    fn with(auth: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(header::AUTHORIZATION, HeaderValue::from_str(auth).unwrap());
        headers
    }

    #[test]
    fn bearer_only_and_each_label() {
        let tokens = tokens();
        assert_eq!(tokens.check(&with("Bearer alice-secret-0123456789")), Some(TokenLabel("alice".into())));
        assert_eq!(tokens.check(&with("bearer bob-secret-0123456789ab")), Some(TokenLabel("bob".into())));
        for wrong in [
            "Bearer alice-secret-012345678",
            "Bearer alice-secret-0123456789x",
            "Basic alice-secret-0123456789",
            "alice-secret-0123456789",
            "Bearer",
            "Bearer ",
        ] {
            assert_eq!(tokens.check(&with(wrong)), None, "{wrong}");
        }
        assert_eq!(tokens.check(&HeaderMap::new()), None);
        assert!(!format!("{tokens:?}").contains("secret"), "Debug never shows a secret");
    }

    #[test]
    fn weak_tokens_are_refused_at_start() {
        for weak in ["short", "has spaces in the token!", "tab\tin-the-token-here"] {
            let options = HttpOptions::default().token(weak);
            assert!(matches!(Tokens::resolve(&options, None), Err(ServeError::Token(_))), "{weak}");
        }
    }

    #[test]
    fn generated_tokens_are_64_hex_digits() {
        let a = generate().unwrap();
        assert_eq!(a.len(), 64);
        assert!(a.bytes().all(|b| b.is_ascii_hexdigit()));
        assert_ne!(a, generate().unwrap());
    }
}
