//! Plug-in algorithms registered by name at run time (a scheduler written in Python, say).
//!
//! Each registry ([`crate::sched`], [`crate::cc`]) keeps one process-wide table of plug-ins, as
//! Linux keeps the schedulers and congestion controls that modules register in a list
//! (`mptcp_register_scheduler` in mptcp_sched.c, `tcp_register_congestion_control` in
//! tcp_cong.c). [`Spec::parse`](crate::Spec::parse) finds a plug-in by name after the built-ins;
//! a plug-in cannot take a built-in's name or alias. Registering a name again replaces the
//! earlier plug-in (a re-imported Python module registers its schedulers again). The table only
//! says which factory a name stands for: a run builds its algorithms once, when its scenario is
//! resolved and its connections are made, so runs stay deterministic.

use std::sync::{Arc, RwLock};

use crate::algo::Custom;

/// One registry's plug-ins: name → factory.
pub struct Plugins<T: ?Sized> {
    table: RwLock<Vec<Custom<T>>>,
}

impl<T: ?Sized> Plugins<T> {
    /// An empty table (for a `static`).
    pub const fn new() -> Self {
        Plugins { table: RwLock::new(Vec::new()) }
    }

    /// The plug-in registered as `name` (lower case).
    pub fn get(&self, name: &str) -> Option<Custom<T>> {
        self.read().iter().find(|c| c.name == name).cloned()
    }

    /// Registers `factory` as `name`, replacing a plug-in of that name.
    pub fn insert(&self, name: &str, factory: Arc<dyn Fn() -> Box<T> + Send + Sync>) {
        let mut t = self.table.write().unwrap_or_else(|e| e.into_inner());
        t.retain(|c| c.name != name);
        t.push(Custom { name: name.to_string(), factory });
    }

    /// Removes the plug-in `name`; false if there was none.
    pub fn remove(&self, name: &str) -> bool {
        let mut t = self.table.write().unwrap_or_else(|e| e.into_inner());
        let before = t.len();
        t.retain(|c| c.name != name);
        t.len() != before
    }

    /// The registered names, sorted.
    pub fn names(&self) -> Vec<String> {
        let mut v: Vec<String> = self.read().iter().map(|c| c.name.clone()).collect();
        v.sort();
        v
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, Vec<Custom<T>>> {
        // A panic while holding the lock leaves the table itself intact.
        self.table.read().unwrap_or_else(|e| e.into_inner())
    }
}

impl<T: ?Sized> Default for Plugins<T> {
    fn default() -> Self {
        Self::new()
    }
}

/// Builds the algorithm a `prefix:ARGUMENT` name stands for (`policy:out/p.json`): the
/// argument is the text after the first colon, as written (case kept), empty without a colon.
/// `Err` says what is wrong with the argument.
pub type Loader<T> = Arc<dyn Fn(&str) -> Result<Custom<T>, String> + Send + Sync>;

/// One registry's loaders: prefix → loader (a trained policy loads from the file its name
/// carries, so it cannot be one fixed factory).
pub struct Loaders<T: ?Sized> {
    table: RwLock<Vec<(String, Loader<T>)>>,
}

impl<T: ?Sized> Loaders<T> {
    /// An empty table (for a `static`).
    pub const fn new() -> Self {
        Loaders { table: RwLock::new(Vec::new()) }
    }

    /// The loader of `prefix`.
    pub fn get(&self, prefix: &str) -> Option<Loader<T>> {
        let t = self.table.read().unwrap_or_else(|e| e.into_inner());
        t.iter().find(|(p, _)| p == prefix).map(|(_, l)| l.clone())
    }

    /// Registers `loader` for `prefix`, replacing an earlier one.
    pub fn insert(&self, prefix: &str, loader: Loader<T>) {
        let mut t = self.table.write().unwrap_or_else(|e| e.into_inner());
        t.retain(|(p, _)| p != prefix);
        t.push((prefix.to_string(), loader));
    }

    /// The registered prefixes, sorted.
    pub fn prefixes(&self) -> Vec<String> {
        let t = self.table.read().unwrap_or_else(|e| e.into_inner());
        let mut v: Vec<String> = t.iter().map(|(p, _)| p.clone()).collect();
        v.sort();
        v
    }
}

impl<T: ?Sized> Default for Loaders<T> {
    fn default() -> Self {
        Self::new()
    }
}

/// Checks a plug-in's name: lower-case letters, digits, `-`, `_` and `.`, starting with a letter
/// (what `name:key=value` text and run directories can carry).
pub fn check_name(name: &str) -> Result<(), String> {
    let ok_char = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '-' | '_' | '.');
    if name.starts_with(|c: char| c.is_ascii_lowercase()) && name.chars().all(ok_char) {
        Ok(())
    } else {
        Err(format!(
            "expected a name of lower-case letters, digits, '-', '_' or '.' starting with a letter, got {name:?}"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn factory(x: u32) -> Arc<dyn Fn() -> Box<u32> + Send + Sync> {
        Arc::new(move || Box::new(x))
    }

    /// Insert, replace, look up, remove; names come back sorted.
    #[test]
    fn table_insert_replace_remove() {
        let p: Plugins<u32> = Plugins::new();
        assert!(p.get("a").is_none());
        p.insert("b", factory(1));
        p.insert("a", factory(2));
        assert_eq!(p.names(), vec!["a", "b"]);
        assert_eq!(*(p.get("b").unwrap().factory)(), 1);
        p.insert("b", factory(3));
        assert_eq!(*(p.get("b").unwrap().factory)(), 3, "a second registration replaces the first");
        assert_eq!(p.names(), vec!["a", "b"]);
        assert!(p.remove("a"));
        assert!(!p.remove("a"));
        assert_eq!(p.names(), vec!["b"]);
    }

    #[test]
    fn names_are_checked() {
        for ok in ["ect", "my-sched", "a_b.2"] {
            assert_eq!(check_name(ok), Ok(()), "{ok}");
        }
        for bad in ["", "Ect", "2x", "a:b", "a,b", "a b", "-x"] {
            assert!(check_name(bad).unwrap_err().starts_with("expected a name of lower-case"), "{bad}");
        }
    }
}
