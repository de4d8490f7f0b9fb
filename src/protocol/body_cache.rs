//! What a resource body's bytes gave before: the scan's result and decoded values,
//! remembered by the bytes.
//!
//! In steady state Crossplane sends the composite and every observed resource again on
//! every reconcile, byte for byte the same until the resource changes. Checking a body's
//! bytes (prost's verdict, the annotations the eager path reads) costs ~8 instructions a
//! byte and decoding what a program reads of it more; hashing them costs a fraction of
//! one (XXH3-128: SSE2 lanes over 64-byte stripes, ~0.6 instructions a byte). Both
//! results are functions of the bytes alone (and of prost's budget, or of the paths
//! read), so they are remembered under a 128-bit hash of the bytes keyed at random per
//! process (XXH3 under a secret of 192 random bytes: no one can aim at a collision
//! without it) with the length. Rejections and decoding errors are not remembered (they
//! end the request, and are rare).
//!
//! Memory is bounded: each of the two caches charges every entry its size (a scan's
//! collection annotations, a value's expanded size, and a fixed overhead) against half of
//! [`max_bytes`] (`fn-hcl serve --body-cache-mib`; 0 turns both off), and a full shard
//! is emptied, so a working set larger than a cache costs a hash per body and finds
//! nothing, never more memory.
//!
//! Each cache counts its lookups found and not found and its shards emptied, under the
//! shard's lock (no shared counter on the request path); [`stats`] adds them up for the
//! metrics endpoint (`fnhcl_body_cache_*`).

use super::raw::{self, BodyScan, Reject};
use crate::lower::reads::Paths;
use crate::value::Value;
use crate::value::meter::{Size, expanded_size};
use std::collections::HashMap;
use std::hash::BuildHasher;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{LazyLock, Mutex, MutexGuard};

/// Bodies shorter than this are checked and decoded every time: that costs about what
/// hashing and a lookup would.
pub(crate) const MIN_BYTES: usize = 128;
/// What both caches may hold together by default, in charged bytes.
pub const DEFAULT_MAX_BYTES: usize = 32 << 20;
static MAX_BYTES: AtomicUsize = AtomicUsize::new(DEFAULT_MAX_BYTES);

/// Sets what both caches may hold together, in bytes (0: nothing is remembered). Set
/// once, before serving: a cache already fuller than its new share empties shard by
/// shard as entries come.
pub fn set_max_bytes(bytes: usize) {
    MAX_BYTES.store(bytes, Ordering::Relaxed);
}

/// What both caches may hold together, in bytes.
pub fn max_bytes() -> usize {
    MAX_BYTES.load(Ordering::Relaxed)
}

/// What one shard of one cache may hold.
fn shard_share() -> usize {
    max_bytes() / 2 / SHARDS
}
/// The charge of an entry besides its contents: its key, its place in the map, a value's
/// paths.
const ENTRY_BYTES: usize = 128;
const SHARDS: usize = 16;

/// Who a body's bytes are: the two halves of the hash and the length.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Digest(u64, u64, u32);

/// XXH3's secret: 192 random bytes, drawn once per process from the standard library's
/// random hash keys (the size XXH3's own default secret has).
static SECRET: LazyLock<[u8; 192]> = LazyLock::new(|| {
    let std_keys = std::hash::RandomState::new();
    let mut secret = [0u8; 192];
    for (i, chunk) in (0u64..).zip(secret.chunks_exact_mut(8)) {
        chunk.copy_from_slice(&std_keys.hash_one(i).to_le_bytes());
    }
    secret
});

/// The digest of a body's bytes, when it is long enough to be remembered.
pub(crate) fn digest(bytes: &[u8]) -> Option<Digest> {
    let len = u32::try_from(bytes.len()).ok()?;
    if bytes.len() < MIN_BYTES || max_bytes() == 0 {
        return None;
    }
    let secret: &'static [u8; 192] = &SECRET;
    let h = xxhash_rust::xxh3::xxh3_128_with_secret(bytes, secret);
    Some(Digest((h >> 64) as u64, h as u64, len))
}

