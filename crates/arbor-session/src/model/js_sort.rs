//! JavaScript's `Array.prototype.sort` as V8 runs it, for the sibling
//! lists Atomic sorts by time (`new Date(a) - new Date(b)`). An entry whose
//! time does not parse makes that difference NaN, which the sort takes as
//! "equal": not an order, so where such an entry ends up depends on the
//! sort's own steps, and arbor follows them to draw the tree as Atomic
//! does. A list shorter than 64 (every sibling list in practice) is one
//! leading run extended by binary insertion, as V8's TimSort sorts it;
//! a longer one is sorted stably with the entries without a time last
//! (equal to V8's whenever every time parses).

use std::cmp::Ordering;

/// The length from which V8's TimSort merges runs instead of inserting.
const MIN_MERGE: usize = 64;

/// Sorts `list` by `time`, oldest first, as Atomic's tree does.
pub fn sort_by_time(list: &mut [u32], time: &dyn Fn(u32) -> Option<i64>) {
    if list.len() < 2 {
        return;
    }
    if list.len() >= MIN_MERGE {
        list.sort_by_key(|&c| time(c).unwrap_or(i64::MAX));
        return;
    }
    let cmp = |a: u32, b: u32| match (time(a), time(b)) {
        (Some(x), Some(y)) => x.cmp(&y),
        _ => Ordering::Equal,
    };
    let run = leading_run(list, &cmp);
    insert_rest(list, run, &cmp);
}

/// The run at the start of `list` (a strictly descending one reversed in
/// place), and its length.
fn leading_run(list: &mut [u32], cmp: &dyn Fn(u32, u32) -> Ordering) -> usize {
    let descending = cmp(list[1], list[0]) == Ordering::Less;
    let mut len = 2;
    while len < list.len() {
        let order = cmp(list[len], list[len - 1]);
        let ends = if descending {
            order != Ordering::Less
        } else {
            order == Ordering::Less
        };
        if ends {
            break;
        }
        len += 1;
    }
    if descending {
        list[..len].reverse();
    }
    len
}

/// Inserts each element after the first `sorted` where a binary search
/// puts it (after its equals).
fn insert_rest(list: &mut [u32], sorted: usize, cmp: &dyn Fn(u32, u32) -> Ordering) {
    for start in sorted..list.len() {
        let pivot = list[start];
        let (mut left, mut right) = (0, start);
        while left < right {
            let mid = left + (right - left) / 2;
            if cmp(pivot, list[mid]) == Ordering::Less {
                right = mid;
            } else {
                left = mid + 1;
            }
        }
        list.copy_within(left..start, left + 1);
        list[left] = pivot;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Sorts positions 0.. of `times` (`None`: a time that does not parse).
    fn sorted(times: &[Option<i64>]) -> Vec<u32> {
        let mut list: Vec<u32> = (0..times.len() as u32).collect();
        sort_by_time(&mut list, &|i| times[i as usize]);
        list
    }

    #[test]
    fn times_that_parse_sort_stably() {
        assert_eq!(sorted(&[Some(3), Some(1), Some(2), Some(1)]), [1, 3, 2, 0]);
        let long: Vec<Option<i64>> = (0..100).map(|i| Some(i64::from(i % 7))).collect();
        let got = sorted(&long);
        assert!(got.windows(2).all(|w| {
            let (a, b) = (long[w[0] as usize], long[w[1] as usize]);
            a < b || (a == b && w[0] < w[1])
        }));
    }

    /// Each expected order is what Node 20 gives for the same times with
    /// `(a, b) => new Date(a.t) - new Date(b.t)` ("bad" for `None`).
    #[test]
    fn a_time_that_does_not_parse_lands_where_javascripts_sort_puts_it() {
        assert_eq!(sorted(&[Some(3), None, Some(1)]), [0, 1, 2]);
        assert_eq!(sorted(&[Some(3), Some(2), None, Some(1)]), [3, 1, 0, 2]);
        assert_eq!(sorted(&[None, Some(5), Some(1), Some(3)]), [0, 2, 3, 1]);
        assert_eq!(
            sorted(&[Some(2), Some(1), Some(0), None, Some(1)]),
            [2, 1, 4, 0, 3]
        );
    }
}
