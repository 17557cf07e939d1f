//! Leasing a uid per running bot, unique across every referee process of the machine.
//!
//! A lease is an exclusive `flock` on a file named after the uid in a directory only root can
//! enter; the lock is held for the bot's whole life and released when its processes are dead.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};

/// An exclusively held uid.
#[derive(Debug)]
pub(crate) struct UidLease {
    pub uid: u32,
    _lock: File,
}

fn lock_dir() -> PathBuf {
    super::private_run_dir("uids")
}

impl UidLease {
    /// Lease a free uid from `base .. base + count`.
    pub fn acquire(base: u32, count: u32) -> io::Result<UidLease> {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let dir = lock_dir();
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&dir)?;
        let count = count.max(1);
        // Start where the last lease of this process stopped, so uids rotate (a uid whose
        // processes are still being torn down is not the next one handed out), and each
        // referee process somewhere else in the range: two referees (workers, a contest's jobs
        // in several processes) starting at the same uid would hand out one that the other just
        // freed while its processes were still being torn down, and the new bot would share
        // their process count.
        // SAFETY: getpid(2) cannot fail.
        let offset = (unsafe { libc::getpid() } as u32).wrapping_mul(2_654_435_761);
        let start = NEXT.fetch_add(1, Ordering::Relaxed).wrapping_add(offset);
        for i in 0..count {
            let uid = base + (start.wrapping_add(i) % count);
            let file = OpenOptions::new()
                .create(true)
                .truncate(false)
                .write(true)
                .mode(0o600)
                .open(dir.join(uid.to_string()))?;
            // SAFETY: flock on an fd we own.
            let r = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
            if r == 0 {
                NEXT.store(start.wrapping_add(i + 1), Ordering::Relaxed);
                return Ok(UidLease { uid, _lock: file });
            }
            let err = io::Error::last_os_error();
            if err.raw_os_error() != Some(libc::EWOULDBLOCK) {
                return Err(err);
            }
        }
        Err(io::Error::new(
            io::ErrorKind::WouldBlock,
            format!("all {count} bot uids from {base} are in use"),
        ))
    }
}
