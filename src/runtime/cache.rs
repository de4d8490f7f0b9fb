//! The compiled-program cache: every reconcile of every XR sends the same few programs,
//! so each distinct program is parsed and compiled once and shared (`Arc`) by all later
//! calls. Compile errors are cached too, so a broken composition is not re-parsed on
//! every reconcile.
//!
//! Keyed by a 64-bit hash of the program text and checked for equality against the stored
//! text, so a hash collision can never run the wrong program. Bounded by entries and by
//! (estimated) bytes with least-recently-used eviction. Sharded, so concurrent hits on
//! different programs do not contend on one lock; concurrent first calls of one program
//! compile it once (the others wait for that compilation).
//!
//! A fleet runs one composition for thousands of XRs, so a thread's next request most
//! often carries the program its last one did: each thread remembers the last entry it
//! used, and a request whose program is that one's text (compared whole) takes it without
//! hashing the text or locking a shard. The entry's use is still recorded (least recently
//! used stays exact), and an evicted or cleared entry is not taken from the memo. A memo
//! does not keep its entry alive: the cache's bounds hold whatever the threads remember.

use crate::lower::ir::{LoadError, Program};
use std::cell::RefCell;
use std::collections::HashMap;
use std::hash::BuildHasher;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::{Duration, Instant};

/// A compiled program, or the diagnostics that stopped it from loading.
pub type Compiled = Result<Arc<Program>, Arc<LoadError>>;

const SHARDS: usize = 16;

/// Limits of a [`ProgramCache`].
#[derive(Clone, Copy, Debug)]
pub struct CacheLimits {
    /// Most programs kept.
    pub max_entries: usize,
    /// Most bytes kept (estimated from the program text: see [`estimate_bytes`]).
    pub max_bytes: usize,
}

impl Default for CacheLimits {
    fn default() -> Self {
        CacheLimits {
            max_entries: 1024,
            max_bytes: 256 << 20,
        }
    }
}

/// Counters for metrics and tests.
#[derive(Debug, Default)]
pub struct CacheStats {
    pub hits: AtomicU64,
    pub misses: AtomicU64,
    pub evictions: AtomicU64,
    pub compiles: AtomicU64,
    pub compile_nanos: AtomicU64,
}

struct Entry {
    slot: Arc<Slot>,
    bytes: usize,
}

/// What an entry shares with the threads that remember it (see [`Recent`]).
struct Slot {
    /// The program's text, compared whole on every lookup.
    source: Box<str>,
    compiled: OnceLock<Compiled>,
    /// The cache's tick at the last use, for least-recently-used eviction.
    last_used: AtomicU64,
    /// Set when the entry leaves the cache: a thread's memo no longer answers with it.
    evicted: AtomicBool,
}

/// The entry a thread used last, of which cache. Weak: an entry the cache lets go is
/// freed (its program with it) though a thread remembers it; only the slot's block stays.
struct Recent {
    cache: u64,
    slot: Weak<Slot>,
}

thread_local! {
    static RECENT: RefCell<Option<Recent>> = const { RefCell::new(None) };
}

/// Tells caches apart in a thread's memo (tests and `bench` make several).
static NEXT_CACHE_ID: AtomicU64 = AtomicU64::new(0);

#[derive(Default)]
struct Shard {
    /// By the source's hash (already mixed: foldhash's few instructions place it).
    map: HashMap<u64, Vec<Entry>, foldhash::fast::FixedState>,
    entries: usize,
    bytes: usize,
}

/// A bounded, sharded LRU cache of compiled programs.
pub struct ProgramCache {
    shards: Vec<Mutex<Shard>>,
    limits: CacheLimits,
    tick: AtomicU64,
    hasher: foldhash::fast::FixedState,
    id: u64,
    /// Test hook: hash every program to this value, to exercise collisions.
    constant_hash: Option<u64>,
    pub stats: CacheStats,
}

/// Estimated memory of a compiled program: bytecode, constants and the retained source
/// are proportional to the text; the factor was measured on the conformance programs.
pub fn estimate_bytes(source: &str) -> usize {
    source.len() * 12 + 4096
}

impl ProgramCache {
    pub fn new(limits: CacheLimits) -> ProgramCache {
        ProgramCache {
            shards: (0..SHARDS).map(|_| Mutex::new(Shard::default())).collect(),
            limits: CacheLimits {
                max_entries: limits.max_entries.max(1),
                max_bytes: limits.max_bytes.max(1),
            },
            tick: AtomicU64::new(0),
            hasher: foldhash::fast::FixedState::with_seed(0x243f_6a88_85a3_08d3),
            id: NEXT_CACHE_ID.fetch_add(1, Ordering::Relaxed),
            constant_hash: None,
            stats: CacheStats::default(),
        }
    }

