//! Ladder accounts: invitations with a one-time sign-up code and an API token, both random and
//! stored only as SHA-256, and passwords hashed with argon2id.

use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use argon2::Argon2;
use kakehiki_store::{LadderRole, NewLadderUser, Store, StoreError};
use rand::RngCore;
use sha2::{Digest, Sha256};

/// Why an account operation was refused.
#[derive(Debug, thiserror::Error)]
pub enum AccountError {
    #[error(
        "a contestant's name is 1 to 64 letters, digits, `-`, `_` or `.`, not starting with `.`; found {0:?}"
    )]
    BadName(String),
    #[error("a password has {MIN_PASSWORD} to {MAX_PASSWORD} bytes")]
    BadPassword,
    #[error(
        "this password is too easy to guess ({0}): choose a longer one, or several unrelated words"
    )]
    WeakPassword(String),
    #[error("cannot hash the password: {0}")]
    Hash(String),
}

/// The shortest password accepted, in bytes.
pub const MIN_PASSWORD: usize = 10;
/// The longest password accepted, in bytes.
pub const MAX_PASSWORD: usize = 1024;

/// Prefix of API tokens (so a leaked one is recognisable).
pub const TOKEN_PREFIX: &str = "kkl_";

/// 32 random bytes from the operating system, as 64 hex digits (secrets: tokens, codes,
/// session cookies).
pub fn random_hex() -> String {
    kakehiki_core::secret_hex(32)
}

fn hex(bytes: &[u8]) -> String {
    hex::encode(bytes)
}

/// SHA-256 of `text`, lowercase hex: how tokens and sign-up codes are stored and looked up.
pub fn sha256_hex(text: &str) -> String {
    hex(&Sha256::digest(text.as_bytes()))
}

/// SHA-256 of `bytes`, lowercase hex (an upload's fingerprint).
pub fn sha256_bytes_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

/// An invitation: the secrets to hand to the contestant once, and the account to store.
#[derive(Debug, Clone)]
pub struct Invitation {
    /// The API token (`Authorization: Bearer TOKEN`).
    pub token: String,
    /// The one-time sign-up code (in the sign-up link).
    pub signup_code: String,
    /// What the store keeps: the hashes only.
    pub user: NewLadderUser,
}

/// Check a contestant's name.
pub fn check_name(name: &str) -> Result<(), AccountError> {
    let ok = (1..=64).contains(&name.len())
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if ok {
        Ok(())
    } else {
        Err(AccountError::BadName(name.to_string()))
    }
}

/// A fresh API token and the hash the store keeps of it.
pub fn new_token() -> (String, String) {
    let token = format!("{TOKEN_PREFIX}{}", random_hex());
    let hash = sha256_hex(&token);
    (token, hash)
}

/// A new invitation for `name` with fresh random secrets.
pub fn invite(name: &str, role: LadderRole) -> Result<Invitation, AccountError> {
    check_name(name)?;
    let (token, token_sha256) = new_token();
    let signup_code = random_hex();
    let user = NewLadderUser {
        name: name.to_string(),
        role,
        token_sha256,
        signup_code_sha256: sha256_hex(&signup_code),
    };
    Ok(Invitation {
        token,
        signup_code,
        user,
    })
}

