//! Credential profiles (CP-5-5, CP-5-10, CP-6-7): `<config dir>/profiles/<NAME>.json`, mode
//! `0600`, holding `{"socket": path, "clientId": string, "key": string}`. The config dir is
//! `$COMPANION_CONFIG_DIR`, else `$XDG_CONFIG_HOME/companion`, else `~/.config/companion`.
//! A profile readable or writable by group or others, not a regular file, or owned by another
//! user is refused.

use crate::companion::protocol::results::Pairing;
use crate::companion::unix::euid;
use serde::{Deserialize, Serialize};
use std::fs::{self, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// Largest profile file read, bytes.
const MAX_PROFILE_BYTES: u64 = 64 << 10;

/// A credential profile (CP-5-5, CP-5-10): the socket a client was paired on, its client id and
/// its key, in `<config dir>/profiles/NAME.json` (mode `0600`; the config dir is
/// `$COMPANION_CONFIG_DIR`, else `$XDG_CONFIG_HOME/companion`, else `~/.config/companion`), as
/// `companion pair --profile NAME` or [`CredentialProfile::save`] writes it. The key never
/// leaves the profile but to authenticate a connection ([`super::Client::authenticate`]):
/// `Debug` does not show it and no method returns it (CP-5-9).
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CredentialProfile {
    /// The socket the client was paired on.
    socket: Option<PathBuf>,
    /// The paired client id.
    client_id: String,
    /// The key (never printed, logged or put on a command line, CP-5-9).
    key: String,
}

impl std::fmt::Debug for CredentialProfile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CredentialProfile")
            .field("socket", &self.socket)
            .field("client_id", &self.client_id)
            .finish_non_exhaustive()
    }
}

impl CredentialProfile {
    /// The credentials a pairing returned (`pairing.request`, CP-5-2), for the socket it was made
    /// on (`None`: the default socket). Store them with [`CredentialProfile::save`].
    pub fn from_pairing(pairing: &Pairing, socket: Option<PathBuf>) -> Self {
        Self { socket, client_id: pairing.client_id.clone(), key: pairing.key.clone() }
    }

    /// Reads profile `name` from the profiles directory ([`CredentialProfile::directory`]).
    /// Errors: an invalid name, no such profile, a file that is not a private regular file of
    /// this user (mode `0600`) or not a profile ([`ProfileError`]).
    pub fn load(name: &str) -> Result<Self, ProfileError> {
        if !valid_name(name) {
            return Err(ProfileError::InvalidName(name.to_owned()));
        }
        let dir = Self::directory().ok_or_else(|| ProfileError::Missing(name.to_owned()))?;
        read(&dir, name)
    }

    /// The profile to use, as the `companion` CLI chooses it (CP-6-7): `name`, else the only
    /// profile there is; `Ok(None)` when there is none and none was named. Several and none
    /// named → [`ProfileError::Ambiguous`]: a profile is never picked by privilege.
    pub fn choose(name: Option<&str>) -> Result<Option<(String, Self)>, ProfileError> {
        choose(Self::directory().as_deref(), name)
    }

    /// Writes this profile as `name` into the profiles directory, atomically, with mode `0600`
    /// (directories created `0700`); returns the file's path. Errors: an invalid name, no
    /// config directory (none of `$COMPANION_CONFIG_DIR`, `$XDG_CONFIG_HOME`, `$HOME`), a
    /// profile of that name exists and not `replace`, or the file cannot be written.
    pub fn save(&self, name: &str, replace: bool) -> Result<PathBuf, ProfileError> {
        if !valid_name(name) {
            return Err(ProfileError::InvalidName(name.to_owned()));
        }
        let dir = Self::directory().ok_or_else(|| {
            ProfileError::Unusable("no config directory: set COMPANION_CONFIG_DIR, XDG_CONFIG_HOME or HOME".into())
        })?;
        write(&dir, name, self, replace)
            .map_err(|e| ProfileError::Unusable(format!("cannot write profile `{name}`: {e}")))
    }

    /// The socket the client was paired on; `None`: the default socket.
    pub fn socket(&self) -> Option<&Path> {
        self.socket.as_deref()
    }

    /// The paired client's id (`cl_…`).
    pub fn client_id(&self) -> &str {
        &self.client_id
    }

    /// The key, for `session.authenticate` only.
    pub(crate) fn key(&self) -> &str {
        &self.key
    }

    /// `<config dir>/profiles`, if a config directory is known.
    pub fn directory() -> Option<PathBuf> {
        profiles_dir()
    }

    /// Whether `name` can name a profile: 1..=64 of `[A-Za-z0-9._-]`, not starting with `.`.
    pub fn valid_name(name: &str) -> bool {
        valid_name(name)
    }
}

/// Why a credential profile could not be used (the CLI's exit 3, except
/// [`ProfileError::InvalidName`] → 2).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ProfileError {
    /// No profile exists and one is needed.
    None,
    /// Several exist and none was named (CP-6-7).
    Ambiguous(Vec<String>),
    /// The named profile does not exist.
    Missing(String),
    /// The profile cannot be used (permissions, owner, content).
    Unusable(String),
    /// Not a valid profile name.
    InvalidName(String),
}

impl std::error::Error for ProfileError {}

