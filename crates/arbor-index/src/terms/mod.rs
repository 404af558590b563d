//! The word index: which sessions contain which whitespace-separated tokens.
//!
//! Session text is normalized (lowercased, whitespace runs collapsed to one
//! space) and split on spaces. A *segment* holds a sorted term dictionary and,
//! per term, the ids of the files whose text contains it. Segments are
//! immutable; new text makes a new segment, and small segments are merged.
//!
//! The dictionary is one byte string `\n term \n term \n … \n`, so substring
//! questions about terms are answered with one `memmem` scan each:
//! "contains w" finds `w`, "ends with w" finds `w\n`, "starts with w" finds
//! `\nw`, "is w" finds `\nw\n`. Since a token never contains a space, a word
//! is a substring of a text exactly when it is a substring of one of its terms.

mod builder;
mod encoding;
mod merge;
mod pairs;
mod segment;
mod termset;
#[cfg(test)]
mod tokens;

pub use builder::{Encoded, SegmentBuilder};
pub use encoding::decode_postings;
#[cfg(test)]
pub(crate) use encoding::pack_starts;
#[cfg(test)]
pub use merge::merge;
pub use merge::{merge_to_files, Merged};
pub use pairs::{
    pair_key, pair_left, pair_right, pair_side_word, pair_sides, PairSet, Sides, EMPTY_SIDE,
};
pub use segment::{Match, Segment, TermBytes};
pub use termset::TermSet;
#[cfg(test)]
pub use tokens::distinct_pair_ranges;
#[cfg(test)]
pub use tokens::distinct_tokens;

#[cfg(test)]
mod tests {
    //! The word index as a whole: building, encoding, finding and merging.

    use super::builder::{same_long_term, term_key};
    use super::encoding::{
        bitmap_bytes, pack_starts, varint, varint_list_len, MemoryWriter, BITMAP_MARK,
    };
    use super::pairs::{radix_sort, PAIR_LOG_CAP};
    use super::segment::SCAN_WINDOW;
    use super::*;

    /// A dictionary whose recorded term count disagrees with its offsets
    /// (a corrupt index) is refused, whatever the count, never sliced.
    #[test]
    fn offsets_that_do_not_fit_their_count_are_refused() {
        let terms = b"\nab\ncd\n".to_vec();
        let starts = |n: u32, words: &[u32]| {
            let mut b = n.to_le_bytes().to_vec();
            b.extend(words.iter().flat_map(|w| w.to_le_bytes()));
            pack_starts(&b)
        };
        let good = starts(2, &[1, 4, 0, 2, 3]);
        assert_eq!(good, [2, 0, 0, 0, 1, 3, 0, 2, 1]);
        let s = Segment::dictionary_only(terms.clone(), &good).unwrap();
        assert_eq!((s.term(1), s.postings_range(1)), (&b"cd"[..], (2, 3)));
        for n in [0, 1, 3, 1 << 29, (1 << 30) + 1, u32::MAX] {
            let mut b = good.clone();
            b[..4].copy_from_slice(&n.to_le_bytes());
            assert!(Segment::dictionary_only(terms.clone(), &b).is_none(), "{n}");
        }
        // Out of bounds, a repeated term start, or a step past `u32::MAX`.
        assert!(Segment::dictionary_only(terms.clone(), &starts(2, &[1, 9, 0, 2, 3])).is_none());
        assert!(Segment::dictionary_only(terms.clone(), &starts(2, &[1, 1, 0, 2, 3])).is_none());
        assert!(Segment::dictionary_only(terms.clone(), &starts(2, &[0, 4, 0, 2, 3])).is_none());
        let mut over = good[..5].to_vec();
        over.extend_from_slice(&[0xff, 0xff, 0xff, 0xff, 0x0f, 0, 2, 1]);
        assert!(Segment::dictionary_only(terms.clone(), &over).is_none());
        // Cut short (mid-varint or a value short), or with bytes after.
        assert!(Segment::dictionary_only(terms.clone(), &[&good[..], &[0x80]].concat()).is_none());
        assert!(Segment::dictionary_only(terms.clone(), &[&good[..8], &[0x81]].concat()).is_none());
        assert!(Segment::dictionary_only(terms.clone(), &good[..8]).is_none());
        assert!(Segment::dictionary_only(terms, &[&good[..], &[0]].concat()).is_none());
    }

