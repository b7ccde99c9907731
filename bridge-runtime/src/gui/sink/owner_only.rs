//! Unix: a journal file this process creates is its user's alone (`0600`).

use std::os::unix::fs::OpenOptionsExt;

/// Creates files with mode `0600` (an existing file keeps its mode).
pub(super) fn owner_only(options: &mut std::fs::OpenOptions) {
    options.mode(0o600);
}
