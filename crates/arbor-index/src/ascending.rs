//! An ascending sequence of `u32`s (a dictionary's offsets), each still
//! read in a few nanoseconds, in about a third of a `Vec<u32>`'s memory.
//!
//! The picker's searcher keeps every word dictionary's term and posting
//! offsets for as long as it lives: 12 million terms at 100,000 sessions,
//! 92 MB as `Vec<u32>`s, the largest part of its heap after the rows.
//! Neighbouring offsets differ by a term's length or a short posting list,
//! so each block of them is kept as its first value and, for the rest, the
//! difference from it in as few whole bytes as the block's range needs,
//! or, when every step from one value to the next fits a byte (a block of
//! 64 terms of 30 bytes spans two bytes of range), as those steps: a term
//! offset then takes one byte, not two, and is read by summing at most 15
//! of them from the nearest of three sums the block keeps.

/// Values per block.
const BLOCK: usize = 64;

#[derive(Debug, Clone, Copy)]
struct Block {
    /// The block's first value; the others are kept as their difference from it.
    base: u32,
    /// Where the block's differences start in `bytes`.
    at: u32,
    /// Bytes per difference: 0 (all equal), 1, 2 or 4; or [`STEPS`].
    width: u8,
    /// With [`STEPS`], the sums of the block's first [`MARK`], 2 × [`MARK`]
    /// and 3 × [`MARK`] steps.
    marks: [u16; 3],
}

/// A block kept as its steps, a byte each (the first value has none).
const STEPS: u8 = 3;

/// A value in a block of steps is read by summing fewer than this many.
const MARK: usize = BLOCK / 4;

#[derive(Debug, Default)]
pub struct Ascending {
    len: usize,
    blocks: Vec<Block>,
    bytes: Vec<u8>,
}

