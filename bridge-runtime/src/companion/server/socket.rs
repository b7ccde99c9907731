//! The socket's security (CP-5-12, Unix only): a private directory (`0700`) and socket file
//! (`0600`), stale-socket handling, removal on shutdown, and peers checked by their credentials
//! (another user's connection is dropped at once).

use crate::companion::unix::{ensure_private_dir, euid};
use std::io;
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use tokio::net::{UnixListener, UnixStream};

/// Removes the socket file we bound when the server stops, unless it was replaced since.
pub(super) struct SocketFile {
    path: PathBuf,
    ino: Option<(u64, u64)>,
}

impl SocketFile {
    pub(super) fn new(path: &Path) -> Self {
        let ino = std::fs::symlink_metadata(path).ok().map(|m| (m.dev(), m.ino()));
        Self { path: path.to_owned(), ino }
    }
}

impl Drop for SocketFile {
    fn drop(&mut self) {
        let now = std::fs::symlink_metadata(&self.path).ok().map(|m| (m.dev(), m.ino()));
        if now.is_some() && now == self.ino {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// Binds a Unix socket at `path` in a private directory (CP-5-12): [`ensure_private_dir`] on
/// the parent, removal of a stale socket (one nothing listens on; a live one → `AddrInUse`, a
/// non-socket file → `AlreadyExists`, both left alone), bind, mode `0600`. Must be called
/// inside a tokio runtime.
pub fn bind_private(path: &Path) -> io::Result<UnixListener> {
    let parent = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "the socket path needs a parent directory"))?;
    ensure_private_dir(parent)?;
    match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
        Ok(md) if md.file_type().is_socket() => match std::os::unix::net::UnixStream::connect(path) {
            Ok(_) => {
                return Err(io::Error::new(
                    io::ErrorKind::AddrInUse,
                    format!("another server is listening on {}", path.display()),
                ));
            }
            Err(e) if e.kind() == io::ErrorKind::ConnectionRefused => {
                tracing::info!(socket = %path.display(), "companion: removing a stale socket file");
                std::fs::remove_file(path)?;
            }
            Err(e) => return Err(e),
        },
        Ok(_) => {
            return Err(io::Error::new(
                io::ErrorKind::AlreadyExists,
                format!("{} exists and is not a socket; refusing to replace it", path.display()),
            ));
        }
    }
    let listener = UnixListener::bind(path)?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;
    Ok(listener)
}

/// The peer's process id (when the system reports it) and user id if the peer runs as this
/// user; `Err` for another user's connection. A peer whose credentials cannot be read is
/// accepted (the socket's directory and file modes already keep other users out).
pub(super) fn same_user_peer(stream: &UnixStream) -> Result<(Option<i32>, Option<u32>), ()> {
    match stream.peer_cred() {
        Ok(cred) if cred.uid() != euid() => Err(()),
        Ok(cred) => Ok((cred.pid(), Some(cred.uid()))),
        Err(_) => Ok((None, None)),
    }
}
