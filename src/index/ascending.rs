//! An ascending sequence of `u32`s (a dictionary's offsets), each still
//! read in constant time, in under half a `Vec<u32>`'s memory.
//!
//! The picker's searcher keeps every word dictionary's term and posting
//! offsets for as long as it lives: 12 million terms at 100,000 sessions,
//! 92 MB as `Vec<u32>`s, the largest part of its heap after the rows.
//! Neighbouring offsets differ by a term's length or a short posting list,
//! so each block of them is kept as its first value and, for the rest, the
//! difference from it in as few whole bytes as the block's range needs.

/// Values per block.
const BLOCK: usize = 64;

#[derive(Debug, Clone, Copy)]
struct Block {
    /// The block's first value; the others are kept as their difference from it.
    base: u32,
    /// Where the block's differences start in `bytes`.
    at: u32,
    /// Bytes per difference: 0 (all equal), 1, 2 or 4.
    width: u8,
}

#[derive(Debug, Default)]
pub struct Ascending {
    len: usize,
    blocks: Vec<Block>,
    bytes: Vec<u8>,
}

impl Ascending {
    /// The values of `words` (little-endian `u32`s, a multiple of 4 bytes),
    /// or `None` when one is below the value before it, or below the one
    /// before plus 1 when `strict`.
    pub fn from_le_bytes(words: &[u8], strict: bool) -> Option<Ascending> {
        if words.len() % 4 != 0 {
            return None;
        }
        let values = words
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]));
        let mut out = Ascending {
            len: 0,
            blocks: Vec::with_capacity(words.len() / 4 / BLOCK + 1),
            bytes: Vec::new(),
        };
        let mut block = [0u32; BLOCK];
        let mut n = 0;
        let mut last: Option<u32> = None;
        for v in values {
            if let Some(l) = last {
                if v < l || (strict && v == l) {
                    return None;
                }
            }
            last = Some(v);
            block[n] = v;
            n += 1;
            if n == BLOCK {
                out.push_block(&block)?;
                n = 0;
            }
        }
        if n > 0 {
            out.push_block(&block[..n])?;
        }
        out.bytes.shrink_to_fit();
        Some(out)
    }

    fn push_block(&mut self, values: &[u32]) -> Option<()> {
        let (base, top) = (values[0], values[values.len() - 1]);
        let width: u8 = match top - base {
            0 => 0,
            1..=0xff => 1,
            0x100..=0xffff => 2,
            _ => 4,
        };
        self.blocks.push(Block {
            base,
            at: u32::try_from(self.bytes.len()).ok()?,
            width,
        });
        for &v in values {
            let d = v - base;
            self.bytes
                .extend_from_slice(&d.to_le_bytes()[..usize::from(width)]);
        }
        self.len += values.len();
        Some(())
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Value `i`, or `None` past the end.
    #[inline]
    pub fn get(&self, i: usize) -> Option<u32> {
        if i >= self.len {
            return None;
        }
        let b = self.blocks[i / BLOCK];
        let k = b.at as usize + (i % BLOCK) * usize::from(b.width);
        let d = match b.width {
            0 => 0,
            1 => u32::from(self.bytes[k]),
            2 => u32::from(u16::from_le_bytes([self.bytes[k], self.bytes[k + 1]])),
            _ => u32::from_le_bytes([
                self.bytes[k],
                self.bytes[k + 1],
                self.bytes[k + 2],
                self.bytes[k + 3],
            ]),
        };
        Some(b.base + d)
    }

    /// Value `i`; panics past the end, as indexing a slice does.
    #[inline]
    pub fn at(&self, i: usize) -> u32 {
        match self.get(i) {
            Some(v) => v,
            None => panic!("index {i} past {} values", self.len),
        }
    }

    pub fn last(&self) -> Option<u32> {
        self.len.checked_sub(1).and_then(|i| self.get(i))
    }

    /// The first index in `lo..hi` whose value fails `pred` (`hi` when all
    /// pass), for a `pred` that holds up to some value and fails after:
    /// what `slice::partition_point` gives on `values[lo..hi]`, plus `lo`.
    pub fn partition_point_in(&self, lo: usize, hi: usize, pred: impl Fn(u32) -> bool) -> usize {
        let (mut lo, mut hi) = (lo, hi.min(self.len));
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if pred(self.at(mid)) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }

    /// The heap bytes it holds.
    #[cfg(test)]
    pub fn heap_bytes(&self) -> usize {
        self.blocks.capacity() * std::mem::size_of::<Block>() + self.bytes.capacity()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn le(values: &[u32]) -> Vec<u8> {
        values.iter().flat_map(|v| v.to_le_bytes()).collect()
    }

    #[test]
    fn every_value_reads_back_whatever_its_block_needs() {
        // Blocks of equal values, of small, middling and huge steps, and a
        // short last block.
        let mut values = vec![7u32; BLOCK];
        let mut v = 7u32;
        for step in [1u32, 3, 200, 70_000, 40_000_000] {
            for _ in 0..BLOCK + 5 {
                v += step;
                values.push(v);
            }
        }
        values.push(u32::MAX);
        let a = Ascending::from_le_bytes(&le(&values), false).unwrap();
        assert_eq!(a.len(), values.len());
        for (i, &v) in values.iter().enumerate() {
            assert_eq!(a.get(i), Some(v), "value {i}");
        }
        assert_eq!(a.get(values.len()), None);
        assert_eq!(a.last(), Some(u32::MAX));
        // Far less than four bytes a value for the small steps.
        let small: Vec<u32> = (0..10_000u32).map(|i| i * 25).collect();
        let s = Ascending::from_le_bytes(&le(&small), true).unwrap();
        assert!(s.heap_bytes() < small.len() * 5 / 2, "{}", s.heap_bytes());
    }

    #[test]
    fn a_value_out_of_order_is_refused() {
        assert!(Ascending::from_le_bytes(&le(&[1, 2, 2, 3]), false).is_some());
        assert!(Ascending::from_le_bytes(&le(&[1, 2, 2, 3]), true).is_none());
        assert!(Ascending::from_le_bytes(&le(&[1, 5, 4]), false).is_none());
        assert!(Ascending::from_le_bytes(&[1, 2, 3], false).is_none());
        let empty = Ascending::from_le_bytes(&[], true).unwrap();
        assert!(empty.is_empty());
        assert_eq!(empty.last(), None);
    }

    #[test]
    fn partition_point_in_agrees_with_the_slice() {
        let values: Vec<u32> = (0..1_000u32).map(|i| i * i / 7).collect();
        let a = Ascending::from_le_bytes(&le(&values), false).unwrap();
        for pos in [0u32, 1, 5, 500, 70_000, 142_000, 200_000] {
            for (lo, hi) in [(0, 1_000), (10, 900), (300, 301), (999, 2_000), (0, 0)] {
                let want =
                    lo + values[lo..hi.min(values.len()).max(lo)].partition_point(|&v| v <= pos);
                assert_eq!(
                    a.partition_point_in(lo, hi, |v| v <= pos),
                    want,
                    "{pos} in {lo}..{hi}"
                );
            }
        }
    }
}
