//! Cpu burnt for real: one busy thread per whole core, and one that is busy
//! for the fraction of each period that the rest of a core asks for. The
//! period matches the CFS default (100 ms), so a cpu limit throttles the
//! burners just as it would throttle a real workload.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The duty-cycle period.
pub const PERIOD: Duration = Duration::from_millis(100);

/// The busy fraction of each burner thread for `cpu_milli` millicores: ones
/// for the whole cores, then the remainder.
pub fn duties(cpu_milli: u64) -> Vec<f64> {
    let whole = cpu_milli / 1000;
    let rest = cpu_milli % 1000;
    let mut out = vec![1.0; usize::try_from(whole).unwrap_or(0)];
    if rest > 0 {
        out.push(rest as f64 / 1000.0);
    }
    out
}

/// Running burner threads; they stop when this is stopped or dropped.
#[derive(Debug)]
pub struct Burner {
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<()>>,
}

impl Burner {
    /// Starts burning `cpu_milli` millicores.
    pub fn start(cpu_milli: u64) -> std::io::Result<Burner> {
        let stop = Arc::new(AtomicBool::new(false));
        let mut burner = Burner {
            stop: stop.clone(),
            threads: Vec::new(),
        };
        for (i, duty) in duties(cpu_milli).into_iter().enumerate() {
            let stop = stop.clone();
            let thread = std::thread::Builder::new()
                .name(format!("burn-{i}"))
                .spawn(move || burn(duty, &stop))?;
            burner.threads.push(thread);
        }
        Ok(burner)
    }

    pub fn threads(&self) -> usize {
        self.threads.len()
    }

    /// Stops every thread and waits for it.
    pub fn stop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

impl Drop for Burner {
    fn drop(&mut self) {
        self.stop();
    }
}

fn burn(duty: f64, stop: &AtomicBool) {
    let busy = PERIOD.mul_f64(duty.clamp(0.0, 1.0));
    let mut x = 0u64;
    while !stop.load(Ordering::Relaxed) {
        let period_start = Instant::now();
        while period_start.elapsed() < busy {
            for _ in 0..1000 {
                x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407));
            }
        }
        let idle = PERIOD.saturating_sub(period_start.elapsed());
        if !idle.is_zero() {
            std::thread::sleep(idle);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duties_split_whole_cores_and_the_rest() {
        assert!(duties(0).is_empty());
        assert_eq!(duties(250), vec![0.25]);
        assert_eq!(duties(1000), vec![1.0]);
        assert_eq!(duties(2600), vec![1.0, 1.0, 0.6]);
    }

    #[test]
    fn starts_one_thread_per_duty_and_stops_them() {
        let mut b = Burner::start(1500).unwrap();
        assert_eq!(b.threads(), 2);
        let t = Instant::now();
        b.stop();
        assert_eq!(b.threads(), 0);
        // a burner notices the stop within a period
        assert!(t.elapsed() < PERIOD * 3, "{:?}", t.elapsed());
        assert_eq!(Burner::start(0).unwrap().threads(), 0);
    }
}