    fn hash(&self, source: &str) -> u64 {
        if let Some(h) = self.constant_hash {
            return h;
        }
        self.hasher.hash_one(source.as_bytes())
    }

    /// The compiled program for `source`, compiling it with `compile` on a miss.
    pub fn get_or_compile(
        &self,
        source: &str,
        compile: impl FnOnce(&str) -> Result<Program, LoadError>,
    ) -> Compiled {
        if let Some(hit) = self.recent(source) {
            return hit;
        }
        let hash = self.hash(source);
        let shard_index = (hash as usize) % SHARDS;
        let now = self.tick.fetch_add(1, Ordering::Relaxed);
        let slot = {
            let mut shard = lock(&self.shards[shard_index]);
            let found = shard
                .map
                .get_mut(&hash)
                .and_then(|v| v.iter_mut().find(|e| *e.slot.source == *source))
                .map(|e| {
                    e.slot.last_used.store(now, Ordering::Relaxed);
                    e.slot.clone()
                });
            match found {
                Some(hit) => {
                    self.stats.hits.fetch_add(1, Ordering::Relaxed);
                    hit
                }
                None => {
                    self.stats.misses.fetch_add(1, Ordering::Relaxed);
                    let slot = Arc::new(Slot {
                        source: source.into(),
                        compiled: OnceLock::new(),
                        last_used: AtomicU64::new(now),
                        evicted: AtomicBool::new(false),
                    });
                    let bytes = estimate_bytes(source);
                    shard.map.entry(hash).or_default().push(Entry {
                        slot: slot.clone(),
                        bytes,
                    });
                    shard.entries += 1;
                    shard.bytes += bytes;
                    self.evict(&mut shard);
                    slot
                }
            }
        };
        // Outside the shard lock: concurrent callers of the same program wait here for
        // the one compilation; callers of other programs are not blocked.
        let compiled = slot
            .compiled
            .get_or_init(|| {
                let start = Instant::now();
                let out = match compile(source) {
                    Ok(p) => Ok(Arc::new(p)),
                    Err(d) => Err(Arc::new(d)),
                };
                self.stats.compiles.fetch_add(1, Ordering::Relaxed);
                self.stats
                    .compile_nanos
                    .fetch_add(start.elapsed().as_nanos() as u64, Ordering::Relaxed);
                out
            })
            .clone();
        let recent = Recent {
            cache: self.id,
            slot: Arc::downgrade(&slot),
        };
        // A thread being torn down has no memo; the next request goes the long way.
        let _ = RECENT.try_with(|r| *r.borrow_mut() = Some(recent));
        compiled
    }

    /// The thread's last entry if `source` is its program's text, still cached and
    /// compiled: its use recorded as a hit.
    #[inline]
    fn recent(&self, source: &str) -> Option<Compiled> {
        RECENT
            .try_with(|r| {
                let r = r.borrow();
                let r = r.as_ref()?;
                if r.cache != self.id {
                    return None;
                }
                let slot = r.slot.upgrade()?;
                if *slot.source != *source || slot.evicted.load(Ordering::Relaxed) {
                    return None;
                }
                let compiled = slot.compiled.get()?.clone();
                let now = self.tick.fetch_add(1, Ordering::Relaxed);
                slot.last_used.store(now, Ordering::Relaxed);
                self.stats.hits.fetch_add(1, Ordering::Relaxed);
                Some(compiled)
            })
            .ok()
            .flatten()
    }

