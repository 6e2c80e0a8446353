//! Resolves `user = "name" | "uid" | "uid:gid" | "name:group"` from /etc/passwd
//! and /etc/group, as `docker run --user` does. Reads files only; the switch
//! itself happens in the child (`runtime/spawn.rs`), groups before uid.

use std::path::Path;

use crate::config::UserSpec;

/// Why a `user` value could not be resolved.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UserError {
    #[error("no user {0:?} in /etc/passwd")]
    NoUser(String),
    #[error("no group {0:?} in /etc/group")]
    NoGroup(String),
    /// The user's line in /etc/passwd has a uid or gid that is not a number.
    #[error("bad {field} in /etc/passwd for {user:?}")]
    BadPasswd { user: String, field: &'static str },
}

/// Resolves a `user` value. A numeric uid missing from /etc/passwd gets its gid
/// from the value (`uid:gid`) or else the same number as the uid (gid 0 is never
/// guessed).
///
/// # Errors
/// A [`UserError`] naming the user or group that could not be found.
pub fn resolve(value: &str, passwd: &Path, group: &Path) -> Result<UserSpec, UserError> {
    let passwd = super::validate::read_text(passwd).unwrap_or_default();
    let groups = super::validate::read_text(group).unwrap_or_default();
    let (user, grp) = match value.split_once(':') {
        Some((u, g)) => (u, Some(g)),
        None => (value, None),
    };
    let entry = passwd
        .lines()
        .map(|l| l.split(':').collect::<Vec<_>>())
        .find(|f| f.len() >= 4 && (f[0] == user || (user.parse::<u32>().is_ok() && f[2] == user)));
    let (uid, mut gid, name) = match (&entry, user.parse::<u32>()) {
        (Some(f), _) => (
            f[2].parse::<u32>().map_err(|_| UserError::BadPasswd { user: user.to_owned(), field: "uid" })?,
            f[3].parse::<u32>().map_err(|_| UserError::BadPasswd { user: user.to_owned(), field: "gid" })?,
            Some(f[0].to_owned()),
        ),
        (None, Ok(uid)) => (uid, uid, None),
        (None, Err(_)) => return Err(UserError::NoUser(user.to_owned())),
    };
    if let Some(g) = grp {
        gid = match g.parse::<u32>() {
            Ok(n) => n,
            Err(_) => groups
                .lines()
                .map(|l| l.split(':').collect::<Vec<_>>())
                .find(|f| f.len() >= 3 && f[0] == g)
                .and_then(|f| f[2].parse().ok())
                .ok_or_else(|| UserError::NoGroup(g.to_owned()))?,
        };
    }
    let mut supplementary = vec![gid];
    if let Some(name) = name {
        for f in groups.lines().map(|l| l.split(':').collect::<Vec<_>>()) {
            if f.len() >= 4 && f[3].split(',').any(|m| m == name) {
                if let Ok(g) = f[2].parse::<u32>() {
                    if !supplementary.contains(&g) {
                        supplementary.push(g);
                    }
                }
            }
        }
    }
    Ok(UserSpec { uid, gid, groups: supplementary })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_numbers_and_groups() {
        let dir = tempfile::tempdir().unwrap();
        let pw = dir.path().join("passwd");
        let gr = dir.path().join("group");
        std::fs::write(&pw, "root:x:0:0::/root:/bin/sh\napp:x:1000:1000::/home/app:/bin/sh\n").unwrap();
        std::fs::write(&gr, "root:x:0:\napp:x:1000:\nlog:x:4:app,other\n").unwrap();
        assert_eq!(
            resolve("app", &pw, &gr).unwrap(),
            UserSpec { uid: 1000, gid: 1000, groups: vec![1000, 4] }
        );
        assert_eq!(resolve("1000", &pw, &gr).unwrap().groups, vec![1000, 4]);
        assert_eq!(resolve("4242:7", &pw, &gr).unwrap(), UserSpec { uid: 4242, gid: 7, groups: vec![7] });
        assert_eq!(resolve("app:log", &pw, &gr).unwrap().gid, 4);
        assert!(resolve("nobody-here", &pw, &gr).unwrap_err().to_string().contains("no user"));
        assert!(resolve("app:nogroup", &pw, &gr).unwrap_err().to_string().contains("no group"));
    }
}
