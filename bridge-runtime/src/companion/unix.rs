//! Unix-only helpers of the portable companion modules (the socket server and the pairing store
//! are Unix-only as a whole), and the socket's place, which the server and the client find,
//! create and check the same way (CP-5-12).

pub use crate::private_dir::ensure_private_dir;
pub(crate) use crate::private_dir::euid;
use crate::private_dir::{check_owned, refused};
use std::io;
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// The default socket path (CP-5-12): `$XDG_RUNTIME_DIR/bridge-companion/companion.sock` (the
/// user's own runtime directory), or, without it, `<temp dir>/bridge-companion-<uid>/companion.sock`:
/// a directory of this user's own that the server and the client both create with mode `0700`
/// and refuse when it exists otherwise ([`ensure_private_dir`]), so a directory another user made
/// there first is never used.
pub fn default_socket_path() -> PathBuf {
    match std::env::var_os("XDG_RUNTIME_DIR").map(PathBuf::from) {
        Some(dir) if dir.is_absolute() => dir.join("bridge-companion").join("companion.sock"),
        _ => std::env::temp_dir().join(format!("bridge-companion-{}", euid())).join("companion.sock"),
    }
}

/// Checks that nobody but this user can replace the socket at `path` (before a client sends it
/// a key): the socket and its directory exist, are not symlinks, belong to this user and are
/// not writable by group or others. Errors: `NotFound` when either is missing; `PermissionDenied`
/// (saying why) otherwise.
pub(crate) fn check_socket_path(path: &Path) -> io::Result<()> {
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let md = std::fs::symlink_metadata(dir)?;
    check_owned(dir, &md, "is not a directory (symlinks are refused)", std::fs::FileType::is_dir)?;
    check_not_writable_by_others(dir, &md)?;
    let md = std::fs::symlink_metadata(path)?;
    check_owned(path, &md, "is not a socket (symlinks are refused)", std::fs::FileType::is_socket)?;
    check_not_writable_by_others(path, &md)
}

fn check_not_writable_by_others(path: &Path, md: &std::fs::Metadata) -> io::Result<()> {
    if md.mode() & 0o022 != 0 {
        return Err(refused(format!(
            "{} is writable by group or others (mode {:o})",
            path.display(),
            md.mode() & 0o777
        )));
    }
    Ok(())
}

/// Makes the regular file at `path` readable and writable by its owner only (mode 0600), if it
/// is not already; a symlink or a missing file is left alone. Best effort: errors are ignored,
/// the caller has already opened the file.
pub(crate) fn make_owner_only(path: &Path) {
    if let Ok(md) = std::fs::symlink_metadata(path)
        && md.is_file()
        && md.permissions().mode() & 0o077 != 0
    {
        let _ = std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600));
    }
}

/// Whether the file at `path` is the open `file` (same device and inode); `false` if either
/// cannot be read.
pub(crate) fn same_file(path: &Path, file: &std::fs::File) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (std::fs::metadata(path), file.metadata()) {
        (Ok(a), Ok(b)) => a.ino() == b.ino() && a.dev() == b.dev(),
        _ => false,
    }
}

/// Whether the peer of the connected socket `fd` has closed its end completely (not merely its
/// write half, which a client may shut down while it waits for answers): `poll` reports
/// `POLLHUP` (or an error) for it. Never blocks.
pub(crate) fn peer_hung_up(fd: std::os::fd::RawFd) -> bool {
    let mut p = libc::pollfd { fd, events: 0, revents: 0 };
    // SAFETY: one valid pollfd, timeout 0 (no wait); `fd` is owned by the caller's open stream.
    let n = unsafe { libc::poll(&mut p, 1, 0) };
    n > 0 && p.revents & (libc::POLLHUP | libc::POLLERR | libc::POLLNVAL) != 0
}