/// A shard, locked: a map of finished results is never left half-written by a panic, so
/// a poisoned lock is taken as it is.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Maps in shards, each emptied when what it holds would exceed its share of
/// [`max_bytes`].
struct Shards<K, V> {
    shards: Vec<Mutex<Shard<K, V>>>,
}

struct Shard<K, V> {
    map: HashMap<K, V, ahash::RandomState>,
    bytes: usize,
    hits: u64,
    misses: u64,
    flushes: u64,
}

impl<K: std::hash::Hash + Eq, V> Shards<K, V> {
    fn new() -> Self {
        Shards {
            shards: (0..SHARDS)
                .map(|_| {
                    Mutex::new(Shard {
                        map: HashMap::with_hasher(ahash::RandomState::new()),
                        bytes: 0,
                        hits: 0,
                        misses: 0,
                        flushes: 0,
                    })
                })
                .collect(),
        }
    }

    fn shard(&self, d: &Digest) -> MutexGuard<'_, Shard<K, V>> {
        lock(&self.shards[(d.0 % SHARDS as u64) as usize])
    }

    /// What `f` finds in the entry of `k`, taken while the shard is locked (no copy of
    /// the entry); counted as a hit or a miss.
    fn find<R>(&self, d: &Digest, k: &K, f: impl FnOnce(&V) -> Option<R>) -> Option<R> {
        let mut s = self.shard(d);
        let found = s.map.get(k).and_then(f);
        match found {
            Some(_) => s.hits += 1,
            None => s.misses += 1,
        }
        found
    }

    /// The counters of every shard, added up.
    fn counts(&self) -> Counts {
        let mut c = Counts::default();
        for m in &self.shards {
            let s = lock(m);
            c.hits += s.hits;
            c.misses += s.misses;
            c.flushes += s.flushes;
            c.entries += s.map.len() as u64;
            c.bytes += s.bytes as u64;
        }
        c
    }

    /// Charges `bytes` to the shard of `d` (emptying it first when it would hold more
    /// than its share of [`max_bytes`]) and lets `f` change its map; nothing when `bytes`
    /// exceeds a shard's share.
    fn charge(
        &self,
        d: &Digest,
        bytes: usize,
        f: impl FnOnce(&mut HashMap<K, V, ahash::RandomState>),
    ) {
        let share = shard_share();
        if bytes > share {
            return;
        }
        let mut s = self.shard(d);
        if s.bytes + bytes > share {
            s.map.clear();
            s.bytes = 0;
            s.flushes += 1;
        }
        s.bytes += bytes;
        f(&mut s.map);
    }

    /// Keeps `v` under `k`, charged `bytes`. (Another thread may have kept the same
    /// result meanwhile: it is then charged twice until the shard is next emptied, which
    /// only empties it sooner.)
    fn insert(&self, d: &Digest, k: K, v: V, bytes: usize) {
        self.charge(d, bytes, |m| {
            m.insert(k, v);
        });
    }
}

impl<K: std::hash::Hash + Eq, V: Clone> Shards<K, V> {
    fn get(&self, d: &Digest, k: &K) -> Option<V> {
        self.find(d, k, |v| Some(v.clone()))
    }
}

/// One cache's counters since the process started (hits, misses, flushes) and what it
/// holds now (entries, bytes).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Lookups that found the body's result.
    pub hits: u64,
    /// Lookups that did not (the body was then scanned or decoded).
    pub misses: u64,
    /// Shards emptied because an entry would have passed their share of [`max_bytes`].
    pub flushes: u64,
    /// Bodies remembered now.
    pub entries: u64,
    /// Bytes charged for them now.
    pub bytes: u64,
}

/// Both caches' counters and their bound, for the metrics endpoint.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// What both caches may hold together, in bytes ([`max_bytes`]).
    pub max_bytes: u64,
    /// The scans' cache.
    pub scans: Counts,
    /// The decoded values' cache.
    pub values: Counts,
}

