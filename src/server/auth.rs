//! Who may connect: the users file (plain passwords or argon2id hashes, as `lance-csr passwd`
//! writes them), and failed logins limited per user name and per client address as Neo4j
//! limits them (after 3 failures in a row, that name or address is refused for 5 s, a right
//! password included; loopback addresses are not counted, user names are).

use crate::error::{Error, Result};
use std::collections::HashMap;
use std::net::IpAddr;
use std::path::Path;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Who may connect.
#[derive(Debug, Clone)]
pub enum Auth {
    /// Anyone (loopback binds only).
    None,
    /// Basic auth against these user names and passwords.
    Users(HashMap<String, Password>),
}

/// A user's password as the users file holds it.
#[derive(Clone)]
pub enum Password {
    Plain(String),
    /// A PHC string (`$argon2id$v=19$m=...,t=...,p=...$salt$hash`).
    Hashed(String),
}

impl std::fmt::Debug for Password {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Password::Plain(_) => "Password::Plain(..)",
            Password::Hashed(_) => "Password::Hashed(..)",
        })
    }
}

impl Password {
    fn matches(&self, given: &str) -> bool {
        match self {
            Password::Plain(want) => constant_time_eq(want.as_bytes(), given.as_bytes()),
            Password::Hashed(phc) => {
                use argon2::password_hash::{PasswordHash, PasswordVerifier};
                PasswordHash::new(phc).is_ok_and(|h| {
                    argon2::Argon2::default()
                        .verify_password(given.as_bytes(), &h)
                        .is_ok()
                })
            }
        }
    }
}

/// `password` hashed with argon2id (a fresh salt, the crate's default cost), as a PHC string
/// for the users file.
pub fn hash_password(password: &str) -> Result<String> {
    use argon2::password_hash::{PasswordHasher, SaltString};
    let salt = SaltString::generate(&mut rand_core::OsRng);
    argon2::Argon2::default()
        .hash_password(password.as_bytes(), &salt)
        .map(|h| h.to_string())
        .map_err(|e| Error::Other(format!("cannot hash the password: {e}")))
}

impl Auth {
    /// Users from a file with one `name:password` per line (`#` starts a comment), where a
    /// password starting `$argon2` is a hash. A file that others may write is refused; one
    /// that others may read is served with a warning on stderr when it holds plain passwords.
    pub fn from_file(path: &Path) -> Result<Auth> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::io("read", path, e))?;
        let mut users = HashMap::new();
        for (n, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let Some((user, password)) = line.split_once(':') else {
                return Err(Error::Other(format!(
                    "{}:{}: expected `name:password`",
                    path.display(),
                    n + 1
                )));
            };
            let password = if password.starts_with("$argon2") {
                if let Err(e) = check_hash(password) {
                    return Err(Error::Other(format!(
                        "{}:{}: a password hash that cannot be read ({e}); make one with \
                         `lance-csr passwd`",
                        path.display(),
                        n + 1
                    )));
                }
                Password::Hashed(password.to_string())
            } else {
                Password::Plain(password.to_string())
            };
            users.insert(user.to_string(), password);
        }
        if users.is_empty() {
            return Err(Error::Other(format!("{}: no users", path.display())));
        }
        let plain = users.values().any(|p| matches!(p, Password::Plain(_)));
        check_mode(path, plain)?;
        Ok(Auth::Users(users))
    }

    /// Whether `user` / `password` may connect; with [`Auth::None`] anyone may. Checking a
    /// hash takes milliseconds of CPU: call it off the protocol's tasks.
    pub(crate) fn allows(&self, user: Option<&str>, password: Option<&str>) -> bool {
        match self {
            Auth::None => true,
            Auth::Users(users) => match (user, password) {
                (Some(u), Some(p)) => match users.get(u) {
                    Some(want) => want.matches(p),
                    None => {
                        // As long as a known user's check takes: the time tells no names.
                        if self.hashed() {
                            let _ = DUMMY.matches(p);
                        }
                        false
                    }
                },
                _ => false,
            },
        }
    }

    /// Whether any password is a hash (slow to check).
    pub(crate) fn hashed(&self) -> bool {
        matches!(self, Auth::Users(u) if u.values().any(|p| matches!(p, Password::Hashed(_))))
    }
}