    /// Evict least-recently-used entries of a shard until it is within its share.
    fn evict(&self, shard: &mut Shard) {
        let max_entries = self.limits.max_entries.div_ceil(SHARDS).max(1);
        let max_bytes = self.limits.max_bytes.div_ceil(SHARDS).max(1);
        while shard.entries > max_entries || (shard.bytes > max_bytes && shard.entries > 1) {
            let Some((&hash, idx)) = shard
                .map
                .iter()
                .flat_map(|(h, v)| {
                    v.iter()
                        .enumerate()
                        .map(move |(i, e)| ((h, i), e.slot.last_used.load(Ordering::Relaxed)))
                })
                .min_by_key(|(_, t)| *t)
                .map(|(k, _)| k)
            else {
                break;
            };
            if let Some(v) = shard.map.get_mut(&hash) {
                let e = v.swap_remove(idx);
                e.slot.evicted.store(true, Ordering::Relaxed);
                shard.entries -= 1;
                shard.bytes -= e.bytes;
                if v.is_empty() {
                    shard.map.remove(&hash);
                }
                self.stats.evictions.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    /// Number of cached programs.
    pub fn len(&self) -> usize {
        self.shards.iter().map(|s| lock(s).entries).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Estimated bytes held.
    pub fn bytes(&self) -> usize {
        self.shards.iter().map(|s| lock(s).bytes).sum()
    }

    /// Drop every entry (for `fn-hcl bench --cold`).
    pub fn clear(&self) {
        for s in &self.shards {
            let mut shard = lock(s);
            for e in shard.map.values().flatten() {
                e.slot.evicted.store(true, Ordering::Relaxed);
            }
            *shard = Shard::default();
        }
    }

    /// Total time spent compiling.
    pub fn compile_time(&self) -> Duration {
        Duration::from_nanos(self.stats.compile_nanos.load(Ordering::Relaxed))
    }
}

/// Lock a shard, recovering from a poisoned lock (a panic while holding it cannot leave
/// the map inconsistent: every mutation is a single insert or remove).
fn lock(m: &Mutex<Shard>) -> std::sync::MutexGuard<'_, Shard> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lower::ir::compile_txtar;
    use std::sync::atomic::Ordering::Relaxed;

    fn prog(i: usize) -> String {
        format!("-- main.hcl --\nlocals {{\n  x = {i}\n}}\n")
    }

    #[test]
    fn compiles_once_then_hits() {
        let c = ProgramCache::new(CacheLimits::default());
        let a = c.get_or_compile(&prog(1), compile_txtar).expect("compiles");
        let b = c.get_or_compile(&prog(1), compile_txtar).expect("compiles");
        assert!(Arc::ptr_eq(&a, &b));
        assert_eq!(c.stats.compiles.load(Relaxed), 1);
        assert_eq!(c.stats.hits.load(Relaxed), 1);
        assert_eq!(c.stats.misses.load(Relaxed), 1);
        assert_eq!(c.len(), 1);
    }

    #[test]
    fn a_hash_collision_never_returns_the_wrong_program() {
        let mut c = ProgramCache::new(CacheLimits::default());
        c.constant_hash = Some(7);
        let a = c.get_or_compile(&prog(1), compile_txtar).expect("compiles");
        let b = c.get_or_compile(&prog(2), compile_txtar).expect("compiles");
        assert!(!Arc::ptr_eq(&a, &b));
        assert_eq!(c.stats.compiles.load(Relaxed), 2);
        let a2 = c.get_or_compile(&prog(1), compile_txtar).expect("compiles");
        assert!(Arc::ptr_eq(&a, &a2));
    }

    #[test]
    fn compile_errors_are_cached_too() {
        let c = ProgramCache::new(CacheLimits::default());
        let bad = "-- main.hcl --\nresource {\n";
        let e1 = c.get_or_compile(bad, compile_txtar).err().expect("fails");
        let e2 = c.get_or_compile(bad, compile_txtar).err().expect("fails");
        assert!(Arc::ptr_eq(&e1, &e2));
        assert!(e1.message().starts_with("evaluate hcl: main.hcl:"));
        assert_eq!(c.stats.compiles.load(Relaxed), 1);
    }

    #[test]
    fn stays_within_its_entry_bound() {
        let c = ProgramCache::new(CacheLimits {
            max_entries: 32,
            max_bytes: usize::MAX,
        });
        for i in 0..1000 {
            let _ = c.get_or_compile(&prog(i), compile_txtar);
        }
        assert!(c.len() <= 32 + SHARDS, "len {}", c.len());
        assert!(c.stats.evictions.load(Relaxed) >= 1000 - 32 - SHARDS as u64);
    }

    #[test]
    fn stays_within_its_byte_bound() {
        let c = ProgramCache::new(CacheLimits {
            max_entries: usize::MAX,
            max_bytes: 64 * 1024,
        });
        for i in 0..500 {
            let _ = c.get_or_compile(&prog(i), compile_txtar);
        }
        assert!(c.bytes() <= 64 * 1024 + SHARDS * estimate_bytes(&prog(999)));
    }

    /// A cache whose every text hashes alike, so all go to one shard, which holds
    /// `entries` of them: eviction at a known point.
    fn one_shard(entries: usize) -> ProgramCache {
        let mut c = ProgramCache::new(CacheLimits {
            max_entries: entries * SHARDS,
            max_bytes: usize::MAX,
        });
        c.constant_hash = Some(7);
        c
    }

    /// Runs `f` on a thread of its own (a memo of its own), as another worker would.
    fn elsewhere<T: Send>(f: impl FnOnce() -> T + Send) -> T {
        std::thread::scope(|s| s.spawn(f).join().expect("thread"))
    }

    #[test]
    fn a_thread_takes_its_last_program_from_its_memo_as_a_hit() {
        let c = ProgramCache::new(CacheLimits::default());
        let a = c.get_or_compile(&prog(1), compile_txtar).expect("compiles");
        for _ in 0..3 {
            let b = c.get_or_compile(&prog(1), compile_txtar).expect("compiles");
            assert!(Arc::ptr_eq(&a, &b));
        }
        // Another text is not taken from the memo, nor the same text from another cache.
        let other = c.get_or_compile(&prog(2), compile_txtar).expect("compiles");
        assert!(!Arc::ptr_eq(&a, &other));
        let d = ProgramCache::new(CacheLimits::default());
        let a_in_d = d.get_or_compile(&prog(2), compile_txtar).expect("compiles");
        assert!(!Arc::ptr_eq(&other, &a_in_d));
        assert_eq!(d.stats.compiles.load(Relaxed), 1);
        assert_eq!(c.stats.hits.load(Relaxed), 3);
        assert_eq!(c.stats.misses.load(Relaxed), 2);
        assert_eq!(c.stats.compiles.load(Relaxed), 2);
    }

    #[test]
    fn an_entry_evicted_by_another_thread_is_not_taken_from_the_memo() {
        let c = one_shard(1);
        let a = c.get_or_compile(&prog(1), compile_txtar).expect("compiles");
        elsewhere(|| c.get_or_compile(&prog(2), compile_txtar).is_ok());
        assert_eq!(c.stats.evictions.load(Relaxed), 1);
        let again = c.get_or_compile(&prog(1), compile_txtar).expect("compiles");
        assert!(!Arc::ptr_eq(&a, &again), "an evicted program was reused");
        assert_eq!(c.stats.compiles.load(Relaxed), 3);
        assert_eq!(c.stats.hits.load(Relaxed), 0);
        assert_eq!(c.len(), 1);
    }

    #[test]
    fn a_memo_does_not_keep_an_evicted_program_alive() {
        let c = one_shard(1);
        let program = Arc::downgrade(&c.get_or_compile(&prog(1), compile_txtar).expect("compiles"));
        assert!(program.upgrade().is_some(), "cached");
        // This thread remembers prog 1; another evicts it.
        elsewhere(|| c.get_or_compile(&prog(2), compile_txtar).is_ok());
        assert!(
            program.upgrade().is_none(),
            "an evicted program outlived its entry"
        );
    }

    #[test]
    fn uses_through_the_memo_keep_an_entry_recently_used() {
        // One shard of two entries: prog 1 is used through this thread's memo after prog
        // 2 came, so prog 3 evicts prog 2.
        let c = one_shard(2);
        let a = c.get_or_compile(&prog(1), compile_txtar).expect("compiles");
        elsewhere(|| c.get_or_compile(&prog(2), compile_txtar).is_ok());
        let b = c.get_or_compile(&prog(1), compile_txtar).expect("compiles");
        assert!(Arc::ptr_eq(&a, &b));
        elsewhere(|| c.get_or_compile(&prog(3), compile_txtar).is_ok());
        assert_eq!(c.stats.evictions.load(Relaxed), 1);
        let a_elsewhere = elsewhere(|| c.get_or_compile(&prog(1), compile_txtar));
        assert!(Arc::ptr_eq(&a, &a_elsewhere.expect("compiles")));
        assert_eq!(c.stats.compiles.load(Relaxed), 3);
        elsewhere(|| c.get_or_compile(&prog(2), compile_txtar).is_ok());
        assert_eq!(
            c.stats.compiles.load(Relaxed),
            4,
            "prog 2 was the one evicted"
        );
    }

    #[test]
    fn clear_also_empties_the_threads_memos() {
        // `bench --cold` clears the cache before each run to measure compiling.
        let c = ProgramCache::new(CacheLimits::default());
        let a = c.get_or_compile(&prog(1), compile_txtar).expect("compiles");
        c.clear();
        let b = c.get_or_compile(&prog(1), compile_txtar).expect("compiles");
        assert!(!Arc::ptr_eq(&a, &b));
        assert_eq!(c.stats.compiles.load(Relaxed), 2);
    }

    #[test]
    fn concurrent_first_calls_compile_once() {
        let c = Arc::new(ProgramCache::new(CacheLimits::default()));
        let threads: Vec<_> = (0..8)
            .map(|_| {
                let c = c.clone();
                std::thread::spawn(move || c.get_or_compile(&prog(42), compile_txtar).is_ok())
            })
            .collect();
        for t in threads {
            assert!(t.join().unwrap_or(false));
        }
        assert_eq!(c.stats.compiles.load(Relaxed), 1);
        c.clear();
        assert!(c.is_empty());
    }
}