/// The counters of both caches now.
pub fn stats() -> Stats {
    Stats {
        max_bytes: max_bytes() as u64,
        scans: SCANS.counts(),
        values: VALUES.counts(),
    }
}

static SCANS: LazyLock<Shards<(Digest, u32), BodyScan>> = LazyLock::new(Shards::new);

/// [`raw::scan_body`] of `bytes` (whose digest is `d`), remembered.
pub(crate) fn scan_body(bytes: &[u8], budget: u32, d: Option<Digest>) -> Result<BodyScan, Reject> {
    let Some(d) = d else {
        return raw::scan_body(bytes, budget);
    };
    if let Some(found) = SCANS.get(&d, &(d, budget)) {
        return Ok(found);
    }
    let scan = raw::scan_body(bytes, budget)?;
    let names = scan
        .collection
        .as_ref()
        .map_or(0, |(base, index)| base.len() + index.len());
    SCANS.insert(&d, (d, budget), scan.clone(), ENTRY_BYTES + names);
    Ok(scan)
}

static VALUES: LazyLock<Values> = LazyLock::new(Shards::new);

/// The value `decode` makes of the bytes whose digest is `d` for a reader of `paths`,
/// remembered: values are immutable and shared, so a request gets the one decoded for an
/// earlier one.
pub(crate) fn decoded<E>(
    d: Option<Digest>,
    paths: &Paths,
    decode: impl FnOnce() -> Result<Value, E>,
) -> Result<Value, E> {
    match d {
        Some(d) => VALUES.decoded(d, paths, decode),
        None => decode(),
    }
}

/// Decoded values: one per paths read, by the bytes' digest.
type Values = Shards<Digest, Vec<(Paths, Value)>>;