/// Whether `phc` is an argon2 hash that can be checked: its parameters and hash present.
fn check_hash(phc: &str) -> std::result::Result<(), String> {
    let hash = argon2::password_hash::PasswordHash::new(phc).map_err(|e| e.to_string())?;
    argon2::Algorithm::try_from(hash.algorithm).map_err(|e| e.to_string())?;
    argon2::Params::try_from(&hash).map_err(|e| e.to_string())?;
    if hash.hash.is_none() || hash.salt.is_none() {
        return Err("no salt or hash".into());
    }
    Ok(())
}

/// Refuses a users file that group or others may write (anyone could add themselves); warns
/// when others may read plain passwords in it.
#[cfg(unix)]
fn check_mode(path: &Path, plain: bool) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(path)
        .map_err(|e| Error::io("read", path, e))?
        .permissions()
        .mode();
    if mode & 0o022 != 0 {
        return Err(Error::Other(format!(
            "{}: the users file may be written by others (mode {:o}): `chmod 600` it",
            path.display(),
            mode & 0o777
        )));
    }
    if plain && mode & 0o044 != 0 {
        eprintln!(
            "warning: {}: others may read the plain passwords in the users file (mode {:o}): \
             `chmod 600` it, or keep hashes made by `lance-csr passwd`",
            path.display(),
            mode & 0o777
        );
    }
    Ok(())
}

#[cfg(not(unix))]
fn check_mode(_: &Path, _: bool) -> Result<()> {
    Ok(())
}

/// Compares secrets in time that does not depend on where they differ.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Checked for names that are not users, so that they take as long as those that are.
static DUMMY: std::sync::LazyLock<Password> = std::sync::LazyLock::new(|| {
    Password::Hashed(hash_password("not a password").unwrap_or_default())
});

/// Failures in a row before a name or an address is locked.
const MAX_FAILURES: u32 = 3;
/// How long it stays locked.
const LOCK_TIME: Duration = Duration::from_secs(5);
/// Names and addresses remembered at most; past it, those not locked are forgotten.
const MAX_TRACKED: usize = 100_000;

/// Failed logins per user name and per client address.
#[derive(Default)]
pub(crate) struct Lockout {
    tracked: Mutex<HashMap<Key, Failures>>,
}

#[derive(Hash, PartialEq, Eq, Clone)]
enum Key {
    User(String),
    Address(IpAddr),
}

#[derive(Default)]
struct Failures {
    count: u32,
    locked_until: Option<Instant>,
}

/// The outcome of a login attempt.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Login {
    Allowed,
    Refused,
    /// Too many failures in a row: refused without checking.
    Locked,
}

