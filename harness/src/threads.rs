//! Work spread over threads, one each, joined in order.

use crate::exit::InputError;
use anyhow::{Result, bail};

/// The most runs (threads) or cells (processes) one invocation plays at once.
pub const MAX_JOBS: usize = 256;

/// `--jobs` checked: 1..=[`MAX_JOBS`] of `what` (e.g. "runs play", "cells run") at once, `each` saying what one is;
/// default the machine's cores.
pub fn jobs(given: Option<usize>, what: &str, each: &str) -> Result<usize> {
    match given {
        Some(0) => bail!(InputError("--jobs 0: give at least 1".into())),
        Some(n) if n > MAX_JOBS => bail!(InputError(format!(
            "--jobs {n}: at most {MAX_JOBS} {what} at once (each is {each}); give 1..={MAX_JOBS}"
        ))),
        Some(n) => Ok(n),
        None => Ok(std::thread::available_parallelism().map_or(1, |n| n.get().min(MAX_JOBS))),
    }
}

/// Runs `work` on every item in a scoped thread of its own and returns the
/// results in the items' order; a thread that panics gives an error saying
/// "`what` thread panicked".
pub fn one_thread_each<I, T, F>(items: Vec<I>, what: &str, work: F) -> Vec<Result<T>>
where
    I: Send,
    T: Send,
    F: Fn(I) -> Result<T> + Sync,
{
    std::thread::scope(|scope| {
        let work = &work;
        let handles: Vec<_> = items.into_iter().map(|item| scope.spawn(move || work(item))).collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(anyhow::anyhow!("{what} thread panicked")))
            })
            .collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_come_in_order_and_a_panic_is_an_error() {
        let out = one_thread_each(vec![3u64, 1, 2], "a test", |x| {
            if x == 1 {
                panic!("one");
            }
            Ok(x * 10)
        });
        assert_eq!(out[0].as_ref().unwrap(), &30);
        assert_eq!(out[1].as_ref().unwrap_err().to_string(), "a test thread panicked");
        assert_eq!(out[2].as_ref().unwrap(), &20);
    }
}
