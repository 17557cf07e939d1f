//! A few store connections shared by a server's request handlers: a handler takes one, uses it
//! and gives it back, so requests are served side by side instead of one at a time behind one
//! connection.

use std::ops::{Deref, DerefMut};
use std::sync::{Condvar, Mutex};

use kakehiki_store::Store;

pub struct StorePool {
    idle: Mutex<Vec<Box<dyn Store>>>,
    returned: Condvar,
}

/// A connection taken from the pool; given back when dropped.
pub struct Pooled<'a> {
    pool: &'a StorePool,
    store: Option<Box<dyn Store>>,
}

impl StorePool {
    /// A pool of `stores` (at least one).
    pub fn new(stores: Vec<Box<dyn Store>>) -> StorePool {
        assert!(!stores.is_empty(), "a store pool needs a connection");
        StorePool {
            idle: Mutex::new(stores),
            returned: Condvar::new(),
        }
    }

    /// A connection, waiting for one to be given back when all are in use.
    pub fn get(&self) -> Pooled<'_> {
        let mut idle = self.idle.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            if let Some(store) = idle.pop() {
                return Pooled {
                    pool: self,
                    store: Some(store),
                };
            }
            idle = self.returned.wait(idle).unwrap_or_else(|p| p.into_inner());
        }
    }
}

impl Deref for Pooled<'_> {
    type Target = Box<dyn Store>;
    fn deref(&self) -> &Self::Target {
        self.store
            .as_ref()
            .expect("a pooled store is held until dropped")
    }
}

impl DerefMut for Pooled<'_> {
    fn deref_mut(&mut self) -> &mut Self::Target {
        self.store
            .as_mut()
            .expect("a pooled store is held until dropped")
    }
}

impl Drop for Pooled<'_> {
    fn drop(&mut self) {
        if let Some(store) = self.store.take() {
            self.pool
                .idle
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(store);
            self.pool.returned.notify_one();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connections_are_shared_and_given_back() {
        let dir = tempfile::tempdir().unwrap();
        let open = || {
            Box::new(kakehiki_store::SqliteStore::open(&dir.path().join("p.sqlite")).unwrap())
                as Box<dyn Store>
        };
        let pool = StorePool::new(vec![open(), open()]);
        let a = pool.get();
        let b = pool.get();
        // Both in use: a third waits until one is given back.
        std::thread::scope(|s| {
            let waiter = s.spawn(|| pool.get().backend());
            std::thread::sleep(std::time::Duration::from_millis(50));
            assert!(!waiter.is_finished());
            drop(a);
            assert_eq!(waiter.join().unwrap(), "sqlite");
        });
        drop(b);
        assert_eq!(pool.idle.lock().unwrap().len(), 2);
    }
}
