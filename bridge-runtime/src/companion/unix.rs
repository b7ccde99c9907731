//! Unix-only helpers of the portable companion modules (the socket server and the pairing store
//! are Unix-only as a whole).

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

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
