//! The replay buffer: a fixed-capacity ring of transitions from which the
//! learner draws uniform minibatches.
//!
//! Sampling is without replacement inside one minibatch (a batch never holds
//! the same transition twice) and draws only from the generator it is given,
//! so a seeded learner replays exactly. Once full, each push overwrites the
//! oldest transition: off-policy learning wants recent experience most, and a
//! bounded buffer bounds the trainer's memory.

use rand::Rng;

/// A fixed-capacity FIFO of transitions with seeded uniform sampling.
#[derive(Debug, Clone)]
pub struct ReplayBuffer<T> {
    items: Vec<T>,
    capacity: usize,
    /// where the next push goes once the buffer is full (the oldest item)
    next: usize,
    pushed: u64,
}

impl<T> ReplayBuffer<T> {
    /// An empty buffer holding at most `capacity` items (at least one).
    pub fn new(capacity: usize) -> ReplayBuffer<T> {
        let capacity = capacity.max(1);
        ReplayBuffer {
            items: Vec::with_capacity(capacity.min(1 << 16)),
            capacity,
            next: 0,
            pushed: 0,
        }
    }

    pub fn capacity(&self) -> usize {
        self.capacity
    }

    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// How many items were ever pushed (including those overwritten since).
    pub fn pushed(&self) -> u64 {
        self.pushed
    }

    /// Adds `item`, overwriting the oldest one when the buffer is full.
    pub fn push(&mut self, item: T) {
        self.pushed += 1;
        if self.items.len() < self.capacity {
            self.items.push(item);
            return;
        }
        self.items[self.next] = item;
        self.next = (self.next + 1) % self.capacity;
    }

    /// `batch` distinct items drawn uniformly (fewer if the buffer holds
    /// fewer), in draw order. The draw depends only on `rng`'s state and the
    /// buffer's length, never on the items.
    pub fn sample<R: Rng + ?Sized>(&self, batch: usize, rng: &mut R) -> Vec<&T> {
        let amount = batch.min(self.items.len());
        rand::seq::index::sample(rng, self.items.len(), amount)
            .into_iter()
            .filter_map(|i| self.items.get(i))
            .collect()
    }

    /// Every item, oldest first.
    pub fn iter(&self) -> impl Iterator<Item = &T> {
        let (newer, older) = self.items.split_at(self.next.min(self.items.len()));
        older.iter().chain(newer.iter())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedlab_core::rng::{purpose, stream};

    fn filled(capacity: usize, count: u32) -> ReplayBuffer<u32> {
        let mut buf = ReplayBuffer::new(capacity);
        for i in 0..count {
            buf.push(i);
        }
        buf
    }

    #[test]
    fn sampling_is_reproducible_for_a_seed_and_differs_across_seeds() {
        let buf = filled(1000, 1000);
        let draw = |seed: u64| -> Vec<u32> {
            let mut rng = stream(seed, &[purpose::TRAINING, 1]);
            buf.sample(32, &mut rng).into_iter().copied().collect()
        };
        assert_eq!(draw(7), draw(7));
        assert_ne!(draw(7), draw(8));
        // successive draws from one stream differ too
        let mut rng = stream(7, &[purpose::TRAINING, 1]);
        let a: Vec<u32> = buf.sample(32, &mut rng).into_iter().copied().collect();
        let b: Vec<u32> = buf.sample(32, &mut rng).into_iter().copied().collect();
        assert_ne!(a, b);
    }

    #[test]
    fn a_batch_holds_distinct_items_and_never_more_than_stored() {
        let buf = filled(100, 10);
        let mut rng = stream(1, &[purpose::TRAINING]);
        let mut got: Vec<u32> = buf.sample(64, &mut rng).into_iter().copied().collect();
        assert_eq!(got.len(), 10);
        got.sort_unstable();
        assert_eq!(got, (0..10).collect::<Vec<_>>());
        let empty: ReplayBuffer<u32> = ReplayBuffer::new(4);
        assert!(empty.sample(3, &mut rng).is_empty());
    }

    #[test]
    fn a_full_buffer_overwrites_the_oldest_items() {
        let buf = filled(4, 10);
        assert_eq!(buf.len(), 4);
        assert_eq!(buf.pushed(), 10);
        assert_eq!(buf.iter().copied().collect::<Vec<_>>(), vec![6, 7, 8, 9]);
        let mut rng = stream(3, &[purpose::TRAINING]);
        for _ in 0..20 {
            assert!(buf.sample(2, &mut rng).iter().all(|&&x| x >= 6));
        }
    }

    #[test]
    fn sampling_covers_the_whole_buffer_roughly_uniformly() {
        let buf = filled(10, 10);
        let mut rng = stream(11, &[purpose::TRAINING]);
        let mut counts = [0u32; 10];
        for _ in 0..2000 {
            for &&x in &buf.sample(3, &mut rng) {
                counts[x as usize] += 1;
            }
        }
        // 6000 draws over 10 items: 600 each in expectation
        assert!(counts.iter().all(|&c| (500..700).contains(&c)), "{counts:?}");
    }
}