impl Values {
    /// [`decoded`] in this cache.
    fn decoded<E>(
        &self,
        d: Digest,
        paths: &Paths,
        decode: impl FnOnce() -> Result<Value, E>,
    ) -> Result<Value, E> {
        let found = self.find(&d, &d, |entry| {
            entry
                .iter()
                .find(|(p, _)| p == paths)
                .map(|(_, v)| v.clone())
        });
        if let Some(v) = found {
            return Ok(v);
        }
        let v = decode()?;
        // Its size as it is written out (shared parts counted each time), capped at what
        // a shard holds: anything larger is not kept.
        let cap = shard_share() as u64;
        let size = expanded_size(
            &v,
            Size {
                elements: cap / 32,
                bytes: cap,
            },
        );
        let bytes = size.bytes.saturating_add(size.elements.saturating_mul(32));
        let bytes = usize::try_from(bytes).unwrap_or(usize::MAX);
        let entry = (paths.clone(), v.clone());
        self.charge(&d, bytes.saturating_add(ENTRY_BYTES), |m| {
            m.entry(d).or_default().push(entry)
        });
        Ok(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use prost::Message as _;
    use prost_types::value::Kind;
    use prost_types::{Struct, Value as PValue};

    fn s(x: &str) -> PValue {
        PValue {
            kind: Some(Kind::StringValue(x.into())),
        }
    }

    fn body(name: &str, filler: usize, base: &str) -> Vec<u8> {
        let annotations = Struct {
            fields: [
                (crate::protocol::ANNOTATION_BASE_NAME.to_string(), s(base)),
                (crate::protocol::ANNOTATION_INDEX.to_string(), s("3")),
            ]
            .into(),
        };
        let metadata = Struct {
            fields: [
                ("name".to_string(), s(name)),
                (
                    "annotations".to_string(),
                    PValue {
                        kind: Some(Kind::StructValue(annotations)),
                    },
                ),
            ]
            .into(),
        };
        Struct {
            fields: [
                (
                    "metadata".to_string(),
                    PValue {
                        kind: Some(Kind::StructValue(metadata)),
                    },
                ),
                ("data".to_string(), s(&"x".repeat(filler))),
            ]
            .into(),
        }
        .encode_to_vec()
    }

    fn scan(b: &[u8], budget: u32) -> Result<BodyScan, Reject> {
        scan_body(b, budget, digest(b))
    }

    #[test]
    fn short_bodies_have_no_digest() {
        assert_eq!(digest(&[0; MIN_BYTES - 1]), None);
        assert!(digest(&[0; MIN_BYTES]).is_some());
        assert_ne!(digest(&[0; MIN_BYTES]), digest(&[1; MIN_BYTES]));
        assert_eq!(digest(&[7; 300]), digest(&[7; 300]));
    }

    /// Each byte of a body counts, wherever it lies (the stripes, the last partial
    /// block, the tail read apart): a flipped bit anywhere gives another digest.
    #[test]
    fn every_byte_is_in_the_digest() {
        for len in [MIN_BYTES, 240, 241, 1000, 1024 + 63] {
            let b: Vec<u8> = (0..len).map(|i| (i * 31 % 251) as u8).collect();
            let d = digest(&b);
            let mut seen = std::collections::HashSet::new();
            for i in 0..len {
                for bit in [0x01, 0x80] {
                    let mut c = b.clone();
                    c[i] ^= bit;
                    let e = digest(&c);
                    assert_ne!(e, d, "{len}: byte {i}");
                    assert!(seen.insert(e), "{len}: byte {i} collides");
                }
            }
        }
    }

    #[test]
    fn a_remembered_scan_is_the_scan() {
        for (filler, base) in [(10, "svc"), (600, "svc"), (600, &*"b".repeat(700))] {
            let b = body("one", filler, base);
            let want = raw::scan_body(&b, raw::BODY_BUDGET);
            assert!(want.as_ref().is_ok_and(|s| s.collection.is_some()));
            // First (scanned and kept) and second (found) answers are the scan's.
            assert_eq!(scan(&b, raw::BODY_BUDGET), want);
            assert_eq!(scan(&b, raw::BODY_BUDGET), want);
        }
    }

    #[test]
    fn a_changed_byte_or_budget_is_scanned_again() {
        let b = body("two", 600, "svc");
        assert!(scan(&b, raw::BODY_BUDGET).is_ok());
        // The same bytes with the last string's last byte made invalid UTF-8: rejected,
        // not served from the cache.
        let mut bad = b.clone();
        let last = bad.len() - 1;
        bad[last] = 0xff;
        assert_eq!(scan(&bad, raw::BODY_BUDGET), Err(Reject));
        // The same bytes with too little budget left: prost's verdict at that depth.
        assert_eq!(scan(&b, 1), raw::scan_body(&b, 1));
        assert_eq!(scan(&b, 1), Err(Reject));
    }

    #[test]
    fn a_remembered_value_is_the_one_for_its_paths() {
        let b = body("three", 600, "svc");
        let d = digest(&b);
        let whole = Paths::Whole;
        let name_only = Paths::Attrs(vec![(
            "metadata".into(),
            Paths::Attrs(vec![("name".into(), Paths::Whole)]),
        )]);
        // Values compared as their debug text (`Value` has no `==`: cty's equality is
        // an operation with unknowns).
        let text = |v: Value| format!("{v:?}");
        let decode = |p: &Paths| {
            crate::protocol::request::decode_body_paths(&b, p).map_or_else(|e| format!("{e}"), text)
        };
        // A cache of its own: the global one serves other tests meanwhile, which may
        // empty a shard between two calls here.
        let cache: Values = Shards::new();
        let d = d.expect("600 bytes have a digest");
        let mut calls = 0;
        let mut get = |p: &Paths| {
            let v = cache.decoded(d, p, || {
                calls += 1;
                crate::protocol::request::decode_body_paths(&b, p)
            });
            v.map_or_else(|e| format!("{e}"), text)
        };
        let w1 = get(&whole);
        let n1 = get(&name_only);
        let (w2, n2) = (get(&whole), get(&name_only));
        assert_eq!(calls, 2, "each paths decoded once");
        assert_eq!(w1, decode(&whole));
        assert_eq!(n1, decode(&name_only));
        assert_eq!((&w1, &n1), (&w2, &n2));
        assert_ne!(w1, n1);
        // Errors are not kept.
        let e = digest(&[9; 200]).expect("200 bytes have a digest");
        let failed: Result<Value, &str> = cache.decoded(e, &whole, || Err("bad"));
        assert_eq!(failed.err(), Some("bad"));
        let ok: Result<Value, &str> = cache.decoded(e, &whole, || Ok(Value::NULL));
        assert!(ok.is_ok_and(|v| v.is_null()));
        // Without a digest (a short body), nothing is remembered: decoded each time.
        let mut short = 0;
        for _ in 0..2 {
            let v: Result<Value, ()> = decoded(None, &whole, || {
                short += 1;
                Ok(Value::NULL)
            });
            assert!(v.is_ok());
        }
        assert_eq!(short, 2);
    }

    /// On a cache of its own (the global ones serve the other tests meanwhile).
    #[test]
    fn a_cache_stays_within_its_bytes() {
        let limit = max_bytes() / 2;
        let cache: Shards<Digest, u32> = Shards::new();
        let mut kept = 0;
        for i in 0..(limit / ENTRY_BYTES) * 3 / 2 {
            let Some(d) = digest(format!("{i:0200}").as_bytes()) else {
                panic!("200 bytes have a digest");
            };
            cache.insert(&d, d, 1, ENTRY_BYTES);
            if cache.get(&d, &d).is_some() {
                kept += 1;
            }
            let bytes = cache.counts().bytes;
            assert!(bytes <= limit as u64, "{bytes} bytes");
        }
        assert_eq!(
            kept,
            (limit / ENTRY_BYTES) * 3 / 2,
            "each kept when inserted"
        );
        let held = cache.counts().entries as usize;
        assert!(held * ENTRY_BYTES <= limit);
        assert!(
            held * ENTRY_BYTES >= limit / 4,
            "emptied shard by shard, not all at once"
        );
        // An entry larger than a shard's share is not kept.
        let d = digest(&[3; 200]).map(|d| (d, d));
        if let Some((d, k)) = d {
            cache.insert(&d, k, 2, limit / SHARDS + 1);
            assert_eq!(cache.get(&d, &k), None);
        }
    }

    /// On a cache of its own: every lookup counts once, as a hit or a miss, and every
    /// emptied shard once.
    #[test]
    fn lookups_and_flushes_are_counted() {
        let cache: Shards<Digest, u32> = Shards::new();
        let share = shard_share();
        let d = digest(&[5; 300]).expect("300 bytes have a digest");
        assert_eq!(cache.get(&d, &d), None);
        cache.insert(&d, d, 1, share / 2);
        assert_eq!(cache.get(&d, &d), Some(1));
        assert_eq!(cache.get(&d, &d), Some(1));
        let c = cache.counts();
        assert_eq!((c.hits, c.misses, c.flushes), (2, 1, 0));
        assert_eq!((c.entries, c.bytes), (1, (share / 2) as u64));
        // A second entry in the same shard that does not fit with the first empties it.
        let e = (0..)
            .filter_map(|i: u32| digest(&[i.to_le_bytes().as_slice(), &[0; 200]].concat()))
            .find(|e| e.0 % SHARDS as u64 == d.0 % SHARDS as u64 && *e != d)
            .expect("a digest in the same shard");
        cache.insert(&e, e, 2, share / 2 + 1);
        assert_eq!(cache.get(&d, &d), None);
        let c = cache.counts();
        assert_eq!((c.hits, c.misses, c.flushes), (2, 2, 1));
        assert_eq!((c.entries, c.bytes), (1, (share / 2 + 1) as u64));
        // The process-wide caches answer too (their numbers move with the other tests).
        assert_eq!(stats().max_bytes, max_bytes() as u64);
    }
}
