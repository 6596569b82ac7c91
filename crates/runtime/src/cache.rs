//! [`KernelCache`]: compiled code by key, shared by every function of the process, each key
//! compiled once even when several threads ask for it at the same time.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use ragtime_core::{Error, Result};

/// One key's entry: the value once compiled, and the lock its compilers queue on.
#[derive(Debug)]
struct Slot<V> {
    value: OnceLock<V>,
    compiling: Mutex<()>,
}

/// A cache of compiled values `V` (kernels: machine code with its plan) keyed by `K` (what the
/// code was compiled from). [`KernelCache::get_or_compile`] returns the cached value or compiles
/// it; a key is compiled at most once at a time and, once compiled, never again (until
/// [`KernelCache::clear`]), while different keys compile in parallel. A failed compile caches
/// nothing: the next request tries again.
///
/// ```
/// use ragtime_runtime::KernelCache;
/// let cache: KernelCache<&str, usize> = KernelCache::new("demo");
/// assert_eq!(cache.get_or_compile(&"abc", || Ok(3))?, 3);
/// assert_eq!(cache.get_or_compile(&"abc", || unreachable!("compiled once"))?, 3);
/// let stats = cache.stats();
/// assert_eq!((stats.entries, stats.compiles, stats.hits), (1, 1, 1));
/// # Ok::<(), ragtime_core::Error>(())
/// ```
#[derive(Debug)]
pub struct KernelCache<K, V> {
    /// Names the cache in errors.
    name: &'static str,
    slots: Mutex<HashMap<K, Arc<Slot<V>>>>,
    hits: AtomicUsize,
    compiles: AtomicUsize,
}

/// How much a [`KernelCache`] holds and how it has been used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CacheStats {
    /// Values held (compiled and not cleared).
    pub entries: usize,
    /// Requests answered from the cache.
    pub hits: usize,
    /// Successful compiles (each a request the cache could not answer).
    pub compiles: usize,
}

impl<K: Eq + Hash + Clone, V: Clone> KernelCache<K, V> {
    /// An empty cache; `name` names it in errors.
    pub fn new(name: &'static str) -> Self {
        KernelCache { name, slots: Mutex::default(), hits: AtomicUsize::new(0), compiles: AtomicUsize::new(0) }
    }

    /// The value of `key`: the cached one, or `compile()`'s, which is then cached. While one
    /// thread compiles a key, others asking for it wait for its result instead of compiling it
    /// again; the cache's own lock is not held while compiling.
    pub fn get_or_compile(&self, key: &K, compile: impl FnOnce() -> Result<V>) -> Result<V> {
        let slot = {
            let mut slots = self.slots.lock().map_err(|_| self.poisoned())?;
            match slots.get(key) {
                Some(slot) => slot.clone(),
                None => {
                    let slot = Arc::new(Slot { value: OnceLock::new(), compiling: Mutex::new(()) });
                    slots.insert(key.clone(), slot.clone());
                    slot
                }
            }
        };
        if let Some(v) = slot.value.get() {
            self.hits.fetch_add(1, Ordering::Relaxed);
            return Ok(v.clone());
        }
        let _compiling = slot.compiling.lock().map_err(|_| self.poisoned())?;
        // Another thread may have compiled it while this one waited.
        if let Some(v) = slot.value.get() {
            self.hits.fetch_add(1, Ordering::Relaxed);
            return Ok(v.clone());
        }
        let v = compile()?;
        self.compiles.fetch_add(1, Ordering::Relaxed);
        Ok(slot.value.get_or_init(|| v).clone())
    }

    /// Forgets every value (for measuring cold compiles; values already handed out stay valid).
    pub fn clear(&self) {
        if let Ok(mut slots) = self.slots.lock() {
            slots.clear();
        }
    }

    /// The number of values held.
    pub fn len(&self) -> usize {
        self.slots.lock().map(|s| s.values().filter(|slot| slot.value.get().is_some()).count()).unwrap_or(0)
    }

