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
    } else if let Some(t) = std::env::var_os(TOKEN_ENV).filter(|t| !t.is_empty()) {
        let t = t.into_string().map_err(|_| Error::Token(format!("{TOKEN_ENV} is not valid UTF-8")))?;
        (t, TokenSource::Env, None)
    } else {
        if std::env::var_os(TOKEN_ENV).is_some() {
            tracing::warn!("{TOKEN_ENV} is set but empty; using the token file");
        }
        let path = file()?;
        (from_file(&path)?, TokenSource::File, Some(path))
    };
    check(&token, source, path.as_deref())?;
    Ok((token, source, path))
}

/// The HTTP server's rule for a secret: 16 to 1,024 visible ASCII characters. The error names
/// where the token came from.
fn check(token: &str, source: TokenSource, path: Option<&Path>) -> Result<(), Error> {
    if !(16..=1024).contains(&token.len()) || !token.bytes().all(|b| b.is_ascii_graphic()) {
        let from = match (source, path) {
            (TokenSource::Options, _) => "Options::token".to_owned(),
            (TokenSource::Env, _) => TOKEN_ENV.to_owned(),
            (TokenSource::File, Some(p)) => format!("the token file {}", p.display()),
            (TokenSource::File, None) => "the token file".to_owned(),
        };
        let fix = if source == TokenSource::File { " (correct it, or delete the file for a new one)" } else { "" };
        return Err(Error::Token(format!("{from}: the MCP token must be 16 to 1,024 visible ASCII characters{fix}")));
    }
    Ok(())
}

/// Reads the token file, or creates it with a new token. A symbolic link, or a file another
/// user owns, is refused ([`Error::Io`]): the token must be this user's own. A file others
/// could read may have leaked its token, so it is replaced with a new one (a warning says so;
/// MCP hosts configured with the old token must be given the new one).
fn from_file(path: &Path) -> Result<String, Error> {
    let io = |e| Error::Io(path.to_owned(), e);
    match std::fs::symlink_metadata(path) {
        Ok(meta) => {
            if meta.file_type().is_symlink() || !meta.is_file() {
                return Err(io(std::io::Error::new(
                    std::io::ErrorKind::InvalidInput,
                    "not a regular file (a symbolic link?); refusing to read or change it",
                )));
            }
            match private::check(&meta) {
                private::Verdict::Private => {}
                private::Verdict::NotOwned => {
                    return Err(io(std::io::Error::new(
                        std::io::ErrorKind::PermissionDenied,
                        "owned by another user; refusing to use it",
                    )));
                }
                private::Verdict::Readable(mode) => {
                    tracing::warn!(
                        path = %path.display(),
                        mode = format!("{mode:o}"),
                        "the MCP token file was readable by others; replaced it with a new token"
                    );
                    return create(path, true);
                }
            }
            let text = private::read(path).map_err(io)?;
            if text.trim().is_empty() {
                // What an interrupted first start of an older version left: no token to keep.
                tracing::warn!(path = %path.display(), "the MCP token file was empty; wrote a new token");
                return create(path, true);
            }
            Ok(text.trim().to_owned())
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => create(path, false),
        Err(e) => Err(io(e)),
    }
}

/// Writes a new token to `path`, readable by this user only. The token is written and synced
/// to a temporary file beside it first, which then takes `path`'s place whole, so a crash or a
/// full disk never leaves a partial token behind: linked as `path` when it must not exist yet
/// (`replace` false; if another instance of the app created it meanwhile, that one's token is
/// read), or renamed over the old file (`replace`), so nobody who could read the old file can
/// read the new token.
fn create(path: &Path, replace: bool) -> Result<String, Error> {
    let io = |e| Error::Io(path.to_owned(), e);
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(io)?;
    }
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| Error::Token(format!("no randomness for a token: {e}")))?;
    let token: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    let mut temp = path.as_os_str().to_owned();
    temp.push(format!(".new-{:08x}", std::process::id()));
    let temp = PathBuf::from(temp);
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(&temp).map_err(io)?;
    let written = file.write_all(token.as_bytes()).and_then(|()| file.sync_all());
    drop(file);
    let placed =
        written.and_then(|()| if replace { std::fs::rename(&temp, path) } else { std::fs::hard_link(&temp, path) });
    let _ = std::fs::remove_file(&temp);
    match placed {
        Ok(()) => {}
        Err(e) if !replace && e.kind() == std::io::ErrorKind::AlreadyExists => return from_file(path),
        Err(e) => return Err(io(e)),
    }
    tracing::info!(path = %path.display(), "generated the MCP access token");
    Ok(token)
}

/// Who may read the token file.
#[cfg(unix)]
mod private {
    use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
    use std::path::Path;

    pub(super) enum Verdict {
        /// This user's, readable by nobody else.
        Private,
        /// Another user's.
        NotOwned,
        /// Readable (or writable) by others: its mode.
        Readable(u32),
    }