    fn seg(docs: &[(u32, &str)]) -> Segment {
        let mut b = SegmentBuilder::default();
        for (id, text) in docs {
            b.add(*id, distinct_tokens(text));
        }
        let e = b.take();
        Segment::from_blobs(e.terms, &e.starts, e.postings).unwrap()
    }

    fn ids(s: &Segment, needle: &str, how: Match) -> Vec<u32> {
        let mut out = Vec::new();
        s.find(needle.as_bytes(), how, &mut |t| {
            s.postings(t, &mut |id| out.push(id))
        });
        out.sort_unstable();
        out.dedup();
        out
    }

    #[test]
    fn lookups() {
        let s = seg(&[
            (1, "the quick brown fox"),
            (2, "quickly foxes"),
            (300, "fox brown"),
        ]);
        assert_eq!(ids(&s, "fox", Match::Contains), [1, 2, 300]);
        assert_eq!(ids(&s, "fox", Match::Exact), [1, 300]);
        assert_eq!(ids(&s, "ick", Match::Contains), [1, 2]);
        assert_eq!(ids(&s, "ck", Match::EndsWith), [1]);
        assert_eq!(ids(&s, "quick", Match::StartsWith), [1, 2]);
        assert_eq!(ids(&s, "own", Match::EndsWith), [1, 300]);
        assert_eq!(ids(&s, "zebra", Match::Contains), Vec::<u32>::new());
        assert_eq!(ids(&s, "x f", Match::Contains), Vec::<u32>::new());
    }

    #[test]
    fn distinct_tokens_are_exact() {
        let text = "a b a  bb abcdefgh abcdefgh abcdefghi abcdefghj abcdefghi x\u{0} x é é";
        let got: Vec<&[u8]> = distinct_tokens(text);
        let mut want: Vec<&[u8]> = Vec::new();
        for t in text.as_bytes().split(|&b| b == b' ') {
            if !t.is_empty() && !want.contains(&t) {
                want.push(t);
            }
        }
        assert_eq!(got, want);
        // Many distinct tokens (the table grows).
        let many: String = (0..5000).map(|i| format!("t{} ", i % 3000)).collect();
        assert_eq!(distinct_tokens(&many).len(), 3000);
    }

    #[test]
    fn pair_sides_are_cut_at_digits_slashes_and_characters() {
        assert_eq!(pair_left(b"src/ui/render.rs:42:"), b":");
        assert_eq!(pair_right(b"src/ui/render.rs:42:"), b"src");
        assert_eq!(pair_left(b"render"), b"render");
        assert_eq!(pair_right(b"42abc"), b"");
        // At most 16 bytes, never inside a character.
        let e = "é".repeat(20) + "a";
        assert_eq!(pair_left(e.as_bytes()), ("é".repeat(7) + "a").as_bytes());
        assert_eq!(pair_right(e.as_bytes()), "é".repeat(8).as_bytes());
        assert!(pair_side_word(b"render") && !pair_side_word(b"rs:42"));
        assert!(!pair_side_word(b"a/b") && !pair_side_word(b"averyveryverylongword"));
    }

