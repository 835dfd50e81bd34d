//! The pod slots of one template: when each was created and when (if ever) it
//! was deleted for good, so that later phases choose among the pods that exist.

use schedlab_core::Time;

#[derive(Debug, Clone, Copy)]
struct Life {
    created: Time,
    deleted: Option<Time>,
}

#[derive(Debug, Default)]
pub(crate) struct Slots {
    /// indexed by ordinal
    lives: Vec<Life>,
}

impl Slots {
    /// A new slot created at `at`; returns its ordinal.
    pub(crate) fn create(&mut self, at: Time) -> u32 {
        self.lives.push(Life {
            created: at,
            deleted: None,
        });
        (self.lives.len() - 1) as u32
    }

    /// How many slots were created.
    pub(crate) fn len(&self) -> u32 {
        self.lives.len() as u32
    }

    /// Marks a slot deleted for good from `at` on.
    pub(crate) fn delete(&mut self, ordinal: u32, at: Time) {
        if let Some(l) = self.lives.get_mut(ordinal as usize) {
            l.deleted = Some(at);
        }
    }

    /// Ordinals of the slots that exist at `at`, in order.
    pub(crate) fn alive_at(&self, at: Time) -> Vec<u32> {
        self.lives
            .iter()
            .enumerate()
            .filter(|(_, l)| l.created <= at && l.deleted.is_none_or(|d| d > at))
            .map(|(i, _)| i as u32)
            .collect()
    }

    /// A sweep over increasing times that keeps the alive set up to date in
    /// O(changes), for churn phases with many rounds.
    pub(crate) fn sweep(&self) -> Sweep {
        let mut events: Vec<(Time, bool, u32)> = Vec::with_capacity(self.lives.len() * 2);
        for (i, l) in self.lives.iter().enumerate() {
            events.push((l.created, true, i as u32));
            if let Some(d) = l.deleted {
                events.push((d, false, i as u32));
            }
        }
        // at equal times a slot is added before it is removed, so a slot
        // created and deleted at the same instant is not alive then
        events.sort_by_key(|&(t, add, i)| (t, !add, i));
        Sweep {
            events,
            next: 0,
            alive: Vec::new(),
            position: vec![usize::MAX; self.lives.len()],
        }
    }
}

#[derive(Debug)]
pub(crate) struct Sweep {
    events: Vec<(Time, bool, u32)>,
    next: usize,
    alive: Vec<u32>,
    position: Vec<usize>,
}

impl Sweep {
    /// The slots alive at `at` (not in ordinal order); `at` must not decrease.
    pub(crate) fn advance(&mut self, at: Time) -> &[u32] {
        while let Some(&(t, add, ordinal)) = self.events.get(self.next) {
            if t > at {
                break;
            }
            self.next += 1;
            let o = ordinal as usize;
            if add {
                self.position[o] = self.alive.len();
                self.alive.push(ordinal);
            } else if let Some(&pos) = self.position.get(o)
                && pos != usize::MAX
            {
                self.alive.swap_remove(pos);
                if let Some(&moved) = self.alive.get(pos) {
                    self.position[moved as usize] = pos;
                }
                self.position[o] = usize::MAX;
            }
        }
        &self.alive
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alive_follows_creation_and_deletion() {
        let mut s = Slots::default();
        let a = s.create(Time(0));
        let b = s.create(Time(10));
        let c = s.create(Time(20));
        s.delete(b, Time(15));
        assert_eq!(s.alive_at(Time(5)), vec![a]);
        assert_eq!(s.alive_at(Time(10)), vec![a, b]);
        assert_eq!(s.alive_at(Time(15)), vec![a]);
        assert_eq!(s.alive_at(Time(25)), vec![a, c]);
    }

    #[test]
    fn sweep_agrees_with_alive_at() {
        let mut s = Slots::default();
        for i in 0..50u64 {
            s.create(Time(i * 7 % 100));
        }
        for o in (0..50).step_by(3) {
            s.delete(o, Time(100 + o as u64));
        }
        let mut sweep = s.sweep();
        for t in (0..250).step_by(5) {
            let mut got = sweep.advance(Time(t)).to_vec();
            got.sort_unstable();
            assert_eq!(got, s.alive_at(Time(t)), "at {t}");
        }
    }
}
