//! What [`raw::scan_body`] found in a body, remembered by the body's bytes.
//!
//! In steady state Crossplane sends every observed resource again on every reconcile,
//! byte for byte the same until the resource changes; checking a body's bytes (prost's
//! verdict, the annotations the eager path reads) costs ~8 instructions a byte, hashing
//! them under one (foldhash: six independent multiply lanes over 96-byte blocks). A
//! scan's result is a function of the bytes and prost's budget alone, so it is remembered
//! under a 128-bit hash of the bytes keyed at random per process (two independently
//! keyed 64-bit hashes: no one can aim at a collision without the keys), with the length
//! and the budget. Rejections are not remembered (they end
//! the request, and are rare).
//!
//! Memory is bounded: at most [`ENTRIES`] results, each at most a few hundred bytes (a
//! result naming collection annotations longer than [`MAX_NAMES`] bytes is not kept); a
//! full shard is emptied, so a working set larger than the cache costs a hash per body
//! and finds nothing, never more memory.

use super::raw::{self, BodyScan, Reject};
use std::collections::HashMap;
use std::hash::BuildHasher;
use std::sync::{LazyLock, Mutex};

/// Bodies shorter than this are scanned every time: the scan costs about what hashing
/// and a lookup would.
pub(crate) const MIN_BYTES: usize = 128;
/// Results kept at most (over all shards).
pub(crate) const ENTRIES: usize = 1 << 16;
/// Collection annotation bytes a kept result may name.
const MAX_NAMES: usize = 512;
const SHARDS: usize = 16;

/// The bytes' two hashes, their length and the budget they were scanned with.
type Key = (u64, u64, u32, u32);

struct Cache {
    /// The two hashes' random keys: a shared seed and a per-hasher seed each.
    keys: [(foldhash::SharedSeed, u64); 2],
    shards: Vec<Mutex<HashMap<Key, BodyScan, ahash::RandomState>>>,
}

impl Cache {
    fn hash(&'static self, i: usize, bytes: &[u8]) -> u64 {
        let (shared, seed) = &self.keys[i];
        foldhash::fast::SeedableRandomState::with_seed(*seed, shared).hash_one(bytes)
    }
}

static CACHE: LazyLock<Cache> = LazyLock::new(|| {
    // Keys from the standard library's per-process random hash keys.
    let std_keys = std::hash::RandomState::new();
    let seed = |i: u64| std_keys.hash_one(i);
    Cache {
        keys: [
            (foldhash::SharedSeed::from_u64(seed(0)), seed(1)),
            (foldhash::SharedSeed::from_u64(seed(2)), seed(3)),
        ],
        shards: (0..SHARDS)
            .map(|_| Mutex::new(HashMap::with_hasher(ahash::RandomState::new())))
            .collect(),
    }
});

/// [`raw::scan_body`] of `bytes`, remembered for bodies of at least [`MIN_BYTES`].
pub(crate) fn scan_body(bytes: &[u8], budget: u32) -> Result<BodyScan, Reject> {
    let Ok(len) = u32::try_from(bytes.len()) else {
        return raw::scan_body(bytes, budget);
    };
    if bytes.len() < MIN_BYTES {
        return raw::scan_body(bytes, budget);
    }
    let cache: &'static Cache = &CACHE;
    let key = (cache.hash(0, bytes), cache.hash(1, bytes), len, budget);
    let shard = &cache.shards[(key.0 % SHARDS as u64) as usize];
    if let Some(found) = lock(shard).get(&key) {
        return Ok(found.clone());
    }
    let scan = raw::scan_body(bytes, budget)?;
    let names = scan
        .collection
        .as_ref()
        .map_or(0, |(base, index)| base.len() + index.len());
    if names <= MAX_NAMES {
        let mut map = lock(shard);
        if map.len() >= ENTRIES / SHARDS {
            map.clear();
        }
        map.insert(key, scan.clone());
    }
    Ok(scan)
}

/// The shard, even if a thread panicked holding it (a map of finished results is never
/// left half-written by a panic in `insert` or `clear`).
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Results kept now (for tests).
#[cfg(test)]
fn kept() -> usize {
    CACHE.shards.iter().map(|s| lock(s).len()).sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use prost::Message as _;
    use prost_types::value::Kind;
    use prost_types::{Struct, Value};

    fn s(x: &str) -> Value {
        Value {
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
                    Value {
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
                    Value {
                        kind: Some(Kind::StructValue(metadata)),
                    },
                ),
                ("data".to_string(), s(&"x".repeat(filler))),
            ]
            .into(),
        }
        .encode_to_vec()
    }

    #[test]
    fn a_remembered_scan_is_the_scan() {
        for (filler, base) in [(10, "svc"), (600, "svc"), (600, &*"b".repeat(700))] {
            let b = body("one", filler, base);
            let want = raw::scan_body(&b, raw::BODY_BUDGET);
            assert!(want.as_ref().is_ok_and(|s| s.collection.is_some()));
            // First (scanned and kept) and second (found) answers are the scan's.
            assert_eq!(scan_body(&b, raw::BODY_BUDGET), want);
            assert_eq!(scan_body(&b, raw::BODY_BUDGET), want);
        }
    }

    #[test]
    fn a_changed_byte_or_budget_is_scanned_again() {
        let b = body("two", 600, "svc");
        assert!(scan_body(&b, raw::BODY_BUDGET).is_ok());
        // The same bytes with the last string's last byte made invalid UTF-8: rejected,
        // not served from the cache.
        let mut bad = b.clone();
        let last = bad.len() - 1;
        bad[last] = 0xff;
        assert_eq!(scan_body(&bad, raw::BODY_BUDGET), Err(Reject));
        // The same bytes with no budget left: prost's verdict at that depth.
        assert_eq!(scan_body(&b, 1), raw::scan_body(&b, 1));
        assert_eq!(scan_body(&b, 1), Err(Reject));
    }

    #[test]
    fn the_cache_stays_within_its_entries() {
        for i in 0..ENTRIES + ENTRIES / 2 {
            let b = body(&format!("n{i}"), MIN_BYTES, "svc");
            assert!(scan_body(&b, raw::BODY_BUDGET).is_ok());
        }
        assert!(kept() <= ENTRIES, "{} results kept", kept());
    }
}