/// Why an account was not invited.
#[derive(Debug, thiserror::Error)]
pub enum InviteError {
    #[error(transparent)]
    Account(#[from] AccountError),
    #[error("there is no account {0:?} to invite again (without --again it is created)")]
    NoAccount(String),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Invite `name` into `store`: a new account with `role`, or, `again`, an existing account (a
/// forgotten password, a leaked token: it keeps its role, bot and history; its password, token
/// and sessions end at once). The invitation's secrets, to be shown once, and the account's
/// role. The command line (`kakehiki ladder invite`) and the organiser's page both invite
/// through here.
pub fn invite_account(
    store: &mut dyn Store,
    name: &str,
    role: LadderRole,
    again: bool,
) -> Result<(Invitation, LadderRole), InviteError> {
    if !again {
        let invitation = invite(name, role)?;
        store.create_ladder_user(&invitation.user)?;
        return Ok((invitation, role));
    }
    let Some(existing) = store.ladder_user(name)? else {
        return Err(InviteError::NoAccount(name.to_string()));
    };
    let invitation = invite(name, existing.role)?;
    let found = store.ladder_reinvite(
        name,
        &invitation.user.token_sha256,
        &invitation.user.signup_code_sha256,
    )?;
    if !found {
        return Err(InviteError::NoAccount(name.to_string()));
    }
    Ok((invitation, existing.role))
}

/// The characters of a password the strength estimate reads (a longer one is not weaker, and
/// the estimate's time grows with the length).
const ESTIMATED_CHARS: usize = 100;

/// Whether `password` may be chosen: [`MIN_PASSWORD`] to [`MAX_PASSWORD`] bytes, and not easy
/// to guess by zxcvbn's estimate (common passwords, dictionary words, keyboard patterns, dates
/// and the `related` words, such as the account's and the ladder's names): its score must be 3
/// of 4 or more (about 10^10 guesses).
pub fn check_password(password: &str, related: &[&str]) -> Result<(), AccountError> {
    if !(MIN_PASSWORD..=MAX_PASSWORD).contains(&password.len()) {
        return Err(AccountError::BadPassword);
    }
    let head: String = password.chars().take(ESTIMATED_CHARS).collect();
    let estimate = zxcvbn::zxcvbn(&head, related);
    if estimate.score() >= zxcvbn::Score::Three {
        return Ok(());
    }
    let why = estimate
        .feedback()
        .and_then(|f| f.warning())
        .map(|w| w.to_string())
        .unwrap_or_else(|| "it would be guessed in few tries".to_string());
    Err(AccountError::WeakPassword(
        why.trim_end_matches('.').to_lowercase(),
    ))
}

/// The argon2id hash of `password` with a random salt, as a PHC string.
pub fn hash_password(password: &str) -> Result<String, AccountError> {
    if !(MIN_PASSWORD..=MAX_PASSWORD).contains(&password.len()) {
        return Err(AccountError::BadPassword);
    }
    let mut salt = [0u8; 16];
    rand::rngs::OsRng.fill_bytes(&mut salt);
    let salt = SaltString::encode_b64(&salt).map_err(|e| AccountError::Hash(e.to_string()))?;
    Argon2::default()
        .hash_password(password.as_bytes(), &salt)
        .map(|h| h.to_string())
        .map_err(|e| AccountError::Hash(e.to_string()))
}

/// Whether `password` matches the PHC string `hash` (a malformed hash matches nothing).
pub fn verify_password(password: &str, hash: &str) -> bool {
    PasswordHash::new(hash).is_ok_and(|h| {
        Argon2::default()
            .verify_password(password.as_bytes(), &h)
            .is_ok()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn common_and_related_passwords_are_refused_and_strong_ones_taken() {
        for weak in ["password123", "qwertyuiop", "1234567890", "alicealice1"] {
            match check_password(weak, &["alice"]) {
                Err(AccountError::WeakPassword(why)) => assert!(!why.is_empty(), "{weak}"),
                other => panic!("{weak}: {other:?}"),
            }
        }
        assert!(matches!(
            check_password("short", &[]),
            Err(AccountError::BadPassword)
        ));
        for strong in [
            "correct horse battery",
            "a long enough password",
            "Tr0ub4dor&3x-9",
        ] {
            assert!(check_password(strong, &["alice"]).is_ok(), "{strong}");
        }
        // A long password is read in part, and taken when that part is strong.
        let long = format!("correct horse battery {}", "z".repeat(1000));
        assert!(check_password(&long, &[]).is_ok());
        let e = check_password("password123", &[]).unwrap_err().to_string();
        assert!(e.starts_with("this password is too easy to guess ("), "{e}");
    }

    #[test]
    fn invitations_hold_fresh_secrets_and_store_only_their_hashes() {
        let a = invite("alice", LadderRole::Contestant).unwrap();
        let b = invite("alice", LadderRole::Contestant).unwrap();
        assert_ne!(a.token, b.token);
        assert_ne!(a.signup_code, b.signup_code);
        assert!(a.token.starts_with(TOKEN_PREFIX));
        assert_eq!(a.token.len(), TOKEN_PREFIX.len() + 64);
        assert_eq!(a.user.token_sha256, sha256_hex(&a.token));
        assert_eq!(a.user.signup_code_sha256, sha256_hex(&a.signup_code));
        assert_ne!(a.user.token_sha256, a.token);
        assert_eq!(
            sha256_hex("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn names_are_checked() {
        for good in ["alice", "a.b-c_9", "X"] {
            assert!(check_name(good).is_ok(), "{good}");
        }
        for bad in ["", ".hidden", "a b", "a/b", "é", &"x".repeat(65)] {
            assert!(invite(bad, LadderRole::Contestant).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn passwords_are_hashed_with_argon2id_and_verified() {
        let h = hash_password("correct horse").unwrap();
        assert!(h.starts_with("$argon2id$"), "{h}");
        assert!(verify_password("correct horse", &h));
        assert!(!verify_password("correct hors", &h));
        assert!(!verify_password("correct horse", "not a hash"));
        assert_ne!(h, hash_password("correct horse").unwrap(), "salted");
        for bad in ["short", "nine byte", &"x".repeat(1025)] {
            assert!(
                matches!(hash_password(bad), Err(AccountError::BadPassword)),
                "{bad:?}"
            );
        }
        assert!(hash_password("ten bytes!").is_ok());
    }
}
