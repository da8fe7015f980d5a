//! The secret that authenticates what the cache remembers.
//!
//! The stores that can decide a verdict (`checks.store`, `blobs.store`, ...,
//! see [`crate::store`]) and the web documents kept under `cache/http/` carry a
//! MAC of their content (keyed BLAKE3; HMAC-SHA256 before 2026-12, still
//! accepted for a cached web document, which only its server can give again)
//! under a key kept *outside* the cache: a cache
//! restored from another machine or another workflow's run (a CI cache is
//! exactly that) can't plant an answer, because whoever wrote it did not have
//! the key. An entry whose MAC does not verify is ignored and re-derived from
//! the git objects, so such a cache is slower on its first run, never wrong.
//!
//! The key, in order:
//! - `PINAUDIT_CACHE_KEY`, when set and not empty (CI: from a secret, so that
//!   every run of a workflow trusts what the previous one remembered). An empty
//!   value, what CI gives when a secret is not available to the run, is
//!   ignored with a warning.
//! - the key file `$XDG_STATE_HOME/pinaudit/cache.key` (default
//!   `~/.local/state/pinaudit/cache.key`), 32 random bytes created 0600 on first
//!   use; one that others may read or that is not a regular file of this user
//!   is refused.
//! - failing both, a key of this run alone, with a warning: nothing remembered
//!   in earlier runs is trusted, and nothing remembered now will be next time.
//!
//! The key is a value, worked out once per command where the command opens its
//! cache ([`CacheKey::for_user`]) and handed to every store that cache has (the
//! git cache's, the archives', the web documents'), never held by the process:
//! two caches in one process (a library user, tests on parallel threads) each
//! answer under their own key ([`CacheKey::from_secret`],
//! [`CacheKey::from_key_file`]), and one never accepts what the other wrote.

use std::fs;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use hmac::{Hmac, Mac};
use sha2::Sha256;

/// The context BLAKE3 derives the MAC key in from the secret.
const MAC_CONTEXT: &str = "pinaudit 2026-12-01 cache entry MAC";

/// The environment variable that gives the key (CI).
pub const ENV: &str = "PINAUDIT_CACHE_KEY";
/// The key file's name, in pinaudit's state directory.
const FILE: &str = "cache.key";

/// A secret to authenticate cache entries with (cheap to clone: the stores of
/// one cache share it).
#[derive(Clone)]
pub struct CacheKey(Arc<Secret>);

struct Secret {
    /// As given: what HMAC-SHA256 was keyed with.
    raw: Box<[u8]>,
    /// Derived from `raw` for keyed BLAKE3.
    mac: [u8; 32],
}

impl std::fmt::Debug for CacheKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CacheKey(..)")
    }
}

impl CacheKey {
    /// The key of `secret` (any bytes, any length).
    pub fn from_secret(secret: &[u8]) -> CacheKey {
        CacheKey(Arc::new(Secret {
            raw: secret.into(),
            mac: blake3::derive_key(MAC_CONTEXT, secret),
        }))
    }

    /// The key in the key file at `path`, created (0600, in a 0700 directory)
    /// when there is none; a file others may read is refused.
    pub fn from_key_file(path: &Path) -> Result<CacheKey, KeyError> {
        load_or_create(path)
    }

    /// The user's key (see the module doc): `PINAUDIT_CACHE_KEY`, else the key
    /// file, else a key of this command alone, with a warning. Read once per
    /// command, where it opens its cache.
    pub fn for_user() -> CacheKey {
        // Unit tests never touch the user's state directory.
        #[cfg(test)]
        if std::env::var_os(ENV).is_none() {
            return CacheKey::from_secret(b"pinaudit unit tests");
        }
        match std::env::var_os(ENV) {
            Some(v) if !v.is_empty() => CacheKey::from_secret(v.as_encoded_bytes()),
            set => {
                if set.is_some() {
                    eprintln!(
                        "warning: {ENV} is set but empty (a CI secret this run may not read?); using the key file instead"
                    );
                }
                match key_file().map(|p| load_or_create(&p)) {
                    Some(Ok(key)) => key,
                    why => {
                        let why = match why {
                            Some(Err(e)) => e,
                            _ => KeyError::NoStateDirectory,
                        };
                        eprintln!(
                            "warning: no cache key ({why}); answers remembered in the cache are not trusted this run, and this run's are not kept for the next (set {ENV}, or make the key file's directory writable)"
                        );
                        CacheKey::from_secret(&fresh_secret().unwrap_or_default())
                    }
                }
            }
        }
    }