impl Ascending {
    /// The values, or `None` when one is below the value before it, or
    /// below the one before plus 1 when `strict` (`len`: about how many,
    /// for the blocks' room).
    pub fn from_values(
        values: impl Iterator<Item = u32>,
        len: usize,
        strict: bool,
    ) -> Option<Ascending> {
        let mut out = Ascending {
            len: 0,
            blocks: Vec::with_capacity(len / BLOCK + 1),
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
        let mut width: u8 = match top - base {
            0 => 0,
            1..=0xff => 1,
            0x100..=0xffff => 2,
            _ => 4,
        };
        let steps = values.windows(2).map(|w| w[1] - w[0]);
        if width >= 2 && steps.clone().all(|d| d <= 0xff) {
            width = STEPS;
        }
        let at = u32::try_from(self.bytes.len()).ok()?;
        let mut marks = [0u16; 3];
        if width == STEPS {
            // The steps' bytes, and the sums at each quarter of the block.
            self.bytes.extend(steps.map(|d| d as u8));
            let steps = &self.bytes[at as usize..];
            for (k, mark) in marks.iter_mut().enumerate() {
                let upto = steps.len().min((k + 1) * MARK);
                *mark = steps[..upto].iter().map(|&b| u16::from(b)).sum();
            }
        } else {
            for &v in values {
                let d = v - base;
                self.bytes
                    .extend_from_slice(&d.to_le_bytes()[..usize::from(width)]);
            }
        }
        self.blocks.push(Block {
            base,
            at,
            width,
            marks,
        });
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
        if b.width == STEPS {
            let (j, at) = (i % BLOCK, b.at as usize);
            let q = j / MARK;
            let (from, start) = match q {
                0 => (0, 0),
                _ => (q * MARK, u32::from(b.marks[q - 1])),
            };
            let sum: u32 = self.bytes[at + from..at + j]
                .iter()
                .map(|&s| u32::from(s))
                .sum();
            return Some(b.base + start + sum);
        }
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

    /// Value `i` and the one after it (`None` past the end), read together:
    /// in a block of steps the second is one step more.
    #[inline]
    pub fn pair(&self, i: usize) -> Option<(u32, Option<u32>)> {
        let v = self.get(i)?;
        let next = i + 1;
        if next < self.len && next % BLOCK != 0 {
            let b = self.blocks[i / BLOCK];
            if b.width == STEPS {
                let step = self.bytes[b.at as usize + next % BLOCK - 1];
                return Some((v, Some(v + u32::from(step))));
            }
        }
        Some((v, self.get(next)))
    }

    /// The first index in `lo..hi` whose value fails `pred` (`hi` when all
    /// pass), for a `pred` that holds up to some value and fails after:
    /// what `slice::partition_point` gives on `values[lo..hi]`, plus `lo`.
    ///
    /// The blocks are searched by their first values (read at once),
    /// galloping from `lo`'s so that a nearby answer costs a step or two,
    /// then the one block left is read in order (a block of steps is
    /// summed as it goes rather than from its start at every probe).
    pub fn partition_point_in(&self, lo: usize, hi: usize, pred: impl Fn(u32) -> bool) -> usize {
        let hi = hi.min(self.len);
        if lo >= hi {
            return lo;
        }
        let (first, last) = (lo / BLOCK, (hi - 1) / BLOCK);
        // The first block after `lo`'s whose first value fails.
        let (mut l, mut h, mut step) = (first + 1, first + 1, 1);
        while h <= last && pred(self.blocks[h].base) {
            l = h + 1;
            h += step;
            step *= 2;
        }
        let mut h = h.min(last + 1);
        while l < h {
            let m = l + (h - l) / 2;
            if pred(self.blocks[m].base) {
                l = m + 1;
            } else {
                h = m;
            }
        }
        // Every value before block `l - 1`'s first passes; none from block
        // `l` on does (or there is none).
        let start = lo.max((l - 1) * BLOCK);
        let end = hi.min(l * BLOCK);
        let b = self.blocks[l - 1];
        let mut v = self.at(start);
        for i in start..end {
            if i > start {
                v = if b.width == STEPS {
                    v + u32::from(self.bytes[b.at as usize + i % BLOCK - 1])
                } else {
                    self.at(i)
                };
            }
            if !pred(v) {
                return i;
            }
        }
        end
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

    fn asc(values: &[u32], strict: bool) -> Option<Ascending> {
        Ascending::from_values(values.iter().copied(), values.len(), strict)
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
        let a = asc(&values, false).unwrap();
        assert_eq!(a.len(), values.len());
        for (i, &v) in values.iter().enumerate() {
            assert_eq!(a.get(i), Some(v), "value {i}");
        }
        assert_eq!(a.get(values.len()), None);
        assert_eq!(a.last(), Some(u32::MAX));
        // Far less than four bytes a value for the small steps.
        let small: Vec<u32> = (0..10_000u32).map(|i| i * 25).collect();
        let s = asc(&small, true).unwrap();
        assert!(s.heap_bytes() < small.len() * 5 / 2, "{}", s.heap_bytes());
    }

    /// Blocks whose range needs two bytes but whose steps fit one (a
    /// dictionary's term offsets) are kept as steps, about a byte a value,
    /// and read back exactly on both sides of each quarter's sum, with
    /// steps of 0 and 255 and a block that mixes them with a big one.
    #[test]
    fn steps_that_fit_a_byte_take_one() {
        let mut values = Vec::new();
        let mut v = 1_000u32;
        for i in 0..20_000u32 {
            // Term lengths: 1..=255, some repeated offsets (0), some 255.
            let step = match i % 97 {
                0 => 0,
                1 => 255,
                k => (k * 37 + i) % 256,
            };
            v += step;
            values.push(v);
        }
        // A block with one step too big for a byte: kept by differences.
        let big = values.len();
        for _ in 0..BLOCK {
            v += 300;
            values.push(v);
        }
        let a = asc(&values, false).unwrap();
        for (i, &want) in values.iter().enumerate() {
            assert_eq!(a.get(i), Some(want), "value {i}");
        }
        assert!(a.blocks.iter().filter(|b| b.width == STEPS).count() >= 20_000 / BLOCK);
        assert_ne!(a.blocks[big / BLOCK].width, STEPS);
        assert!(a.heap_bytes() < values.len() * 5 / 4, "{}", a.heap_bytes());
        for i in 0..values.len() {
            assert_eq!(
                a.pair(i),
                Some((values[i], values.get(i + 1).copied())),
                "pair {i}"
            );
        }
        assert_eq!(a.pair(values.len()), None);
        for pos in [0, 1_000u32, 1_001, 5_000, 1_000_000, 2_600_000, v - 1, v] {
            for lo in [0, 1, 63, 64, 65, 5_000, 19_999, values.len() - 1] {
                for hi in [lo, lo + 1, lo + 64, lo + 1_000, values.len()] {
                    let hi = hi.min(values.len());
                    assert_eq!(
                        a.partition_point_in(lo, hi, |x| x <= pos),
                        lo + values[lo..hi].partition_point(|&x| x <= pos),
                        "{pos} in {lo}..{hi}"
                    );
                }
            }
        }
    }

    #[test]
    fn a_value_out_of_order_is_refused() {
        assert!(asc(&[1, 2, 2, 3], false).is_some());
        assert!(asc(&[1, 2, 2, 3], true).is_none());
        assert!(asc(&[1, 5, 4], false).is_none());
        let empty = asc(&[], true).unwrap();
        assert!(empty.is_empty());
        assert_eq!(empty.last(), None);
    }

    #[test]
    fn partition_point_in_agrees_with_the_slice() {
        let values: Vec<u32> = (0..1_000u32).map(|i| i * i / 7).collect();
        let a = asc(&values, false).unwrap();
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
