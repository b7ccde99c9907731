//! A private per-user directory (mode `0700`, owned by this user, no symlink), shared by the
//! companion's socket (CP-5-12) and the HTTP transport's generated token file.

use std::io;
use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::path::Path;

/// The effective user id of this process.
pub(crate) fn euid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// Makes sure `dir` is a private directory of the current user (CP-5-12): creates it (and
/// missing parents) with mode `0700`, or checks an existing one. Errors
/// (`PermissionDenied`): it is a symlink or not a directory, belongs to another user, or grants
/// any access to group or others — it is never changed, only refused. The companion server calls it
/// for its socket's directory, its client for the default socket's, the HTTP transport for the
/// directory of a generated token.
// Public through `companion`; crate-private without it.
#[cfg_attr(not(feature = "companion"), allow(unreachable_pub))]
pub fn ensure_private_dir(dir: &Path) -> io::Result<()> {
    match std::fs::symlink_metadata(dir) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir)?;
        }
        Err(e) => return Err(e),
        Ok(_) => {}
    }
    // Checked after creating too: another user may have made it in between.
    let md = std::fs::symlink_metadata(dir)?;
    check_owned(dir, &md, "is not a directory (symlinks are refused)", std::fs::FileType::is_dir)?;
    if md.mode() & 0o077 != 0 {
        return Err(refused(format!(
            "{} is accessible to group or others (mode {:o}); it must be a private directory (0700)",
            dir.display(),
            md.mode() & 0o777
        )));
    }
    Ok(())
}

/// A `PermissionDenied` error saying why.
pub(crate) fn refused(why: String) -> io::Error {
    io::Error::new(io::ErrorKind::PermissionDenied, why)
}

/// `path` (whose metadata is `md`) has the expected type and belongs to this user.
pub(crate) fn check_owned(
    path: &Path,
    md: &std::fs::Metadata,
    wrong_type: &str,
    is_type: fn(&std::fs::FileType) -> bool,
) -> io::Result<()> {
    if !is_type(&md.file_type()) {
        return Err(refused(format!("{} {wrong_type}", path.display())));
    }
    if md.uid() != euid() {
        return Err(refused(format!("{} belongs to another user (uid {})", path.display(), md.uid())));
    }
    Ok(())
}

/// `name` in this user's private directory `app` for run-time files: `$XDG_RUNTIME_DIR/app`, or,
/// without it, `<temp dir>/app-<uid>` (never the shared temp directory itself).
#[cfg(feature = "http")]
pub(crate) fn runtime_dir(app: &str) -> std::path::PathBuf {
    match std::env::var_os("XDG_RUNTIME_DIR").map(std::path::PathBuf::from) {
        Some(dir) if dir.is_absolute() => dir.join(app),
        _ => std::env::temp_dir().join(format!("{app}-{}", euid())),
    }
}

/// Writes `contents` to the new file `path` (mode `0600`) in the private directory `dir`
/// ([`ensure_private_dir`]); a file already at `path` is removed first, never followed.
#[cfg(feature = "http")]
pub(crate) fn write_private_file(dir: &Path, path: &Path, contents: &[u8]) -> io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    ensure_private_dir(dir)?;
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
        _ => {}
    }
    let mut file = std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(path)?;
    file.write_all(contents)
}