    /// The MAC entries were written with before 2026-12.
    fn hmac(&self, parts: &[&[u8]]) -> Hmac<Sha256> {
        // HMAC takes a key of any length: this can't fail.
        let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(&self.0.raw)
            .unwrap_or_else(|_| unreachable!("HMAC accepts keys of any length"));
        for p in parts {
            mac.update(p);
        }
        mac
    }

    fn blake3(&self, parts: &[&[u8]]) -> blake3::Hash {
        let mut h = blake3::Hasher::new_keyed(&self.0.mac);
        for p in parts {
            h.update(p);
        }
        h.finalize()
    }

    /// The MAC of the concatenation of `parts`: keyed BLAKE3 (one pass over a
    /// store of tens of megabytes is a few milliseconds, a quarter of what
    /// HMAC-SHA256 took).
    pub fn mac(&self, parts: &[&[u8]]) -> [u8; 32] {
        *self.blake3(parts).as_bytes()
    }

    /// Whether `tag` is the MAC [`CacheKey::mac`] gives of `parts` (compared
    /// in constant time). A store an earlier version wrote (HMAC-SHA256) does
    /// not verify: it is rebuilt once from the mirrors, as any store that
    /// fails.
    pub fn verify(&self, parts: &[&[u8]], tag: &[u8]) -> bool {
        let Ok(tag) = <[u8; 32]>::try_from(tag) else {
            return false;
        };
        // `Hash`'s equality is constant-time.
        self.blake3(parts) == blake3::Hash::from_bytes(tag)
    }

    /// [`CacheKey::verify`], or the HMAC-SHA256 of earlier versions: for what
    /// cannot be re-derived from the cache (a cached web document, which only
    /// its server can give again).
    pub fn verify_or_earlier(&self, parts: &[&[u8]], tag: &[u8]) -> bool {
        self.verify(parts, tag) || self.hmac(parts).verify_slice(tag).is_ok()
    }
}

/// Where the key file lives: `$XDG_STATE_HOME/pinaudit/cache.key`, else
/// `$HOME/.local/state/pinaudit/cache.key`.
pub fn key_file() -> Option<PathBuf> {
    let state = std::env::var_os("XDG_STATE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|v| !v.is_empty())
                .map(|h| PathBuf::from(h).join(".local/state"))
        })?;
    Some(state.join("pinaudit").join(FILE))
}

/// Why the key file gave no key.
#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    #[error("neither HOME nor XDG_STATE_HOME is set")]
    NoStateDirectory,
    #[error("no random source: {0}")]
    NoRandom(getrandom::Error),
    #[error("can't create `{}`: {source}", dir.display())]
    CreateDirectory {
        dir: PathBuf,
        source: std::io::Error,
    },
    #[error("can't write in `{}`: {source}", dir.display())]
    WriteIn {
        dir: PathBuf,
        source: std::io::Error,
    },
    #[error("can't write `{}`: {source}", path.display())]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("can't read `{}`: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("`{}` appeared empty", path.display())]
    AppearedEmpty { path: PathBuf },
    #[error("`{}` is empty", path.display())]
    Empty { path: PathBuf },
    /// A key others may read authenticates nothing.
    #[error("`{}` is not a private file of this user (it must be a regular file, mode 0600)", path.display())]
    NotPrivate { path: PathBuf },
}

fn fresh_secret() -> Result<[u8; 32], KeyError> {
    let mut secret = [0u8; 32];
    getrandom::fill(&mut secret).map_err(KeyError::NoRandom)?;
    Ok(secret)
}

/// The key in the file at `path`, created (0600, in a 0700 directory) when
/// there is none. Two runs creating it at once agree on the first one written.
fn load_or_create(path: &Path) -> Result<CacheKey, KeyError> {
    if let Some(key) = read_key_file(path)? {
        return Ok(key);
    }
    let dir = path.parent().unwrap_or(Path::new("."));
    {
        use std::os::unix::fs::DirBuilderExt;
        fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(|source| KeyError::CreateDirectory {
                dir: dir.to_path_buf(),
                source,
            })?;
    }
    let secret = fresh_secret()?;
    let hex: String = secret.iter().map(|b| format!("{b:02x}")).collect();
    let write = |source| KeyError::Write {
        path: path.to_path_buf(),
        source,
    };
    // A new file of a random name, 0600, that can't be a planted link.
    let mut tmp = tempfile::Builder::new()
        .prefix(".cache.key.")
        .tempfile_in(dir)
        .map_err(|source| KeyError::WriteIn {
            dir: dir.to_path_buf(),
            source,
        })?;
    tmp.write_all(format!("{hex}\n").as_bytes())
        .and_then(|()| tmp.flush())
        .map_err(write)?;
    match tmp.persist_noclobber(path) {
        Ok(_) => Ok(CacheKey::from_secret(hex.as_bytes())),
        Err(e) if e.error.kind() == std::io::ErrorKind::AlreadyExists => read_key_file(path)?
            .ok_or_else(|| KeyError::AppearedEmpty {
                path: path.to_path_buf(),
            }),
        Err(e) => Err(write(e.error)),
    }
}

