//! Double clicks: terminals report each press of a button, never a
//! double click, so the input thread pairs them (two left presses on the
//! same cell in quick succession) before the screens see them.

use std::time::{Duration, Instant};

use crossterm::event::{MouseButton, MouseEvent, MouseEventKind};

/// The longest pause between the two presses of a double click (the
/// common desktop default).
pub const DOUBLE_CLICK: Duration = Duration::from_millis(500);

/// The last left press, to pair the next with.
#[derive(Debug, Default)]
pub struct ClickPairs {
    last: Option<(u16, u16, Instant)>,
}

impl ClickPairs {
    /// Whether `m`, at `now`, is the second press of a double click. A
    /// third press starts a new pair.
    pub fn is_double(&mut self, m: &MouseEvent, now: Instant) -> bool {
        if m.kind != MouseEventKind::Down(MouseButton::Left) {
            if !matches!(
                m.kind,
                MouseEventKind::Up(_) | MouseEventKind::Drag(_) | MouseEventKind::Moved
            ) {
                self.last = None;
            }
            return false;
        }
        let double = self.last.is_some_and(|(col, row, at)| {
            col == m.column && row == m.row && now.saturating_duration_since(at) <= DOUBLE_CLICK
        });
        self.last = if double {
            None
        } else {
            Some((m.column, m.row, now))
        };
        double
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crossterm::event::KeyModifiers;

    fn ev(kind: MouseEventKind, column: u16, row: u16) -> MouseEvent {
        MouseEvent {
            kind,
            column,
            row,
            modifiers: KeyModifiers::NONE,
        }
    }

    #[test]
    fn two_quick_presses_on_one_cell_are_a_double_click() {
        let down = |c, r| ev(MouseEventKind::Down(MouseButton::Left), c, r);
        let t0 = Instant::now();
        let ms = |n| t0 + Duration::from_millis(n);
        let mut p = ClickPairs::default();
        assert!(!p.is_double(&down(3, 4), ms(0)));
        assert!(!p.is_double(&ev(MouseEventKind::Up(MouseButton::Left), 3, 4), ms(50)));
        assert!(p.is_double(&down(3, 4), ms(100)));
        // A third press starts afresh.
        assert!(!p.is_double(&down(3, 4), ms(200)));
        // Too slow, or elsewhere: not a double click.
        assert!(!p.is_double(&down(3, 4), ms(900)));
        assert!(!p.is_double(&down(3, 5), ms(950)));
        // The wheel between two presses breaks the pair.
        assert!(!p.is_double(&ev(MouseEventKind::ScrollDown, 3, 5), ms(960)));
        assert!(!p.is_double(&down(3, 5), ms(970)));
    }
}