impl Lockout {
    /// Checks `user` / `password` from `address` against `auth`, counting failures.
    pub fn login(
        &self,
        auth: &Auth,
        address: Option<IpAddr>,
        user: Option<&str>,
        password: Option<&str>,
    ) -> Login {
        if matches!(auth, Auth::None) {
            return Login::Allowed;
        }
        // Loopback clients are local processes (and proxies): one locked address would be
        // every one of them. Only names of users are counted (guesses of others are not
        // kept).
        let address = address.filter(|a| !a.is_loopback());
        let known = |u: &&str| matches!(auth, Auth::Users(users) if users.contains_key(*u));
        let keys: Vec<Key> = user
            .filter(known)
            .map(|u| Key::User(u.to_string()))
            .into_iter()
            .chain(address.map(Key::Address))
            .collect();
        let now = Instant::now();
        {
            // Counted as a failure before the check: attempts at once cannot pass the lock
            // together.
            let mut tracked = self.tracked.lock().unwrap_or_else(|e| e.into_inner());
            let locked = keys.iter().any(|k| {
                tracked
                    .get(k)
                    .and_then(|f| f.locked_until)
                    .is_some_and(|t| t > now)
            });
            if locked {
                return Login::Locked;
            }
            if tracked.len() >= MAX_TRACKED {
                tracked.retain(|_, f| f.locked_until.is_some_and(|t| t > now));
            }
            for k in &keys {
                let f = tracked.entry(k.clone()).or_default();
                if f.locked_until.is_some_and(|t| t <= now) {
                    *f = Failures::default();
                }
                f.count += 1;
                if f.count >= MAX_FAILURES {
                    f.locked_until = Some(now + LOCK_TIME);
                    f.count = 0;
                }
            }
        }
        if !auth.allows(user, password) {
            return Login::Refused;
        }
        let mut tracked = self.tracked.lock().unwrap_or_else(|e| e.into_inner());
        for k in &keys {
            tracked.remove(k);
        }
        Login::Allowed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn users(password: Password) -> Auth {
        Auth::Users(HashMap::from([("ann".to_string(), password)]))
    }

    #[test]
    fn hashed_and_plain_passwords_are_checked() {
        let hashed = users(Password::Hashed(hash_password("s3cret").unwrap()));
        let plain = users(Password::Plain("s3cret".into()));
        for auth in [hashed, plain] {
            assert!(auth.allows(Some("ann"), Some("s3cret")));
            assert!(!auth.allows(Some("ann"), Some("s3cre")));
            assert!(!auth.allows(Some("bob"), Some("s3cret")));
            assert!(!auth.allows(Some("ann"), None));
        }
    }

    #[test]
    fn three_failures_lock_the_name_and_the_address() {
        let auth = users(Password::Plain("right".into()));
        let lockout = Lockout::default();
        let here: IpAddr = "10.0.0.1".parse().unwrap();
        let there: IpAddr = "10.0.0.2".parse().unwrap();
        for _ in 0..2 {
            let r = lockout.login(&auth, Some(here), Some("ann"), Some("wrong"));
            assert_eq!(r, Login::Refused);
        }
        // A success resets the count.
        let r = lockout.login(&auth, Some(here), Some("ann"), Some("right"));
        assert_eq!(r, Login::Allowed);
        for _ in 0..3 {
            let r = lockout.login(&auth, Some(here), Some("ann"), Some("wrong"));
            assert_eq!(r, Login::Refused);
        }
        // Locked: the right password too, from the address or for the name.
        let r = lockout.login(&auth, Some(here), Some("ann"), Some("right"));
        assert_eq!(r, Login::Locked);
        let r = lockout.login(&auth, Some(there), Some("ann"), Some("right"));
        assert_eq!(r, Login::Locked);
        let r = lockout.login(&auth, Some(here), Some("bob"), Some("right"));
        assert_eq!(r, Login::Locked);
        // Names that are not users are not kept, however many are guessed.
        let fresh = Lockout::default();
        let local: IpAddr = "127.0.0.1".parse().unwrap();
        for i in 0..100 {
            let name = format!("guess{i}");
            let r = fresh.login(&auth, Some(local), Some(&name), Some("x"));
            assert_eq!(r, Login::Refused);
        }
        assert_eq!(fresh.tracked.lock().unwrap().len(), 0);
    }

    #[cfg(unix)]
    #[test]
    fn a_users_file_others_may_write_is_refused() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("users");
        let hash = hash_password("pw").unwrap();
        std::fs::write(&path, format!("ann:{hash}\nbob:plain\n")).unwrap();
        for (mode, ok) in [(0o600, true), (0o644, true), (0o664, false), (0o666, false)] {
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
            let r = Auth::from_file(&path);
            assert_eq!(r.is_ok(), ok, "mode {mode:o}: {r:?}");
            if let Ok(auth) = r {
                assert!(auth.allows(Some("ann"), Some("pw")));
                assert!(auth.allows(Some("bob"), Some("plain")));
            }
        }
        std::fs::write(&path, "ann:$argon2id$v=19$garbage\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        let e = Auth::from_file(&path).unwrap_err().to_string();
        assert!(e.contains("users:1: a password hash"), "{e}");
    }
}