/// The key in the file at `path`; `None` when there is no such file. A file
/// that is a link, not regular, not this user's or readable by others is
/// refused: a key others can read authenticates nothing.
fn read_key_file(path: &Path) -> Result<Option<CacheKey>, KeyError> {
    use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
    let read = |source| KeyError::Read {
        path: path.to_path_buf(),
        source,
    };
    let file = fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path);
    let file = match file {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(read(e)),
    };
    let meta = file.metadata().map_err(read)?;
    // SAFETY: geteuid only reads the process's credentials.
    let me = unsafe { libc::geteuid() };
    if !meta.is_file() || meta.uid() != me || meta.mode() & 0o077 != 0 {
        return Err(KeyError::NotPrivate {
            path: path.to_path_buf(),
        });
    }
    let mut text = String::new();
    file.take(4096).read_to_string(&mut text).map_err(read)?;
    let secret = text.trim();
    if secret.is_empty() {
        return Err(KeyError::Empty {
            path: path.to_path_buf(),
        });
    }
    Ok(Some(CacheKey::from_secret(secret.as_bytes())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn macs_depend_on_key_and_content() {
        let a = CacheKey::from_secret(b"a");
        let b = CacheKey::from_secret(b"b");
        let tag = a.mac(&[b"magic", b"body"]);
        assert!(a.verify(&[b"magic", b"body"], &tag));
        assert!(a.verify(&[b"magicbody"], &tag), "parts are concatenated");
        assert!(!b.verify(&[b"magic", b"body"], &tag));
        assert!(!a.verify(&[b"magic", b"bodY"], &tag));
        assert!(!a.verify(&[b"magic", b"body"], &tag[..31]));
    }

    /// What earlier versions wrote (HMAC-SHA256 under the same secret) is
    /// read where asked for (`verify_or_earlier`), never by `verify`; under
    /// another secret, or of other content, it is not. What is written now is
    /// keyed BLAKE3, and not the HMAC.
    #[test]
    fn entries_of_earlier_versions_are_read_and_new_ones_are_blake3() {
        let a = CacheKey::from_secret(b"a");
        let legacy: [u8; 32] = a.hmac(&[b"magic", b"body"]).finalize().into_bytes().into();
        assert!(a.verify_or_earlier(&[b"magic", b"body"], &legacy));
        assert!(!a.verify(&[b"magic", b"body"], &legacy), "stores: rebuilt");
        let b = CacheKey::from_secret(b"b");
        assert!(!b.verify_or_earlier(&[b"magic", b"body"], &legacy));
        assert!(!a.verify_or_earlier(&[b"magic", b"bodY"], &legacy));
        assert!(!a.verify_or_earlier(&[b"magic", b"body"], &legacy[..31]));
        let tag = a.mac(&[b"magic", b"body"]);
        assert!(a.verify_or_earlier(&[b"magic", b"body"], &tag));
        let tag = a.mac(&[b"magic", b"body"]);
        assert_ne!(tag, legacy);
        let derived = blake3::derive_key(MAC_CONTEXT, b"a");
        assert_eq!(tag, *blake3::keyed_hash(&derived, b"magicbody").as_bytes());
    }

    #[test]
    fn the_key_file_is_created_private_once_and_refused_when_others_can_read_it() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("state/pinaudit").join(FILE);
        let first = load_or_create(&path).expect("created");
        let mode = fs::metadata(&path).expect("meta").permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "{mode:o}");
        let dir_mode = fs::metadata(path.parent().unwrap())
            .expect("meta")
            .permissions()
            .mode();
        assert_eq!(dir_mode & 0o777, 0o700, "{dir_mode:o}");
        let again = load_or_create(&path).expect("read");
        assert_eq!(first.mac(&[b"x"]), again.mac(&[b"x"]), "the same key");
        fs::set_permissions(&path, fs::Permissions::from_mode(0o644)).expect("chmod");
        let err = load_or_create(&path).expect_err("readable by others");
        assert!(matches!(err, KeyError::NotPrivate { .. }), "{err}");
        assert!(err.to_string().contains("0600"), "{err}");
        fs::remove_file(&path).expect("rm");
        std::os::unix::fs::symlink(dir.path().join("elsewhere"), &path).expect("symlink");
        assert!(load_or_create(&path).is_err(), "a planted link is refused");
        assert!(
            !dir.path().join("elsewhere").exists(),
            "nothing written through it"
        );
    }
}