impl std::fmt::Display for ProfileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ProfileError::None => write!(f, "no credential profile exists; pair first (companion pair)"),
            ProfileError::Ambiguous(names) => write!(
                f,
                "several credential profiles exist ({}); choose one with --credential-profile",
                names.join(", ")
            ),
            ProfileError::Missing(name) => write!(f, "no credential profile named `{name}`"),
            ProfileError::Unusable(why) => f.write_str(why),
            ProfileError::InvalidName(name) => {
                write!(f, "invalid profile name `{name}`: use 1..64 letters, digits, `.`, `_`, `-`")
            }
        }
    }
}

/// The config dir (see the module docs).
pub(crate) fn config_dir() -> Option<PathBuf> {
    let from = |var: &str| std::env::var_os(var).map(PathBuf::from).filter(|p| p.is_absolute());
    from("COMPANION_CONFIG_DIR")
        .or_else(|| from("XDG_CONFIG_HOME").map(|p| p.join("companion")))
        .or_else(|| from("HOME").map(|p| p.join(".config").join("companion")))
}

/// `<config dir>/profiles`.
pub(crate) fn profiles_dir() -> Option<PathBuf> {
    config_dir().map(|d| d.join("profiles"))
}

/// Whether `name` is a valid profile name: 1..=64 of `[A-Za-z0-9._-]`, not starting with `.`.
pub(crate) fn valid_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && !name.starts_with('.')
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

/// The profile names in `dir`, sorted.
pub(crate) fn list(dir: &Path) -> io::Result<Vec<String>> {
    let entries = match fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let mut names: Vec<String> = entries
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str().and_then(|n| n.strip_suffix(".json")).map(str::to_owned))
        .filter(|n| valid_name(n))
        .collect();
    names.sort();
    Ok(names)
}

/// The profile to use: `requested`, else the only one in `dir`; `Ok(None)` if there is none at
/// all and none was requested. Several and none requested → [`ProfileError::Ambiguous`]
/// (CP-6-7: never picked by privilege).
pub(crate) fn choose(
    dir: Option<&Path>,
    requested: Option<&str>,
) -> Result<Option<(String, CredentialProfile)>, ProfileError> {
    if let Some(name) = requested {
        if !valid_name(name) {
            return Err(ProfileError::InvalidName(name.to_owned()));
        }
        let dir = dir.ok_or_else(|| ProfileError::Missing(name.to_owned()))?;
        return read(dir, name).map(|p| Some((name.to_owned(), p)));
    }
    let Some(dir) = dir else { return Ok(None) };
    let names = list(dir).map_err(|e| ProfileError::Unusable(format!("cannot list {}: {e}", dir.display())))?;
    match names.as_slice() {
        [] => Ok(None),
        [one] => read(dir, one).map(|p| Some((one.clone(), p))),
        _ => Err(ProfileError::Ambiguous(names)),
    }
}

/// Reads profile `name` from `dir`, refusing a file that is not private (see the module docs).
pub(crate) fn read(dir: &Path, name: &str) -> Result<CredentialProfile, ProfileError> {
    let path = dir.join(format!("{name}.json"));
    let file = OpenOptions::new().read(true).custom_flags(libc::O_NOFOLLOW).open(&path).map_err(|e| {
        if e.kind() == io::ErrorKind::NotFound {
            ProfileError::Missing(name.to_owned())
        } else {
            ProfileError::Unusable(format!("cannot open profile `{name}`: {e}"))
        }
    })?;
    let md = file.metadata().map_err(|e| ProfileError::Unusable(format!("cannot read profile `{name}`: {e}")))?;
    if !md.is_file() {
        return Err(ProfileError::Unusable(format!("profile `{name}` is not a regular file")));
    }
    if md.uid() != euid() {
        return Err(ProfileError::Unusable(format!("profile `{name}` belongs to another user")));
    }
    if md.mode() & 0o077 != 0 {
        return Err(ProfileError::Unusable(format!(
            "profile `{name}` is accessible to group or others (mode {:o}); run: chmod 600 {}",
            md.mode() & 0o777,
            path.display()
        )));
    }
    let mut text = String::new();
    file.take(MAX_PROFILE_BYTES)
        .read_to_string(&mut text)
        .map_err(|e| ProfileError::Unusable(format!("cannot read profile `{name}`: {e}")))?;
    serde_json::from_str(&text).map_err(|_| {
        ProfileError::Unusable(format!("profile `{name}` is not valid: expected {{\"socket\", \"clientId\", \"key\"}}"))
    })
}

/// Whether profile `name` exists in `dir`.
pub(crate) fn exists(dir: &Path, name: &str) -> bool {
    fs::symlink_metadata(dir.join(format!("{name}.json"))).is_ok()
}

/// Writes profile `name` atomically with mode `0600` (directories created `0700`). An existing
/// profile is replaced only with `replace`. Returns the file's path.
pub(crate) fn write(dir: &Path, name: &str, profile: &CredentialProfile, replace: bool) -> io::Result<PathBuf> {
    fs::DirBuilder::new().recursive(true).mode(0o700).create(dir)?;
    let path = dir.join(format!("{name}.json"));
    if !replace && exists(dir, name) {
        return Err(io::Error::new(io::ErrorKind::AlreadyExists, format!("profile `{name}` already exists")));
    }
    let tmp = dir.join(format!(".{name}.json.{}.tmp", std::process::id()));
    let result = (|| {
        let mut f = OpenOptions::new().write(true).create_new(true).mode(0o600).open(&tmp)?;
        let mut body = serde_json::to_vec_pretty(profile).map_err(io::Error::other)?;
        body.push(b'\n');
        f.write_all(&body)?;
        f.sync_all()?;
        fs::rename(&tmp, &path)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result.map(|()| path)
}
