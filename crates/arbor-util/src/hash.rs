//! A fast hash for in-memory maps keyed by terms, ids and paths.

use std::hash::Hasher;

/// FxHash: a fast non-cryptographic hash for terms, paths and fingerprints
/// (its keys come from the user's own files; a collision only costs a
/// slower lookup).
#[derive(Default, Clone, Copy)]
pub struct FxHasher {
    hash: u64,
}

const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl FxHasher {
    #[inline]
    fn add(&mut self, w: u64) {
        self.hash = (self.hash.rotate_left(5) ^ w).wrapping_mul(SEED);
    }
}

impl Hasher for FxHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            #[allow(clippy::unwrap_used, reason = "chunks_exact(8) yields 8-byte slices")]
            self.add(u64::from_le_bytes(c.try_into().unwrap()));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut w = [0u8; 8];
            w[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(w));
        }
        self.add(bytes.len() as u64);
    }
    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.add(i as u64);
    }
    #[inline]
    fn write_u32(&mut self, i: u32) {
        self.add(i as u64);
    }
    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.add(i);
    }
    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }
    #[inline]
    fn finish(&self) -> u64 {
        self.hash
    }
}

pub type FxBuild = std::hash::BuildHasherDefault<FxHasher>;

/// The hash of some bytes that tables placed by hashes made beforehand
/// (on other threads, or with the thing hashed) agree on.
pub fn bytes_hash(bytes: &[u8]) -> u64 {
    use std::hash::BuildHasher;
    FxBuild::default().hash_one(bytes)
}
