//! Memory held for real: allocated in chunks and every page written, so it
//! counts in the container's resident set and its memory cgroup (a page that
//! is only allocated is not backed until it is touched).

/// Bytes per allocation: growth is seen by the kernel in steps this small.
pub const CHUNK: usize = 1 << 20;
/// Touching one byte in every this many backs every page (4 KiB pages or larger).
const PAGE: usize = 4096;

/// Memory the program holds.
#[derive(Debug, Default)]
pub struct Ballast {
    chunks: Vec<Box<[u8]>>,
    held: u64,
}

impl Ballast {
    pub fn new() -> Ballast {
        Ballast::default()
    }

    /// Bytes held and touched.
    pub fn held(&self) -> u64 {
        self.held
    }

    /// Grows to at least `bytes` (rounded up to a page), chunk by chunk;
    /// `between` runs after each chunk and stops the growth by returning false.
    /// Returns whether the target was reached.
    pub fn grow_to(&mut self, bytes: u64, mut between: impl FnMut(u64) -> bool) -> bool {
        while self.held < bytes {
            let want = usize::try_from(bytes - self.held).unwrap_or(usize::MAX);
            let size = want.min(CHUNK).next_multiple_of(PAGE);
            let mut chunk = vec![0u8; size].into_boxed_slice();
            touch(&mut chunk);
            self.held += size as u64;
            self.chunks.push(chunk);
            if !between(self.held) {
                return self.held >= bytes;
            }
        }
        true
    }

    /// Gives everything back.
    pub fn release(&mut self) {
        self.chunks.clear();
        self.held = 0;
    }
}

/// Writes every page: a zeroed allocation is usually mapped lazily, and only
/// written pages are resident.
fn touch(chunk: &mut [u8]) {
    for i in (0..chunk.len()).step_by(PAGE) {
        chunk[i] = 1;
    }
    std::hint::black_box(&*chunk);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grows_in_page_rounded_chunks_and_stops_when_asked() {
        let mut b = Ballast::new();
        assert!(b.grow_to(0, |_| true));
        assert_eq!(b.held(), 0);
        assert!(b.grow_to(3 * CHUNK as u64 + 10, |_| true));
        assert_eq!(b.held(), 3 * CHUNK as u64 + PAGE as u64);
        assert!(b.chunks.iter().all(|c| c.iter().step_by(PAGE).all(|&x| x == 1)));
        // growing to less holds what is held
        assert!(b.grow_to(CHUNK as u64, |_| true));
        assert_eq!(b.held(), 3 * CHUNK as u64 + PAGE as u64);
        let mut calls = 0;
        assert!(!b.grow_to(10 * CHUNK as u64, |_| {
            calls += 1;
            calls < 2
        }));
        assert_eq!(calls, 2);
        assert_eq!(b.held(), 5 * CHUNK as u64 + PAGE as u64);
        b.release();
        assert_eq!(b.held(), 0);
    }
}