    pub(super) fn check(meta: &std::fs::Metadata) -> Verdict {
        // SAFETY: geteuid has no preconditions and cannot fail.
        let me = unsafe { libc::geteuid() };
        if meta.uid() != me {
            Verdict::NotOwned
        } else if meta.mode() & 0o077 != 0 {
            Verdict::Readable(meta.mode() & 0o777)
        } else {
            Verdict::Private
        }
    }

    /// Reads it without following a symbolic link put there since it was checked.
    pub(super) fn read(path: &Path) -> std::io::Result<String> {
        use std::io::Read;
        let mut file = std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NOFOLLOW).open(path)?;
        let mut text = String::new();
        file.by_ref().take(4096).read_to_string(&mut text)?;
        Ok(text)
    }
}

#[cfg(not(unix))]
mod private {
    use std::path::Path;

    pub(super) enum Verdict {
        Private,
        #[allow(dead_code)]
        NotOwned,
        #[allow(dead_code)]
        Readable(u32),
    }

    pub(super) fn check(_meta: &std::fs::Metadata) -> Verdict {
        Verdict::Private
    }

    pub(super) fn read(path: &Path) -> std::io::Result<String> {
        std::fs::read_to_string(path)
    }
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

    /// A token file others could read may have leaked: it is replaced by a new private one
    /// (issue 21 trial: it used to be chmod-ed and its old token kept).
    #[cfg(unix)]
    #[test]
    fn a_readable_token_file_is_replaced() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().expect("a temporary directory");
        let path = dir.path().join("mcp-token");
        std::fs::write(&path, "  a-token-of-the-users-own-choosing\n").expect("written");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).expect("chmod");
        let token = from_file(&path).expect("replaced");
        assert_ne!(token, "a-token-of-the-users-own-choosing");
        assert_eq!(token.len(), 64);
        assert_eq!(std::fs::read_to_string(&path).expect("there"), token);
        assert_eq!(std::fs::metadata(&path).expect("there").permissions().mode() & 0o777, 0o600);
        assert_eq!(std::fs::read_dir(dir.path()).expect("listed").count(), 1, "no temporary file left");
    }

    /// A symbolic link in the token file's place is refused, and its target left alone.
    #[cfg(unix)]
    #[test]
    fn a_symlinked_token_file_is_refused() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().expect("a temporary directory");
        let target = dir.path().join("elsewhere");
        std::fs::write(&target, "someone-elses-secret-value").expect("written");
        std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o644)).expect("chmod");
        let path = dir.path().join("mcp-token");
        std::os::unix::fs::symlink(&target, &path).expect("linked");
        let err = from_file(&path).expect_err("refused");
        assert!(matches!(err, Error::Io(..)), "{err}");
        assert!(err.to_string().contains("not a regular file"), "{err}");
        assert_eq!(std::fs::metadata(&target).expect("there").permissions().mode() & 0o777, 0o644);
        assert_eq!(std::fs::read_to_string(&target).expect("there"), "someone-elses-secret-value");
    }

    /// An empty token file (a first start interrupted by an older version) gets a new token; a
    /// token file with a bad token fails the start, saying how to fix it (issue 21 trial: the
    /// error did not say, and the first start wrote the file in place).
    #[cfg(unix)]
    #[test]
    fn an_empty_token_file_is_refilled_and_a_bad_one_says_how_to_fix_it() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().expect("a temporary directory");
        let path = dir.path().join("mcp-token");
        std::fs::write(&path, "\n").expect("written");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).expect("chmod");
        let token = from_file(&path).expect("refilled");
        assert_eq!(token.len(), 64);
        assert_eq!(std::fs::read_to_string(&path).expect("there"), token);
        std::fs::write(&path, "short").expect("written");
        let read = from_file(&path).expect("read");
        let err = check(&read, TokenSource::File, Some(&path)).expect_err("too short");
        assert!(err.to_string().contains("delete the file for a new one"), "{err}");
        assert_eq!(std::fs::read_to_string(&path).expect("left alone"), "short");
        assert_eq!(std::fs::read_dir(dir.path()).expect("listed").count(), 1, "no temporary file left");
    }

    /// An empty `BRIDGE_MCP_TOKEN` is taken as unset (the file is used), and a bad token's
    /// error names where it came from.
    #[test]
    fn an_empty_env_token_falls_through_and_errors_name_the_source() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let path = dir.path().join("mcp-token");
        // SAFETY: this test binary's only test that touches the environment.
        unsafe { std::env::set_var(TOKEN_ENV, "") };
        let (token, source, file) = resolve(None, || Ok(path.clone())).expect("the file is used");
        assert_eq!((source, file.as_deref()), (TokenSource::File, Some(path.as_path())));
        assert_eq!(token.len(), 64);
        unsafe { std::env::set_var(TOKEN_ENV, "short") };
        let err = resolve(None, || Ok(path.clone())).expect_err("too short");
        unsafe { std::env::remove_var(TOKEN_ENV) };
        assert!(err.to_string().contains(TOKEN_ENV), "{err}");
        let err = resolve(Some("short"), || Ok(path.clone())).expect_err("too short");
        assert!(err.to_string().contains("Options::token"), "{err}");
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