    /// The pairs of `text` as strings.
    fn pairs_of<'t>(text: &'t str, bounds: &[u32]) -> Vec<&'t str> {
        distinct_pair_ranges(text, bounds)
            .into_iter()
            .map(|(s, n)| &text[s as usize..(s + n) as usize])
            .collect()
    }

    #[test]
    fn pairs_are_adjacent_tokens_within_a_piece() {
        let text = "fn main fn main() x y fn";
        let got: Vec<&str> = pairs_of(text, &[]);
        assert_eq!(
            got,
            ["fn main", "main fn", "fn main()", "main() x", "x y", "y fn"]
        );
        // Pieces `ab cd` and `ef gh` joined by a space: no `cd ef`.
        let joined = "ab cd ef gh";
        let got: Vec<&str> = pairs_of(joined, &[6]);
        assert_eq!(got, ["ab cd", "ef gh"]);
        // A piece of one token between two others, and an empty piece.
        let j = "a b c";
        let got: Vec<&str> = pairs_of(j, &[2, 4, 4]);
        assert!(got.is_empty(), "{got:?}");
        assert!(distinct_pair_ranges("", &[]).is_empty());
        assert!(distinct_pair_ranges("one", &[]).is_empty());
        // A pair keeps the first term's end and the second's start without
        // a digit or a `/`, at most 16 bytes each; where one is empty, a
        // half pair (`line `, ` of` around `42`).
        let t = "see line 42 of src/main.rs:7: now averyveryverylongword x é";
        let got: Vec<&str> = pairs_of(t, &[]);
        assert_eq!(
            got,
            [
                "see line",
                "line ",
                " of",
                "of src",
                ": now",
                "now averyveryverylon",
                "veryverylongword x",
                "x é"
            ]
        );
    }

    #[test]
    fn short_keys_are_the_padded_bytes() {
        for t in [
            "", "a", "ab", "abc", "abcd", "abcde", "abcdef", "abcdefg", "abcdefgh",
        ] {
            let mut w = [0u8; 8];
            w[..t.len()].copy_from_slice(t.as_bytes());
            assert_eq!(term_key(t.as_bytes()), u64::from_le_bytes(w), "{t}");
        }
    }

    #[test]
    fn postings_come_out_sorted_and_once() {
        // Files read again keep older ids (added after newer ones), and a
        // file may be added twice in one batch.
        let mut b = SegmentBuilder::default();
        b.add(7, distinct_tokens("alpha beta"));
        b.add(3, distinct_tokens("beta gamma"));
        b.add(9, distinct_tokens("alpha"));
        b.add(3, distinct_tokens("alpha beta"));
        b.add(4, distinct_tokens(""));
        let e = b.take();
        let s = Segment::from_blobs(e.terms, &e.starts, e.postings).unwrap();
        assert_eq!(ids(&s, "alpha", Match::Exact), [3, 7, 9]);
        assert_eq!(ids(&s, "beta", Match::Exact), [3, 7]);
        assert_eq!(ids(&s, "gamma", Match::Exact), [3]);
        let mut raw = Vec::new();
        s.find(b"alpha", Match::Exact, &mut |t| {
            s.postings(t, &mut |id| raw.push(id))
        });
        assert_eq!(raw, [3, 7, 9], "stored sorted, without repeats");
        assert_eq!(e.docs, 5);
    }

    /// One posting list written by a [`Writer`] (its bytes).
    fn encoded_list(ids: &[u32]) -> Vec<u8> {
        let mut w = MemoryWriter::default();
        w.push(b"t", ids);
        w.finish(ids.len()).postings
    }

    fn decoded(b: &[u8]) -> Vec<u32> {
        let mut got = Vec::new();
        decode_postings(b, &mut |id| got.push(id));
        got
    }

    #[test]
    fn a_common_words_list_is_a_bitmap_and_a_rare_ones_gaps() {
        let dense: Vec<u32> = (1000..3000).filter(|i| i % 3 != 0).collect();
        let b = encoded_list(&dense);
        assert!(b.starts_with(&BITMAP_MARK), "{:?}", &b[..4]);
        assert_eq!(b.len(), 2 + 2 + 2000 / 8);
        assert_eq!(decoded(&b), dense);
        let sparse = [5, 900, 70_000, 4_000_000_000];
        let b = encoded_list(&sparse);
        assert!(!b.starts_with(&BITMAP_MARK));
        assert_eq!(b.len(), varint_list_len(&sparse));
        assert_eq!(decoded(&b), sparse);
        // The largest ids, and id 0 first, as bits.
        for ids in [
            (u32::MAX - 100..=u32::MAX).collect::<Vec<_>>(),
            (0..64).collect(),
        ] {
            let b = encoded_list(&ids);
            assert!(b.starts_with(&BITMAP_MARK));
            assert_eq!(decoded(&b), ids);
        }
    }

    proptest::proptest! {
        /// A merge of any segments (their ids interleaved, repeated, or
        /// apart; a term in any number of them) holds each term once, with
        /// the sorted union of its live ids, and no term left without one.
        #[test]
        fn a_merge_unions_any_segments(
            segs in proptest::collection::vec(
                proptest::collection::vec(
                    (0u32..64, proptest::collection::vec(0usize..6, 0..4)),
                    0..10,
                ),
                1..40,
            ),
            dead in 0u32..8,
        ) {
            let vocab = ["a", "b", "ab", "ba", "c", "zz"];
            let live = |id: u32| id % 7 != dead;
            let mut want: std::collections::BTreeMap<&str, std::collections::BTreeSet<u32>> =
                Default::default();
            let built: Vec<Segment> = segs
                .iter()
                .map(|docs| {
                    // A segment's documents by id, in order.
                    let mut by_id: std::collections::BTreeMap<u32, Vec<&str>> = Default::default();
                    for (id, words) in docs {
                        for &w in words {
                            by_id.entry(*id).or_default().push(vocab[w]);
                            if live(*id) {
                                want.entry(vocab[w]).or_default().insert(*id);
                            }
                        }
                    }
                    let texts: Vec<(u32, String)> =
                        by_id.into_iter().map(|(id, w)| (id, w.join(" "))).collect();
                    let pairs: Vec<(u32, &str)> =
                        texts.iter().map(|(i, t)| (*i, t.as_str())).collect();
                    seg(&pairs)
                })
                .collect();
            let e = merge(&built, &live);
            let m = Segment::from_blobs(e.terms, &e.starts, e.postings).unwrap();
            proptest::prop_assert_eq!(m.len(), want.len());
            for (term, ids) in &want {
                let mut got = Vec::new();
                m.find(term.as_bytes(), Match::Exact, &mut |t| {
                    m.postings(t, &mut |id| got.push(id))
                });
                proptest::prop_assert_eq!(&got, &ids.iter().copied().collect::<Vec<_>>(), "{}", term);
            }
        }

        /// Any sorted list comes back as it was, in the smaller of the two
        /// forms.
        #[test]
        fn posting_lists_round_trip_in_their_smaller_form(
            ids in proptest::collection::btree_set(0u32..5000, 1..400),
            base in proptest::prop_oneof![proptest::strategy::Just(0u32), 0u32..u32::MAX - 5000],
        ) {
            let ids: Vec<u32> = ids.into_iter().map(|i| i + base).collect();
            let b = encoded_list(&ids);
            proptest::prop_assert_eq!(decoded(&b), ids.clone());
            let gaps = varint_list_len(&ids);
            let mut buf = [0u8; 5];
            let bits = 2 + varint(ids[0], &mut buf).len() + bitmap_bytes(ids[0], ids[ids.len() - 1]);
            proptest::prop_assert_eq!(b.len(), gaps.min(bits));
        }

        /// Damaged bytes (a bitmap's or gaps') decode to something without
        /// a panic.
        #[test]
        fn any_bytes_decode_without_a_panic(
            b in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..64),
            marked in proptest::prelude::any::<bool>(),
        ) {
            let b = if marked { [&BITMAP_MARK[..], &b].concat() } else { b };
            let _ = decoded(&b);
        }
    }

    /// Pairs given by side numbers encode the same segment as the same
    /// pairs given by their bytes: through table growth, with half pairs
    /// (an empty side), and with the numbering shared by several files.
    #[test]
    fn pairs_by_key_encode_as_their_bytes() {
        let mut sides = TermSet::default();
        let words: Vec<String> = (0..3000).map(|i| format!("w{}", i * 7919 % 5003)).collect();
        let n: Vec<u32> = words
            .iter()
            .map(|w| sides.index_of(w.as_bytes()).unwrap())
            .collect();
        let side = |k: u32| match k {
            EMPTY_SIDE => &[][..],
            k => sides.term(k),
        };
        let (mut by_key, mut by_bytes) = (SegmentBuilder::default(), SegmentBuilder::default());
        for file in 0..5u32 {
            let mut keys: Vec<u64> = (0..2000usize)
                .map(|i| {
                    let j = (i * 31 + file as usize * 17) % n.len();
                    match i % 50 {
                        0 => pair_key(n[j], EMPTY_SIDE),
                        1 => pair_key(EMPTY_SIDE, n[j]),
                        _ => pair_key(n[j], n[(j + 1 + file as usize) % n.len()]),
                    }
                })
                .collect();
            keys.sort_unstable();
            keys.dedup();
            by_key.add_pairs(file * 3, &keys, side);
            let bytes: Vec<Vec<u8>> = keys
                .iter()
                .map(|&k| {
                    let (l, r) = pair_sides(k);
                    [side(l), b" ", side(r)].concat()
                })
                .collect();
            by_bytes.add(file * 3, bytes.iter().map(Vec::as_slice));
        }
        let (a, b) = (by_key.take(), by_bytes.take());
        assert!(a.terms.len() > 10_000, "the table grew");
        assert_eq!(a.terms, b.terms);
        assert_eq!(a.starts, b.starts);
        assert_eq!(a.postings, b.postings);
        assert_eq!(a.docs, b.docs);
    }

    /// Long terms (keyed by a hash) are the same only byte for byte: a
    /// byte changed anywhere, at every length around the two loads' width.
    #[test]
    fn long_terms_are_equal_only_byte_for_byte() {
        for n in 8..=40usize {
            let a: Vec<u8> = (0..n).map(|i| b'a' + (i % 26) as u8).collect();
            assert!(same_long_term(&a, &a.clone()), "{n}");
            for i in 0..n {
                let mut b = a.clone();
                b[i] ^= 0x20;
                assert!(!same_long_term(&a, &b), "{n} {i}");
            }
            assert!(!same_long_term(&a, &a[..n - 1]), "{n}");
        }
    }

    /// A builder taken (encoded) is sized for as much again and then
    /// encodes what it is given next exactly as a new builder does.
    #[test]
    fn a_builder_taken_encodes_the_next_segment_as_a_new_one() {
        let docs = |round: u32| -> Vec<(u32, String)> {
            (0..300u32)
                .map(|i| {
                    let text: String = (0..40u32)
                        .map(|j| {
                            format!(
                                "w{}x{} averyveryverylongterm{} ",
                                (i * 7 + j) % 97,
                                round,
                                j % 13
                            )
                        })
                        .collect();
                    (i + round * 1000, text)
                })
                .collect()
        };
        let mut reused = SegmentBuilder::default();
        for round in 0..3 {
            let mut fresh = SegmentBuilder::default();
            for (id, text) in docs(round) {
                reused.add(id, distinct_tokens(&text));
                fresh.add(id, distinct_tokens(&text));
            }
            let (a, b) = (reused.take(), fresh.take());
            assert_eq!(a.terms, b.terms, "round {round}");
            assert_eq!(a.starts, b.starts, "round {round}");
            assert_eq!(a.postings, b.postings, "round {round}");
            assert_eq!(a.docs, b.docs, "round {round}");
            assert!(reused.is_empty());
        }
    }

    #[test]
    fn term_sets_keep_each_term_once() {
        let text = "a b a  bb abcdefgh abcdefgh abcdefghi abcdefghj abcdefghi x\u{0} x é é";
        let mut set = TermSet::default();
        for t in text.as_bytes().split(|&b| b == b' ') {
            set.insert(t);
        }
        let (arena, ranges) = set.into_parts();
        let got: Vec<&[u8]> = ranges
            .iter()
            .map(|&(s, n)| &arena[s as usize..(s + n) as usize])
            .collect();
        assert_eq!(got, distinct_tokens(text));
        let mut many = TermSet::default();
        for i in 0..5000 {
            many.insert(format!("term{}", i % 3000).as_bytes());
        }
        assert_eq!(many.len(), 3000);
    }

    #[test]
    fn pairs_by_number_are_the_distinct_adjacent_pairs() {
        // Long words (hashed) and short ones (their own key), repeats, and
        // enough of them to grow both tables several times.
        let mut text = String::new();
        for i in 0..4000u32 {
            let w = match i % 7 {
                0 => format!("averyveryverylongword{}", i % 61),
                1 => "fn".to_string(),
                2 => ["averyveryverylongwordwithoutdigits", "src/main"][(i % 2) as usize].into(),
                3 => ["w", "x", "y", "z"][(i % 4) as usize].into(),
                _ => format!("w{}", (i * 31) % 113),
            };
            text.push_str(&w);
            text.push(' ');
        }
        let text = text.trim_end();
        let (mut words, mut pairs) = (TermSet::default(), PairSet::default());
        let mut prev = None;
        for t in text.split(' ') {
            let n = words.index_of(t.as_bytes()).unwrap();
            assert_eq!(words.term(n), t.as_bytes());
            if let Some(p) = prev {
                pairs.insert(p, n);
            }
            prev = Some(n);
        }
        // Cut to their sides, each distinct one once (as the index does).
        let mut got: Vec<String> = Vec::new();
        for (a, b) in pairs.pairs() {
            let (a, b) = (pair_left(words.term(a)), pair_right(words.term(b)));
            let p = format!(
                "{} {}",
                String::from_utf8_lossy(a),
                String::from_utf8_lossy(b)
            );
            if (!a.is_empty() || !b.is_empty()) && !got.contains(&p) {
                got.push(p);
            }
        }
        let mut want = pairs_of(text, &[]);
        got.sort();
        want.sort();
        assert_eq!(got, want);
        assert_eq!(words.len(), distinct_tokens(text).len());
    }

    #[test]
    fn a_pair_set_holds_each_pair_once_across_compactions_and_reuse() {
        // More inserts than the first cap, drawn so that some repeat at
        // once, some much later (a compaction between), with empty sides'
        // large numbers among them.
        let mut set = PairSet::default();
        for round in 0..2u64 {
            let mut want = std::collections::BTreeSet::new();
            let mut x = 0x2545_f491_4f6c_dd1d_u64 ^ round;
            for i in 0..(PAIR_LOG_CAP as u64 * 3) {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let first = match x % 5 {
                    0 => u32::MAX - 1,
                    _ => (x >> 8) as u32 % (1 << (10 + i % 8)),
                };
                let second = (x >> 40) as u32 % 3000;
                for _ in 0..=(x >> 60) % 3 {
                    set.insert(first, second);
                }
                want.insert((first, second));
            }
            assert_eq!(set.len(), want.len());
            let got: std::collections::BTreeSet<(u32, u32)> = set.pairs().collect();
            assert_eq!(got, want, "round {round}");
            set.clear();
            assert!(set.is_empty());
        }
    }

    /// The radix sort sorts as a comparison sort does: keys of a few
    /// bytes, of all eight, with bytes every key shares, short and long.
    #[test]
    fn the_radix_sort_sorts() {
        let mut x = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let shapes: [fn(u64) -> u64; 4] = [
            |r| r,
            |r| r & 0x0000_0fff_0000_ffff,
            |r| 0x0100_0000_0000_0000 | (r & 0xff_00ff),
            |r| r % 3,
        ];
        let mut spare = Vec::new();
        for shape in shapes {
            for n in [0, 1, 63, 64, 65, 1000, 70_000] {
                let mut v: Vec<u64> = (0..n).map(|_| shape(next())).collect();
                let mut want = v.clone();
                want.sort_unstable();
                radix_sort(&mut v, &mut spare);
                assert_eq!(v, want, "{n}");
            }
        }
    }

    /// A dictionary scanned in windows (many of them here: the window is
    /// 4 KiB in tests), read or mapped from a file, finds exactly the terms
    /// that match one by one, matches across windows' edges included.
    #[test]
    fn a_scan_in_windows_finds_what_each_term_matches() {
        let text: String = (0..4000u32)
            .map(|i| format!("t{}{} ", "ab".repeat((i % 13) as usize), i * 7919 % 100_003))
            .collect();
        let mut b = SegmentBuilder::default();
        b.add(1, distinct_tokens(&text));
        let e = b.take();
        assert!(e.terms.len() > 8 * SCAN_WINDOW);
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("terms");
        std::fs::write(&file, &e.terms).unwrap();
        let mut segments = vec![Segment::dictionary_only(e.terms.clone(), &e.starts).unwrap()];
        #[cfg(target_os = "linux")]
        {
            let f = std::fs::File::open(&file).unwrap();
            let m = crate::mapguard::GuardedMap::new(f, e.terms.len() as u64).unwrap();
            let mapped = TermBytes::Mapped(std::sync::Arc::new(m));
            segments.push(Segment::dictionary_in(mapped, &e.starts).unwrap());
        }
        let all: Vec<Vec<u8>> = (0..segments[0].len())
            .map(|t| segments[0].term(t).to_vec())
            .collect();
        for needle in [
            "ab", "9", "b1", "t", "bab", "abab4", "t12", "00", "zz", "3 ",
        ] {
            for how in [
                Match::Contains,
                Match::StartsWith,
                Match::EndsWith,
                Match::Exact,
            ] {
                let want: Vec<usize> = (0..all.len())
                    .filter(|&t| how.term(&all[t], needle.as_bytes()))
                    .collect();
                for s in &segments {
                    let mut got = Vec::new();
                    s.find(needle.as_bytes(), how, &mut |t| got.push(t));
                    assert_eq!(got, want, "{needle:?} {how:?}");
                    // Stopping early stops at the first ones.
                    let mut first = Vec::new();
                    s.find_while(needle.as_bytes(), how, &mut |t| {
                        first.push(t);
                        first.len() < 3
                    });
                    assert_eq!(first, want[..want.len().min(3)], "{needle:?} {how:?}");
                    // Ranges scanned on their own find as much together.
                    let n = s.len();
                    for cuts in [vec![n / 2], vec![1, n / 3, n - 1], vec![0, n]] {
                        let mut bounds = vec![0];
                        bounds.extend(cuts);
                        bounds.push(n);
                        let mut got = Vec::new();
                        for r in bounds.windows(2) {
                            s.find_in(needle.as_bytes(), how, r[0]..r[1], &mut |t| {
                                assert!(r[0] <= t && t < r[1], "{t} outside {r:?}");
                                got.push(t);
                                true
                            });
                        }
                        assert_eq!(got, want, "{needle:?} {how:?} cut at {bounds:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn a_term_is_found_from_any_earlier_term() {
        let text: Vec<String> = (0..300)
            .map(|i| format!("w{i}{}", "x".repeat(i % 7)))
            .collect();
        let docs: Vec<(u32, &str)> = text
            .iter()
            .enumerate()
            .map(|(i, t)| (i as u32, t.as_str()))
            .collect();
        let s = seg(&docs);
        assert_eq!(s.len(), 300);
        for pos in 0..s.terms.bytes().len() {
            let want = s
                .term_starts
                .partition_point_in(0, s.len(), |st| (st as usize) <= pos)
                .checked_sub(1);
            let upto = want.unwrap_or(0);
            for from in [0, upto / 2, upto, upto + 1, s.len() + 3] {
                assert_eq!(s.term_at_from(pos, from), want, "pos {pos} from {from}");
            }
        }
    }

    #[test]
    fn merging_unions_and_drops_dead_ids() {
        let a = seg(&[(1, "alpha beta"), (2, "beta")]);
        let b = seg(&[(1, "gamma"), (3, "beta alpha")]);
        let e = merge(&[a, b], &|id| id != 2);
        let m = Segment::from_blobs(e.terms, &e.starts, e.postings).unwrap();
        assert_eq!(ids(&m, "beta", Match::Exact), [1, 3]);
        assert_eq!(ids(&m, "alpha", Match::Exact), [1, 3]);
        assert_eq!(ids(&m, "gamma", Match::Exact), [1]);
        assert_eq!(m.len(), 3);
        // The live ids written, each once: a lookup that has seen that
        // many has seen them all.
        assert_eq!(e.docs, 2);
    }

    /// A merge written to files as it goes makes the bytes a merge in memory
    /// makes, and sums the dictionary as `db::text_sum` does.
    #[test]
    fn a_merge_to_files_writes_what_one_in_memory_makes() {
        let words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta"];
        let segs = || {
            (0..4u32)
                .map(|k| {
                    let docs: Vec<(u32, String)> = (0..50u32)
                        .map(|i| {
                            let id = i * 4 + k;
                            let text: Vec<&str> = words
                                .iter()
                                .enumerate()
                                .filter(|(w, _)| (id as usize * 7 + w * 3) % 5 < 2)
                                .map(|(_, t)| *t)
                                .collect();
                            (id, format!("{} x{id}", text.join(" ")))
                        })
                        .collect();
                    let pairs: Vec<(u32, &str)> =
                        docs.iter().map(|(i, t)| (*i, t.as_str())).collect();
                    seg(&pairs)
                })
                .collect::<Vec<_>>()
        };
        let live = |id: u32| id % 9 != 0;
        let want = merge(&segs(), &live);
        let inputs = segs();
        let mut readers: Vec<&[u8]> = inputs.iter().map(|s| s.postings.as_slice()).collect();
        let mut readers: Vec<&mut dyn std::io::Read> = readers
            .iter_mut()
            .map(|r| r as &mut dyn std::io::Read)
            .collect();
        let mut terms = tempfile::tempfile().unwrap();
        let scratch = [tempfile::tempfile().unwrap(), tempfile::tempfile().unwrap()];
        let dictionary = terms.try_clone().unwrap();
        let mut got = merge_to_files(&inputs, &mut readers, &live, dictionary, scratch).unwrap();
        let mut written = Vec::new();
        std::io::Seek::rewind(&mut terms).unwrap();
        std::io::Read::read_to_end(&mut terms, &mut written).unwrap();
        assert_eq!(written, want.terms);
        assert_eq!(got.terms_len, want.terms.len());
        assert_eq!(got.terms_sum, crate::db::text_sum(&written));
        let mut postings = Vec::new();
        std::io::Read::read_to_end(&mut got.postings, &mut postings).unwrap();
        assert_eq!(got.postings_len, postings.len());
        assert_eq!(
            (got.starts, postings, got.docs),
            (want.starts, want.postings, want.docs)
        );
        assert!(want.docs > 150 && want.docs < 200, "{}", want.docs);
    }
}
