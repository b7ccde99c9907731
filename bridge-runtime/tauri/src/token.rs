//! The MCP access token of a Tauri app: from the options, the environment, or a `0600` file in
//! the app's config directory (generated there on first start and kept across starts).

use crate::Error;
use bridge_runtime::mcp::TOKEN_ENV;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Where the token in force came from. Serialized in lower case: `"options"`, `"env"`, `"file"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TokenSource {
    /// [`Options::token`](crate::Options::token).
    Options,
    /// The environment variable `BRIDGE_MCP_TOKEN`.
    Env,
    /// The token file ([`Options::token_file`](crate::Options::token_file), by default
    /// `mcp-token` in the app's config directory).
    File,
}

/// Resolves the token: `explicit` (the options'), else `BRIDGE_MCP_TOKEN`, else the file at
/// `file()` (read; or, when it does not exist, generated — 32 random bytes, 64 hex digits — and
/// written readable by this user only), which is then returned too. Errors: [`Error::Token`] for
/// a token that is not 16 to 1,024 visible ASCII characters (the HTTP server's rule),
/// [`Error::Io`] for the file, `file`'s own.
pub(crate) fn resolve(
    explicit: Option<&str>,
    file: impl FnOnce() -> Result<PathBuf, Error>,
) -> Result<(String, TokenSource, Option<PathBuf>), Error> {
    let (token, source, path) = if let Some(t) = explicit {
        (t.to_owned(), TokenSource::Options, None)
    } else if let Some(t) = std::env::var_os(TOKEN_ENV) {
        let t = t.into_string().map_err(|_| Error::Token(format!("{TOKEN_ENV} is not valid UTF-8")))?;
        (t, TokenSource::Env, None)
    } else {
        let path = file()?;
        (from_file(&path)?, TokenSource::File, Some(path))
    };
    check(&token)?;
    Ok((token, source, path))
}

/// The HTTP server's rule for a secret: 16 to 1,024 visible ASCII characters.
fn check(token: &str) -> Result<(), Error> {
    if !(16..=1024).contains(&token.len()) || !token.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(Error::Token("the MCP token must be 16 to 1,024 visible ASCII characters".into()));
    }
    Ok(())
}

/// Reads the token file, or creates it with a new token.
fn from_file(path: &Path) -> Result<String, Error> {
    match std::fs::read_to_string(path) {
        Ok(text) => {
            private(path)?;
            Ok(text.trim().to_owned())
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => create(path),
        Err(e) => Err(Error::Io(path.to_owned(), e)),
    }
}

/// Writes a new token to `path` (which must not exist), readable by this user only.
fn create(path: &Path) -> Result<String, Error> {
    let io = |e| Error::Io(path.to_owned(), e);
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(io)?;
    }
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| Error::Token(format!("no randomness for a token: {e}")))?;
    let token: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(path).map_err(io)?;
    file.write_all(token.as_bytes()).and_then(|()| file.sync_all()).map_err(io)?;
    tracing::info!(path = %path.display(), "generated the MCP access token");
    Ok(token)
}

/// Makes an existing token file readable by this user only (a file others can read is
/// tightened, with a warning).
#[cfg(unix)]
fn private(path: &Path) -> Result<(), Error> {
    use std::os::unix::fs::PermissionsExt;
    let io = |e| Error::Io(path.to_owned(), e);
    let mode = std::fs::metadata(path).map_err(io)?.permissions().mode();
    if mode & 0o077 != 0 {
        tracing::warn!(path = %path.display(), mode = format!("{:o}", mode & 0o777), "the MCP token file was readable by others; set to 0600");
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).map_err(io)?;
    }
    Ok(())
}

#[cfg(not(unix))]
fn private(_path: &Path) -> Result<(), Error> {
    Ok(())
}

/// The default token file's name, in the app's config directory.
pub(crate) const DEFAULT_FILE: &str = "mcp-token";

#[cfg(test)]
mod tests {
    use super::*;

    /// A first start writes a new token readable by this user only; the next start reads it.
    #[test]
    fn the_token_file_is_generated_private_and_kept() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let path = dir.path().join("config/app/mcp-token");
        let first = from_file(&path).expect("generated");
        assert_eq!(first.len(), 64);
        assert!(first.bytes().all(|b| b.is_ascii_hexdigit()));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).expect("written").permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        assert_eq!(from_file(&path).expect("read back"), first);
    }

    /// A token file others can read is made private before it is used.
    #[cfg(unix)]
    #[test]
    fn a_readable_token_file_is_tightened() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().expect("a temporary directory");
        let path = dir.path().join("mcp-token");
        std::fs::write(&path, "  a-token-of-the-users-own-choosing\n").expect("written");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).expect("chmod");
        assert_eq!(from_file(&path).expect("read"), "a-token-of-the-users-own-choosing");
        assert_eq!(std::fs::metadata(&path).expect("there").permissions().mode() & 0o777, 0o600);
    }

    /// The HTTP server's rule for a secret, checked before anything is served.
    #[test]
    fn a_bad_token_is_refused() {
        let file = || -> Result<PathBuf, Error> { Err(Error::ConfigDir("never asked".into())) };
        assert!(matches!(resolve(Some("short"), file), Err(Error::Token(_))));
        assert!(matches!(resolve(Some("has a space in the middle"), file), Err(Error::Token(_))));
        let (token, source, path) = resolve(Some("sixteen-chars-ok"), file).expect("accepted");
        assert_eq!((token.as_str(), source, path), ("sixteen-chars-ok", TokenSource::Options, None));
    }
}