    /// Whether the cache holds no value.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Entries held, hits and compiles so far.
    pub fn stats(&self) -> CacheStats {
        CacheStats {
            entries: self.len(),
            hits: self.hits.load(Ordering::Relaxed),
            compiles: self.compiles.load(Ordering::Relaxed),
        }
    }

    fn poisoned(&self) -> Error {
        Error::graph(format!("the {} is poisoned (a compile panicked)", self.name))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc;
    use std::sync::Barrier;
    use std::time::Duration;

    use super::*;

    #[test]
    fn values_are_found_by_key_and_counted() {
        let cache: KernelCache<u32, String> = KernelCache::new("test cache");
        assert!(cache.is_empty());
        assert_eq!(cache.get_or_compile(&1, || Ok("one".into())).unwrap(), "one");
        assert_eq!(cache.get_or_compile(&2, || Ok("two".into())).unwrap(), "two");
        assert_eq!(cache.get_or_compile(&1, || Ok("again".into())).unwrap(), "one", "a key compiles once");
        assert_eq!(cache.stats(), CacheStats { entries: 2, hits: 1, compiles: 2 });
        cache.clear();
        assert_eq!(cache.len(), 0);
        assert_eq!(cache.get_or_compile(&1, || Ok("anew".into())).unwrap(), "anew", "cleared keys compile anew");
        assert_eq!(cache.stats(), CacheStats { entries: 1, hits: 1, compiles: 3 });
    }

    #[test]
    fn a_failed_compile_is_not_cached() {
        let cache: KernelCache<u32, u32> = KernelCache::new("test cache");
        let e = cache.get_or_compile(&7, || Err(Error::graph("no code"))).unwrap_err();
        assert!(e.to_string().contains("no code"), "{e}");
        assert_eq!(cache.stats(), CacheStats::default(), "nothing held, nothing compiled");
        assert_eq!(cache.get_or_compile(&7, || Ok(49)).unwrap(), 49, "the next request compiles");
    }

    #[test]
    fn threads_asking_for_one_key_at_once_compile_it_once() {
        let cache: KernelCache<&str, usize> = KernelCache::new("test cache");
        let compiled = AtomicUsize::new(0);
        let threads = 8;
        let start = Barrier::new(threads);
        let got: Vec<usize> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..threads)
                .map(|_| {
                    s.spawn(|| {
                        start.wait();
                        cache
                            .get_or_compile(&"k", || {
                                // Slow enough that the other threads arrive while it compiles.
                                std::thread::sleep(Duration::from_millis(50));
                                Ok(compiled.fetch_add(1, Ordering::SeqCst) + 100)
                            })
                            .unwrap()
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert_eq!(compiled.load(Ordering::SeqCst), 1, "one compile for {threads} requests");
        assert!(got.iter().all(|&v| v == 100), "every thread gets the one value: {got:?}");
        assert_eq!(cache.stats(), CacheStats { entries: 1, hits: threads - 1, compiles: 1 });
    }

    #[test]
    fn different_keys_compile_in_parallel() {
        // The compile of `a` waits until `b` has been compiled on another thread: if compiling one
        // key held up the other, `a` would time out.
        let cache: KernelCache<char, char> = KernelCache::new("test cache");
        let (b_done, b_compiled) = mpsc::channel();
        std::thread::scope(|s| {
            let cache = &cache;
            let a = s.spawn(move || {
                cache.get_or_compile(&'a', || {
                    b_compiled
                        .recv_timeout(Duration::from_secs(20))
                        .map_err(|_| Error::graph("b waited for a: keys compiled one at a time"))?;
                    Ok('A')
                })
            });
            std::thread::sleep(Duration::from_millis(20));
            assert_eq!(cache.get_or_compile(&'b', || Ok('B')).unwrap(), 'B');
            b_done.send(()).unwrap();
            assert_eq!(a.join().unwrap().unwrap(), 'A');
        });
        assert_eq!(cache.len(), 2);
    }
}
