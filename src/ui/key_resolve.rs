//! A table's defaults with the user's bindings applied: as Atomic's, the
//! keys a file gives an id replace that id's default keys (all of them),
//! where the id's first default key was listed; and a key that would do
//! two things on one screen does one, the clash said.

use super::keybindings::UserKeys;
use super::keymap::{Binding, Chord, Entry, Named, Row};

/// Two keys of one table that are the same key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Clash {
    pub key: Chord,
    /// The id that keeps the key, and the one that loses it.
    pub kept: Option<&'static str>,
    pub lost: Option<&'static str>,
}

/// A table in force, and the clashes resolving it found.
pub struct Resolved<A> {
    pub rows: Vec<Row<A>>,
    pub clashes: Vec<Clash>,
}

/// `defaults` with `user`'s bindings applied. A key the user gave wins
/// over a default one of another action; of two the user gave, the first
/// in the table wins (Atomic tries a screen's keys in order too).
pub fn resolve<A: Copy + PartialEq + Named>(
    defaults: &'static [Binding<A>],
    user: &UserKeys,
) -> Resolved<A> {
    let mut placed: Vec<&str> = Vec::new();
    let mut rows: Vec<Row<A>> = defaults
        .iter()
        .map(|b| {
            let mut keys = Vec::new();
            for (c, a) in b.keys {
                let id = c.id.or_else(|| a.id());
                match id.and_then(|id| user.bound.get(id).map(|ks| (id, ks))) {
                    Some((id, given)) => {
                        if !placed.contains(&id) {
                            placed.push(id);
                            keys.extend(given.iter().map(|k| Entry {
                                chord: Chord {
                                    id: Some(id),
                                    quiet: false,
                                    ..*k
                                },
                                action: *a,
                                id: Some(id),
                                user: true,
                            }));
                        }
                    }
                    None => keys.push(Entry {
                        chord: *c,
                        action: *a,
                        id,
                        user: false,
                    }),
                }
            }
            Row {
                keys,
                when: b.when,
                help: b.help,
            }
        })
        .collect();
    let clashes = drop_clashes(&mut rows);
    Resolved { rows, clashes }
}

/// Removes the losing key of each clash (so that dispatch, the help and
/// the hints agree on what the key does) and says which they were.
fn drop_clashes<A: Copy + PartialEq>(rows: &mut [Row<A>]) -> Vec<Clash> {
    let all: Vec<(usize, usize, Entry<A>)> = rows
        .iter()
        .enumerate()
        .flat_map(|(r, row)| row.keys.iter().enumerate().map(move |(k, e)| (r, k, *e)))
        .collect();
    let mut lost: Vec<(usize, usize)> = Vec::new();
    let mut clashes = Vec::new();
    for (i, (r1, k1, a)) in all.iter().enumerate() {
        if lost.contains(&(*r1, *k1)) {
            continue;
        }
        for (r2, k2, b) in &all[i + 1..] {
            if lost.contains(&(*r2, *k2)) || a.action == b.action || !a.chord.same_key(&b.chord) {
                continue;
            }
            // The user's key wins over a default; else the first listed.
            let (keep, lose, at) = if b.user && !a.user {
                (b, a, (*r1, *k1))
            } else {
                (a, b, (*r2, *k2))
            };
            lost.push(at);
            clashes.push(Clash {
                key: lose.chord,
                kept: keep.id,
                lost: lose.id,
            });
            if at == (*r1, *k1) {
                break;
            }
        }
    }
    for (r, row) in rows.iter_mut().enumerate() {
        let mut k = 0;
        row.keys.retain(|_| {
            let keep = !lost.contains(&(r, k));
            k += 1;
            keep
        });
    }
    clashes
}
